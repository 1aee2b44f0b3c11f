/**
 * What the voice tests measure of speech: where it is heard (ffmpeg's silencedetect), how loud it is, its
 * duration, and which of the engines' programs are still running.
 */
import assert from 'node:assert/strict';
import { readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import type { TimedSentence } from '../../src/engine/contract/speech.js';
import { getJob, submitJob, waitForJob } from './jobs.js';
import { durationOf, probe } from './media.js';
import type { TestServer } from './mediaflow.js';
import { eventually } from './serve-process.js';

/** A span of a file where sound is heard, in seconds. */
export interface Heard {
  start: number;
  end: number;
}

/**
 * The spans of `file` that are not silence to silencedetect (below `noise` dB for at least `minimum` seconds is
 * silence), and the file's duration; `filter` (filters before it) takes out what is not listened for (a tone).
 */
export async function heardSpans(
  file: string,
  noise = -45,
  minimum = 0.25,
  filter?: string,
): Promise<{ spans: Heard[]; duration: number }> {
  const duration = durationOf(await probe(file));
  const detect = `silencedetect=noise=${noise}dB:d=${minimum}`;
  const { stderr } = await execa('ffmpeg', [
    ...['-hide_banner', '-nostats', '-loglevel', 'info', '-i', file],
    ...['-af', filter ? `${filter},${detect}` : detect, '-f', 'null', '-'],
  ]);
  const spans: Heard[] = [];
  let start = 0;
  for (const line of stderr.split('\n')) {
    const silenceStart = /silence_start: (-?[\d.]+)/.exec(line);
    const silenceEnd = /silence_end: ([\d.]+)/.exec(line);
    if (silenceStart) {
      const end = Math.max(0, Number(silenceStart[1]));
      if (end > start) spans.push({ start, end });
      start = Infinity;
    }
    if (silenceEnd) start = Number(silenceEnd[1]);
  }
  if (start < duration) spans.push({ start, end: duration });
  return { spans, duration };
}

/**
 * Each sentence's cue against where the speech is heard: the sentences are separated by pauses (at least `pause`
 * seconds long), so silencedetect finds one span of sound per sentence. Each starts within 0.15 s of its span's
 * onset, and none ends after the audio.
 */
export async function assertCuesOnSpeech(file: string, sentences: TimedSentence[], pause = 0.25): Promise<void> {
  const { spans, duration } = await heardSpans(file, -45, pause);
  assert.equal(spans.length, sentences.length, `one span of sound per sentence: ${JSON.stringify(spans)}`);
  for (const [i, sentence] of sentences.entries()) {
    const onset = spans[i]!.start;
    assert.ok(Math.abs(sentence.start - onset) <= 0.15, `sentence ${i} starts at ${sentence.start}, heard at ${onset}`);
    assert.ok(sentence.end <= duration + 0.001, `sentence ${i} ends at ${sentence.end}, after the audio's ${duration}`);
    assert.ok(sentence.end >= spans[i]!.end - 0.15, `sentence ${i} ends at ${sentence.end}, heard to ${spans[i]!.end}`);
    assert.equal(sentence.words[0]!.start, sentence.start);
    assert.equal(sentence.words.at(-1)!.end, sentence.end);
    for (const [k, word] of sentence.words.entries()) {
      assert.ok(word.start <= word.end, JSON.stringify(word));
      if (k > 0) assert.equal(word.start, sentence.words[k - 1]!.end);
    }
  }
}

/** The loudest sample of a file's sound, in dBFS (volumedetect's max_volume). */
export async function peakDb(file: string): Promise<number> {
  const { stderr } = await execa('ffmpeg', [
    '-hide_banner',
    '-nostats',
    '-i',
    file,
    '-af',
    'volumedetect',
    '-f',
    'null',
    '-',
  ]);
  return Number(/max_volume: (-?[\d.]+|-inf) dB/.exec(stderr)?.[1] ?? -Infinity);
}

/**
 * Pids of running processes (not zombies) whose command line mentions `text`, or that run in a folder whose path does
 * (espeak-ng's command line names its files relative to the job's workspace), this test runner aside.
 */
export async function processesMentioning(text: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (/^\d+ \(.*\) Z/s.test(stat)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('vitest')) continue;
    const cwd = await readlink(`/proc/${entry}/cwd`).catch(() => '');
    if (cmdline.includes(text) || cwd.includes(text)) pids.push(Number(entry));
  }
  return pids;
}

