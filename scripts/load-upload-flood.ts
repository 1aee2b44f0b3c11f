/**
 * The upload phases of `npm run load:connections` (issue 33, item 1), against the same server as
 * the others (open-file limit LOAD_NOFILE, 1,024), loopback only:
 * - unterminated bodies: LOAD_UNTERMINATED (1,100) multipart bodies of a 2 KB file part without a
 *   closing boundary, each sent whole with its exact Content-Length, 50 at a time from 127.0.0.2, to
 *   /files/ and three operation routes in turn (each used to hold an open file and a work folder
 *   until a restart), then a real job;
 * - stalled uploads: LOAD_STALLED (600) uploads from 40 addresses that send the first kilobyte of
 *   their file part and then nothing, on connections held open (a socket and an open file each
 *   would be more than the 1,024 descriptors; fewer connections than the server's cap, so that
 *   others still connect), while LOAD_STALL_JOBS (4) jobs on a URL (a local file server) are sent,
 *   then a real job once the uploads are answered (MEDIAFLOW_BODY_IDLE_TIMEOUT, 10 s by default).
 * Each reports the answers by status, the upload folders left, the real job's status, and the
 * problems found (none expected).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { startFileServer } from '../test/helpers/file-server.js';
import { fixture, fixtures } from '../test/helpers/fixtures.js';
import { stalledUpload, unterminatedUploads, type Answered } from '../test/helpers/flood.js';
import type { ServeProcess } from '../test/helpers/serve-process.js';

const unterminatedCount = Number(process.env.LOAD_UNTERMINATED ?? 1100);
const stalledCount = Number(process.env.LOAD_STALLED ?? 600);
const stallJobs = Number(process.env.LOAD_STALL_JOBS ?? 4);

const CLIP = 'clip-2s-640x360-25fps.mp4';
const ROUTES = ['/files/', '/convert-video/', '/merge-audio-video/', '/extract-audio/'];

/** Runs `run` as a phase of load-connections.ts: measured, with the server's health probed throughout. */
export type Phase<R> = (serve: ServeProcess, name: string, run: () => Promise<Record<string, unknown>>) => Promise<R>;

/** Whether no phase found a problem (the phases of other kinds have none to report). */
export const noProblems = (reports: object[]): boolean =>
  reports.every((report) => !('problems' in report) || (report.problems as string[]).length === 0);

/** Answers counted by status (`none`: the connection closed or the wait ended without one). */
function byStatus(answers: Answered[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) {
    const key = String(answer.status ?? 'none');
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** A convert-video job on the clip, uploaded or at `url`: its status (0 when the connection failed). */
async function realJob(serve: ServeProcess, url?: string): Promise<number> {
  const form = new FormData();
  if (url) form.append('video_url', url);
  else form.append('video_url', new Blob([await readFile(await fixture(CLIP))], { type: 'video/mp4' }), 'clip.mp4');
  form.append('format', 'webm');
  return fetch(`${serve.base}/convert-video/`, {
    method: 'POST',
    body: form,
    signal: AbortSignal.timeout(60_000),
  }).then(
    async (res) => {
      await res.arrayBuffer();
      return res.status;
    },
    () => 0,
  );
}

/** The upload phases, each run through `phase`. */
export async function uploadFloodPhases<R>(serve: ServeProcess, dataDir: string, phase: Phase<R>): Promise<R[]> {
  await fixtures(CLIP);
  const port = Number(new URL(serve.base).port);
  const uploadFolders = async () =>
    (await readdir(path.join(dataDir, 'work')).catch(() => [] as string[])).filter((name) => name.startsWith('upload-'))
      .length;
  const reports: R[] = [];

  reports.push(
    await phase(serve, 'unterminated multipart bodies', async () => {
      const started = Date.now();
      const answers = await unterminatedUploads(port, { count: unterminatedCount, paths: ROUTES });
      const seconds = Number(((Date.now() - started) / 1000).toFixed(1));
      const left = await uploadFolders();
      const job = await realJob(serve);
      const statuses = byStatus(answers);
      const problems = [
        ...(statuses['400'] === unterminatedCount ? [] : [`answers ${JSON.stringify(statuses)}, not all 400`]),
        ...(left === 0 ? [] : [`${left} upload folders left`]),
        ...(job === 200 ? [] : [`the real job after them answered ${job}`]),
      ];
      return {
        requests: unterminatedCount,
        seconds,
        answers: statuses,
        uploadFoldersLeft: left,
        realJob: job,
        problems,
      };
    }),
  );

  reports.push(
    await phase(serve, 'stalled uploads, 40 addresses', async () => {
      const started = Date.now();
      const uploads = await Promise.all(
        Array.from({ length: stalledCount }, (_, i) =>
          stalledUpload(port, ROUTES[i % ROUTES.length]!, {
            bytes: 1024,
            declared: 1_000_000,
            from: `127.0.0.${(i % 40) + 2}`,
          }),
        ),
      );
      const files = await startFileServer();
      const during = await Promise.all(
        Array.from({ length: stallJobs }, () => realJob(serve, files.url(`/f/${CLIP}`))),
      ).finally(() => files.close());
      const answers = await Promise.all(uploads.map((upload) => upload.answer));
      uploads.forEach((upload) => upload.close());
      const seconds = Number(((Date.now() - started) / 1000).toFixed(1));
      const answered = answers.flatMap((answer) => (answer.afterMs === undefined ? [] : [answer.afterMs]));
      const left = await uploadFolders();
      const job = await realJob(serve);
      const problems = [
        ...(left === 0 ? [] : [`${left} upload folders left`]),
        ...(during.every((status) => status === 200) ? [] : [`jobs during the stall answered ${during.join(', ')}`]),
        ...(job === 200 ? [] : [`the real job after them answered ${job}`]),
      ];
      return {
        uploads: stalledCount,
        answers: byStatus(answers),
        lastAnsweredAfterSeconds: Number((Math.max(0, ...answered) / 1000).toFixed(1)),
        jobsDuring: byStatus(during.map((status) => (status === 0 ? {} : { status }))),
        seconds,
        uploadFoldersLeft: left,
        realJob: job,
        problems,
      };
    }),
  );
  return reports;
}
