import { createServer } from 'node:net';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';

const BIN = path.resolve(import.meta.dirname, '../../bin/mediaflow.js');

/** A free loopback port (asked of the OS, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * A launcher (see startServeProcess) that lowers the open-file limit, soft and hard, through
 * prlimit (same pid, no shell).
 */
export const withFileLimit = (nofile: number): string[] => ['prlimit', `--nofile=${nofile}:${nofile}`];

export interface ServeProcess {
  base: string;
  child: ResultPromise;
  /** stdout+stderr so far (JSON log lines). */
  output: () => string;
}

/**
 * Runs `mediaflow serve` as a real child process and waits until /health answers. `launcher` is a
 * command that ends by running node with its remaining arguments (`unshare -m sh on-tmpfs.sh ... --`).
 */
export async function startServeProcess(
  dataDir: string,
  env: Record<string, string> = {},
  launcher: string[] = [],
): Promise<ServeProcess> {
  const port = await freePort();
  const [command, ...prefix] = [...launcher, 'node'];
  const child = execa(command!, [...prefix, BIN, 'serve', '--port', String(port), '--data-dir', dataDir], {
    env: {
      MEDIAFLOW_ALLOW_PRIVATE_URLS: '1',
      MEDIAFLOW_LOG_LEVEL: 'info',
      MEDIAFLOW_MAX_EVENT_LOOP_DELAY: '0',
      ...env,
    },
    reject: false,
    all: true,
  });
  let output = '';
  child.all?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited early: ${output}`);
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`serve did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { base, child, output: () => output };
}

/** Runs `mediaflow worker` as a real child process and waits until it says it is ready (`launcher`: as serve's). */
export async function startWorkerProcess(
  dataDir: string,
  env: Record<string, string> = {},
  launcher: string[] = [],
): Promise<ServeProcess> {
  const [command, ...prefix] = [...launcher, 'node'];
  const child = execa(command!, [...prefix, BIN, 'worker', '--data-dir', dataDir], {
    // Info at least: its "worker ready" line says when it takes jobs.
    env: {
      MEDIAFLOW_ALLOW_PRIVATE_URLS: '1',
      ...env,
      MEDIAFLOW_LOG_LEVEL: env.MEDIAFLOW_LOG_LEVEL === 'debug' ? 'debug' : 'info',
    },
    reject: false,
    all: true,
  });
  let output = '';
  child.all?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const ready = await eventually(() => child.exitCode !== null || output.includes('"worker ready"'), 20_000, 50);
  if (!ready || child.exitCode !== null) {
    child.kill('SIGKILL');
    throw new Error(`worker did not start: ${output}`);
  }
  return { base: '', child, output: () => output };
}

/** Polls `check` until it returns true or `ms` pass; returns its last answer. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 10_000, every = 100): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, every));
  }
}

/**
 * Pids of ffmpeg processes whose parent is `parent` (Linux), from the child lists of its threads: a few small reads,
 * where scanning all of /proc takes long enough on a busy machine to miss a short run.
 */
export async function ffmpegChildren(parent: number): Promise<number[]> {
  const { readdir, readFile } = await import('node:fs/promises');
  const pids: number[] = [];
  for (const task of await readdir(`/proc/${parent}/task`).catch(() => [] as string[])) {
    const children = await readFile(`/proc/${parent}/task/${task}/children`, 'utf8').catch(() => '');
    for (const child of children.split(' ').filter(Boolean)) {
      const name = await readFile(`/proc/${child}/comm`, 'utf8').catch(() => '');
      if (name.trim() === 'ffmpeg') pids.push(Number(child));
    }
  }
  return pids;
}

/** Kills a process that may be gone already. */
export const killQuietly = (pid: number): void => {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
};