/** A caption of an SRT or WebVTT document, its times in seconds. */
export interface Cue {
  start: number;
  end: number;
  text: string;
}

/** The cues of an SRT or WebVTT document. */
export function cuesOf(document: string): Cue[] {
  const seconds = (time: string) => {
    const [h, m, s] = time.replace(',', '.').split(':').map(Number);
    return h! * 3600 + m! * 60 + s!;
  };
  const cues: Cue[] = [];
  for (const block of document.replace(/\r/g, '').split(/\n\n+/)) {
    const lines = block.split('\n');
    const at = lines.findIndex((line) => line.includes(' --> '));
    if (at < 0) continue;
    const [start, end] = lines[at]!.split(' --> ') as [string, string];
    const text = lines
      .slice(at + 1)
      .filter((line) => line !== '')
      .join('\n');
    cues.push({ start: seconds(start.trim()), end: seconds(end.trim()), text });
  }
  return cues;
}

/**
 * Captions of speech whose sentences are separated by pauses, one cue a sentence, against where the speech is heard:
 * each cue starts within 0.15 s of its sentence's onset, ends no earlier than 0.15 s before its sound does, and none
 * ends after the audio.
 */
export async function assertCaptionsOnSpeech(file: string, cues: readonly Cue[], pause = 0.25): Promise<void> {
  const { spans, duration } = await heardSpans(file, -45, pause);
  assert.equal(spans.length, cues.length, `one span of sound per cue: ${JSON.stringify({ spans, cues })}`);
  for (const [i, cue] of cues.entries()) {
    assert.ok(
      Math.abs(cue.start - spans[i]!.start) <= 0.15,
      `cue ${i} starts at ${cue.start}, heard at ${spans[i]!.start}`,
    );
    assert.ok(cue.end >= spans[i]!.end - 0.15, `cue ${i} ends at ${cue.end}, heard to ${spans[i]!.end}`);
    assert.ok(cue.end <= duration + 0.001, `cue ${i} ends at ${cue.end}, after the audio's ${duration}`);
  }
}

/**
 * Submits a job that speaks (`fields` to `route`, asynchronously), cancels it while a program speaks in its
 * workspace (once `ready` says so, when given), and checks that the job ends cancelled with no program left, no
 * work file and nothing published.
 */
export async function assertCancelStopsSpeech(
  server: TestServer,
  route: string,
  fields: Record<string, string>,
  ready?: (id: string) => Promise<unknown>,
): Promise<void> {
  const published = await readdir(path.join(server.dataDir, 'uploads'));
  const id = await submitJob(server.base, route, fields, { prefer: 'respond-async' });
  assert.ok(
    await eventually(async () => (await processesMentioning(server.dataDir)).length > 0, 30_000, 20),
    'a voice speaks in the job workspace',
  );
  await ready?.(id);
  const res = await fetch(`${server.base}/jobs/${id}`, { method: 'DELETE' });
  assert.equal(res.status, 200);
  assert.equal((await waitForJob(server.base, id)).status, 'cancelled');
  assert.ok(
    await eventually(async () => (await processesMentioning(server.dataDir)).length === 0, 5000, 50),
    'no espeak-ng or ffmpeg is left',
  );
  assert.ok(await eventually(async () => (await server.workLeftovers()).length === 0, 5000, 50));
  assert.deepEqual(await readdir(path.join(server.dataDir, 'uploads')), published);
  assert.equal((await getJob(server.base, id)).result, null);
}
