import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { serveFile, startFileServer } from './helpers/file-server.js';
import { runCli } from './helpers/mediaflow.js';
import { startServeProcess } from './helpers/serve-process.js';
import { writeScriptedModel, whisperCases } from './helpers/whisper-model.js';

// What whisper.cpp hears in a recording without speech is its `[BLANK_AUDIO]` marker. It may not become a caption,
// and an empty caption file would read as a failure to write one: a recording with no other word is a 422 that says so.
describe('transcribe: a recording without speech', () => {
  const { missing, skipped } = whisperCases('no-speech');
  let dir: string;
  const file = (name: string) => path.join(dir, name);

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-no-speech-'));
    if (missing) return;
    await writeScriptedModel(file('blank.bin'), { segments: [{ start: 0, end: 4, text: '[BLANK_AUDIO]' }] });
    await writeScriptedModel(file('words-and-blank.bin'), {
      segments: [
        { start: 0, end: 2, text: 'Hello world.' },
        { start: 2.5, end: 4, text: '[BLANK_AUDIO]' },
      ],
    });
    const tone = ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=5:sample_rate=16000'];
    await execa('ffmpeg', ['-v', 'error', ...tone, '-c:a', 'pcm_s16le', file('tone.wav')]);
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** `mediaflow transcribe` of the tone with `model`, into an output folder of its own. */
  const transcribe = async (model: string) => {
    const out = await mkdtemp(path.join(dir, 'out-'));
    const result = await runCli(['transcribe', '--media-url', file('tone.wav'), '--format', 'json', '--out-dir', out], {
      env: { MEDIAFLOW_WHISPER_MODEL: file(model) },
    });
    return { ...result, out };
  };

  it('only [BLANK_AUDIO] recognised: a 422 naming the input, and no transcript or work file left', async (context) => {
    if (skipped(context)) return;
    const data = await mkdtemp(path.join(dir, 'data-'));
    const server = await startServeProcess(data, { MEDIAFLOW_WHISPER_MODEL: file('blank.bin') });
    try {
      const files = await startFileServer({ '/tone.wav': serveFile(file('tone.wav'), 'audio/wav') });
      const form = new FormData();
      form.append('media_url', files.url('/tone.wav'));
      const res = await fetch(`${server.base}/transcribe/`, { method: 'POST', body: form });
      await files.close();
      const body = (await res.json()) as { error: string };
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.match(body.error, /^No speech was recognised in http:\/\/127\.0\.0\.1:\d+\/tone\.wav/);
      for (const folder of ['work', 'uploads']) {
        assert.deepEqual(await readdir(path.join(data, folder), { recursive: true }).catch(() => []), [], folder);
      }
    } finally {
      server.child.kill('SIGTERM');
      await server.child;
    }
  });

  it('[BLANK_AUDIO] after speech is left out of the words, the segments and the text', async (context) => {
    if (skipped(context)) return;
    const result = await transcribe('words-and-blank.bin');
    assert.equal(result.exitCode, 0, result.stderr);
    const answer = JSON.parse(result.stdout) as { text: string; output_file: string };
    assert.equal(answer.text, 'Hello world.');
    const transcript = JSON.parse(await readFile(path.resolve(result.out, answer.output_file), 'utf8')) as {
      text: string;
      segments: Array<{ text: string; words: Array<{ word: string }> }>;
    };
    assert.equal(transcript.text, 'Hello world.');
    assert.deepEqual(
      transcript.segments.map((segment) => [segment.text, segment.words.map((w) => w.word)]),
      [['Hello world.', ['Hello', 'world.']]],
    );
  });
});
