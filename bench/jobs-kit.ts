/**
 * What the benchmarks that drive `mediaflow serve` over HTTP share: a folder served on 127.0.0.1, a form POST,
 * waiting for jobs through their event streams, and the machine's idle moments.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { TICKS } from './cpu.js';

/** Serves files of a folder on 127.0.0.1. */
export async function serveFolder(dir: string) {
  const server = http.createServer((req, res) => {
    const file = path.join(dir, path.basename(req.url ?? ''));
    stat(file).then(
      (info) => {
        res.writeHead(200, { 'content-length': info.size });
        createReadStream(file).pipe(res);
      },
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name: string) => `http://127.0.0.1:${port}/${name}`,
    close: () => new Promise((r) => server.close(r)),
  };
}

/** POSTs a form; throws with the error of an answer that is no success. */
export async function post(
  base: string,
  route: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const body = new FormData();
  for (const [key, value] of Object.entries(fields)) body.append(key, value);
  const res = await fetch(`${base}${route}`, { method: 'POST', body, headers });
  const json = (await res.json()) as Record<string, string>;
  if (res.status >= 300) throw new Error(`${route}: ${res.status} ${json.error}`);
  return json;
}

/**
 * Waits for every job to succeed through its event stream, which closes after the terminal state:
 * no polling, whose requests would take CPU from the workers and round the times up.
 */
export async function waitAll(base: string, ids: string[]): Promise<Record<string, string>[]> {
  return Promise.all(
    ids.map(async (id) => {
      const events = (await (await fetch(`${base}/jobs/${id}/events`)).text())
        .split('\n')
        .filter((line) => line.startsWith('data:'));
      const job = JSON.parse(events.at(-1)?.slice('data:'.length) ?? '{}') as {
        status?: string;
        error?: unknown;
        result: Record<string, string>;
      };
      if (job.status !== 'succeeded') throw new Error(`job ${id} ${job.status}: ${JSON.stringify(job.error)}`);
      return job.result;
    }),
  );
}

/** The machine's busy CPU time: user, nice, system, irq, softirq and steal of every core. */
export async function machineSeconds(): Promise<number> {
  const [, user, nice, system, , , irq, softirq, steal] = (await readFile('/proc/stat', 'utf8'))
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) / TICKS!;
}

/** Waits, at most 30 s, for a second in which the whole machine is busy less than `maxOtherCores`. */
export async function idleMachine(maxOtherCores: number): Promise<void> {
  if (!TICKS) return;
  for (let second = 0; second < 30; second++) {
    const before = await machineSeconds();
    await new Promise((r) => setTimeout(r, 1000));
    if ((await machineSeconds()) - before < maxOtherCores) return;
  }
}
