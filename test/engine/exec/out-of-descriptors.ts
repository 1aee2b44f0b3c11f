/**
 * Run by child-process.test.ts as `prlimit --nofile=N:N node --import tsx <this file>`: takes
 * every descriptor the process has left, then starts ffprobe and ffmpeg the ways the engine does
 * and prints, as one JSON line, how each ended. Out of descriptors, Node gives back a child
 * without pipes and emits EMFILE on it a tick later: unheard, that event ends this process.
 */
import { closeSync, openSync } from 'node:fs';
import os from 'node:os';
import { resolveBinaries } from '../../../src/engine/exec/binaries.js';
import { spawnChild } from '../../../src/engine/exec/child-process.js';
import { binaryVersion, runFfmpeg, runFfprobe } from '../../../src/engine/exec/ffmpeg.js';

const { ffmpeg, ffprobe } = resolveBinaries();
const cwd = os.tmpdir();
const signal = new AbortController().signal;

/** How a call ended: its value, or its error's code, status and message. */
const outcome = (work: Promise<unknown>) =>
  work.then(
    (value) => ({ value: typeof value === 'string' ? value.slice(0, 40) : 'ok' }),
    (error: { code?: string; status?: number; message?: string }) => ({
      code: error.code,
      status: error.status,
      message: error.message,
    }),
  );

const calls = () => ({
  ffprobe: outcome(runFfprobe(ffprobe, ['-version'], { cwd, timeoutMs: 10_000 })),
  ffmpeg: outcome(
    runFfmpeg(ffmpeg, ['-f', 'lavfi', '-i', 'nullsrc', '-frames:v', '1', '-f', 'null', '-'], {
      cwd,
      timeoutMs: 10_000,
    }),
  ),
  step: outcome(spawnChild(ffprobe, ['-version'], { cwd, signal })),
  version: outcome(binaryVersion(ffprobe)),
});
const settled = async (pending: ReturnType<typeof calls>) =>
  Object.fromEntries(await Promise.all(Object.entries(pending).map(async ([name, p]) => [name, await p])));

const held: number[] = [];
for (;;) {
  try {
    held.push(openSync('/dev/null', 'r'));
  } catch {
    break;
  }
}
const exhausted = await settled(calls());
// Any 'error' event left unheard would have been emitted by now.
await new Promise((resolve) => setTimeout(resolve, 200));
for (const fd of held) closeSync(fd);
const recovered = await settled(calls());
process.stdout.write(`${JSON.stringify({ held: held.length, exhausted, recovered })}\n`);
