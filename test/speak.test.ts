import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { submitJob, waitForJob, type JobView } from './helpers/jobs.js';
import { audioOf, durationOf, probe } from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { TONE_VOICE, writeToneVoice } from './helpers/piper-onnx.js';
import {
  assertCancelStopsSpeech,
  assertCaptionsOnSpeech,
  cuesOf,
  processesMentioning,
} from './helpers/speech-audio.js';

/**
 * POST /speak/ on the real server, with the real espeak-ng and ffmpeg's flite (and sherpa-onnx on a generated Piper
 * voice): the speech in each format, its speed, captions timed against where the sound is heard, the errors, a job
 * and its cancel, GET /voices/ and /health, and the CLI.
 */

const THREE = 'The first sentence is here. A second one follows it. And the third one ends the text.';
/** Text larger than the servers' text limit below. */
const TEXT_LIMIT = 64_000;
/** A long text: sentences enough for a job to report progress, and to be cancelled while it speaks. */
const sentences = (count: number) =>
  Array.from({ length: count }, (_, i) => `This is sentence number ${i + 1} of a long text.`).join(' ');

type Answer = { status: number; body: Record<string, string | number> };

describe('POST /speak/', () => {
  let server: TestServer;

  before(async () => {
    server = await startMediaflow({ MEDIAFLOW_MAX_TEXT_BYTES: String(TEXT_LIMIT) });
  });
  after(async () => {
    await server?.close();
  });

  const speak = async (fields: Record<string, string>): Promise<Answer> => {
    const answer = await server.post('/speak/', fields);
    return answer as Answer;
  };
  /** Speaks, expecting a 200, and returns the answer with the speech's local path. */
  const spoken = async (fields: Record<string, string>) => {
    const { status, body } = await speak(fields);
    assert.equal(status, 200, JSON.stringify(body));
    return { body, file: server.pathOf(String(body.output_file)) };
  };

  it('speaks in each format: its codec, and a duration the answer gives to within 0.1 s', async () => {
    const cases = [
      ['mp3', 'mp3', 'espeak:en-us'],
      ['wav', 'pcm_s16le', 'espeak:en-us'],
      ['m4a', 'aac', 'flite:slt'],
      // flite's kal speaks at 8 kHz: Vorbis takes it as it is, Opus at 48 kHz.
      ['ogg', 'vorbis', 'flite:kal'],
      ['opus', 'opus', 'flite:kal'],
    ] as const;
    const answers = await Promise.all(
      cases.map(([format, , voice]) => spoken({ text: 'Hello there. This is a test.', format, voice })),
    );
    for (const [i, [format, codec, voice]] of cases.entries()) {
      const { body, file } = answers[i]!;
      assert.equal(body.message, 'Speech generated successfully');
      assert.equal(body.voice, voice);
      assert.match(
        String(body.output_file),
        new RegExp(`^${server.base}/uploads/[0-9a-f-]{36}/speech\\.${format}$`),
        format,
      );
      assert.equal(body.subtitle_file_url, undefined);
      const info = await probe(file);
      assert.equal(audioOf(info)?.codec_name, codec, format);
      assert.equal(info.streams.length, 1);
      const duration = Number(body.duration);
      assert.ok(duration > 1 && duration < 5, `${format}: ${duration} s`);
      assert.ok(Math.abs(durationOf(info) - duration) < 0.1, `${format}: ${durationOf(info)} s, answered ${duration}`);
    }
    assert.equal(audioOf(await probe(answers[4]!.file))?.sample_rate, '48000');
  });

  it('speaks twice as fast at speed 2, and half as fast at speed 0.5', async () => {
    const [normal, fast, slow] = await Promise.all(
      ['1', '2', '0.5'].map((speed) => spoken({ text: THREE, voice: 'flite:slt', speed, format: 'wav' })),
    );
    const ratio = (answer: typeof normal) => Number(answer!.body.duration) / Number(normal!.body.duration);
    assert.ok(Math.abs(ratio(fast) - 0.5) < 0.05, `speed 2 lasts ${ratio(fast)} of speed 1`);
    assert.ok(Math.abs(ratio(slow) - 2) < 0.2, `speed 0.5 lasts ${ratio(slow)} of speed 1`);
  });

  for (const voice of ['espeak:en-us', 'flite:slt']) {
    it(`writes SRT captions of what ${voice} says: a cue a sentence, each where its speech is heard`, async () => {
      const { body, file } = await spoken({ text: THREE, voice, captions: 'srt', words_per_line: '20', format: 'wav' });
      const url = String(body.subtitle_file_url);
      assert.equal(url, String(body.output_file).replace(/\.wav$/, '.srt'));
      const served = await fetch(url);
      assert.equal(served.status, 200);
      assert.match(served.headers.get('content-type') ?? '', /^application\/x-subrip|^text\//);
      const cues = cuesOf(await served.text());
      assert.deepEqual(
        cues.map((cue) => cue.text),
        ['The first sentence is here.', 'A second one follows it.', 'And the third one ends the text.'],
      );
      await assertCaptionsOnSpeech(file, cues);
      // The last cue ends with the speech, which ends the audio.
      assert.ok(Math.abs(cues.at(-1)!.end - Number(body.duration)) < 0.002);
    });
  }

  it('breaks WebVTT captions as generate-subtitles does, timed by where each word is spoken', async () => {
    const text = 'Hello there my good friend. This line has rather more words in it than three! "Quoted" she said.';
    const { body, file } = await spoken({ text, captions: 'vtt', words_per_line: '3', format: 'wav' });
    const document = await readFile(server.pathOf(String(body.subtitle_file_url)), 'utf8');
    assert.match(document, /^WEBVTT\n\n/);
    const cues = cuesOf(document);
    const generated = await server.post('/generate-subtitles/', { text, words_per_line: '3', seconds_per_line: '1' });
    const expected = cuesOf(await readFile(server.pathOf(generated.body.subtitle_file_url!), 'utf8'));
    assert.deepEqual(
      cues.map((cue) => cue.text),
      expected.map((cue) => cue.text),
    );
    assert.deepEqual(
      cues.map((cue) => cue.text),
      [
        'Hello there my',
        'good friend.',
        'This line has',
        'rather more words',
        'in it than',
        'three!',
        '"Quoted" she said.',
      ],
    );
    // The sentences' cues, first to last: each sentence starts where its sound does, none ends after the audio.
    const bySentence = [
      [0, 1],
      [2, 5],
      [6, 6],
    ] as const;
    await assertCaptionsOnSpeech(
      file,
      bySentence.map(([first, last]) => ({ start: cues[first]!.start, end: cues[last]!.end, text: '' })),
    );
    // Within a sentence one cue follows another at once, at the word where it begins.
    for (const i of [1, 3, 4, 5]) {
      assert.equal(cues[i]!.start, cues[i - 1]!.end, `cue ${i}`);
      assert.ok(cues[i]!.start > cues[i - 1]!.start + 0.1, `cue ${i} starts after the words before it`);
    }
  });

  it('writes ASS captions in the caption style, each word highlighted while it is said', async () => {
    const { body } = await spoken({
      text: 'Alpha, bravo, charlie, delta. Echo foxtrot.',
      voice: 'espeak:en-us',
      captions: 'ass',
      words_per_line: '8',
      highlight: 'word',
      highlight_color: '#FF0000',
      font_size: '90',
      bold: 'true',
    });
    const script = await readFile(server.pathOf(String(body.subtitle_file_url)), 'utf8');
    assert.match(String(body.subtitle_file_url), /\/speech\.ass$/);
    assert.match(script, /^Style: Default,[^,]+,90,/m);
    const events = script.split('\n').filter((line) => line.startsWith('Dialogue:'));
    assert.equal(events.length, 2);
    const time = (text: string) => {
      const [h, m, s] = text.split(':').map(Number);
      return h! * 3600 + m! * 60 + s!;
    };
    for (const [i, event] of events.entries()) {
      const [, start, end] = event.split(',') as [string, string, string];
      const karaoke = [...event.matchAll(/\\k(\d+)/g)].map((match) => Number(match[1]));
      assert.equal(karaoke.length, i === 0 ? 4 : 2, event);
      // The words' shares fill the line, from its start to its end; each word is lit in red (BGR: 0000FF).
      assert.ok(Math.abs(karaoke.reduce((sum, k) => sum + k, 0) - Math.round((time(end) - time(start)) * 100)) <= 1);
      assert.equal([...event.matchAll(/\\1c&H0000FF&/g)].length, karaoke.length);
    }
    // espeak-ng times its words: "Alpha," takes less than the three after it, each said after a comma's pause.
    const first = [...events[0]!.matchAll(/\\k(\d+)/g)].map((match) => Number(match[1]));
    assert.ok(
      first.every((k) => k > 10),
      `every word lasts a while: ${first.join(', ')}`,
    );
  });

  it('refuses bad fields with a 400 naming the field, and style fields without ass captions', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /Missing required parameter `text`/],
      [{ text: '   ' }, /Missing required parameter `text`/],
      [{ text: '... — !' }, /`text` has no words to speak/],
      [{ text: 'Hi.', voice: 'espeak:en-uss' }, /Unknown voice 'espeak:en-uss' for `voice`: did you mean espeak:en-us/],
      [{ text: 'Hi.', voice: 'nothing' }, /Unknown voice 'nothing' for `voice`/],
      [{ text: 'Hi.', speed: '3' }, /Expected `speed` to be a number from 0\.5 to 2, got `3`/],
      [{ text: 'Hi.', speed: 'fast' }, /`speed`/],
      [{ text: 'Hi.', format: 'flac' }, /Unsupported format 'flac'\. Supported formats: mp3, wav, m4a, ogg, opus\./],
      [{ text: 'Hi.', captions: 'txt' }, /Expected `captions` to be one of none, srt, vtt, ass/],
      [{ text: 'Hi.', captions: 'srt', highlight: 'word' }, /Expected `captions` to be ass when `highlight` is given/],
      [{ text: 'Hi.', font_size: '90' }, /Expected `captions` to be ass when `font_size` is given: none files/],
    ];
    for (const [fields, error] of cases) {
      const { status, body } = await speak(fields);
      assert.equal(status, 400, `${JSON.stringify(fields)}: ${JSON.stringify(body)}`);
      assert.match(String(body.error), error);
    }
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('answers 413 for a text past MEDIAFLOW_MAX_TEXT_BYTES, counted in bytes of UTF-8', async () => {
    const { status, body } = await speak({ text: 'é'.repeat(TEXT_LIMIT / 2 + 1) });
    assert.equal(status, 413, JSON.stringify(body));
    assert.match(String(body.error), new RegExp(`\`text\` is larger than the limit of ${TEXT_LIMIT} bytes`));
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('refuses an unknown voice before an asynchronous job is queued', async () => {
    const res = await fetch(`${server.base}/speak/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ text: 'Hello.', voice: 'flite:nobody' }),
    });
    const body = (await res.json()) as { error: string; job_id?: string };
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.match(body.error, /Unknown voice 'flite:nobody' for `voice`/);
  });

  it('runs as a job whose progress follows the sentences spoken', async () => {
    const id = await submitJob(
      server.base,
      '/speak/',
      { text: sentences(60), captions: 'srt', words_per_line: '20' },
      {
        prefer: 'respond-async',
      },
    );
    const seen: number[] = [];
    const job = await waitForJob(
      server.base,
      id,
      (view: JobView) => {
        seen.push(view.progress);
        return ['succeeded', 'failed', 'cancelled'].includes(view.status);
      },
      { ms: 60_000, every: 50 },
    );
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    const result = job.result as Record<string, string | number>;
    assert.equal(result.message, 'Speech generated successfully');
    assert.ok(Number(result.duration) > 60, `${result.duration} s`);
    assert.equal(cuesOf(await readFile(server.pathOf(String(result.subtitle_file_url)), 'utf8')).length, 60);
    assert.ok(
      seen.some((progress) => progress > 0 && progress < 100),
      `progress between 0 and 100: ${seen.join(', ')}`,
    );
    assert.ok(
      seen.every((progress, i) => i === 0 || progress >= seen[i - 1]!),
      `progress never goes down: ${seen.join(', ')}`,
    );
    assert.equal(job.progress, 100);
  });

  it('kills the synthesis when its job is cancelled, leaving no program and no file behind', async () => {
    // About an hour of speech: espeak-ng takes seconds over it, and is cancelled once it has said a sentence.
    await assertCancelStopsSpeech(server, '/speak/', { text: sentences(1000), voice: 'espeak:en-us' }, (id) =>
      waitForJob(server.base, id, (view) => view.progress > 0, { ms: 30_000, every: 20 }),
    );
  });
});

describe('POST /speak/ past the time limit', () => {
  let server: TestServer;

  before(async () => {
    server = await startMediaflow({ MEDIAFLOW_JOB_TIMEOUT: '1s' });
  });
  after(async () => {
    await server?.close();
  });

  it('answers 504 and stops the synthesis, leaving no program and no file behind', async () => {
    const { status, body } = await server.post('/speak/', { text: sentences(600), voice: 'espeak:en-us' });
    assert.equal(status, 504, JSON.stringify(body));
    assert.match(body.error!, /time limit/);
    assert.deepEqual(await processesMentioning(server.dataDir), []);
    assert.deepEqual(await server.workLeftovers(), []);
    assert.deepEqual(await readdir(path.join(server.dataDir, 'uploads')), []);
  });
});

describe('GET /voices/ and /health', () => {
  let server: TestServer;

  before(async () => {
    server = await startMediaflow({ MEDIAFLOW_API_KEY: 'secret-key' });
  });
  after(async () => {
    await server?.close();
  });

  it('lists every voice installed, open like /fonts while operations need the key', async () => {
    const res = await fetch(`${server.base}/voices/`);
    assert.equal(res.status, 200);
    const { voices } = (await res.json()) as { voices: Array<Record<string, string>> };
    assert.deepEqual(
      voices.find((voice) => voice.id === 'espeak:en-us'),
      {
        id: 'espeak:en-us',
        engine: 'espeak',
        language: 'en-US',
        name: 'en-us',
      },
    );
    assert.deepEqual(
      voices
        .filter((voice) => voice.engine === 'flite')
        .map((voice) => voice.id)
        .sort(),
      ['flite:awb', 'flite:kal', 'flite:kal16', 'flite:rms', 'flite:slt'],
    );
    assert.ok(voices.filter((voice) => voice.engine === 'espeak').length > 50);
    // Best engine first: espeak-ng's before flite's.
    assert.ok(voices.findIndex((v) => v.engine === 'espeak') < voices.findIndex((v) => v.engine === 'flite'));
    assert.equal((await fetch(`${server.base}/voices`)).status, 200);
    assert.equal((await server.post('/speak/', { text: 'Hi.' })).status, 401);
  });

  it('says in /health which engines speak here, with how many voices, and why the others do not', async () => {
    const health = (await (await fetch(`${server.base}/health`)).json()) as {
      voices: Array<{ engine: string; available: boolean; voices: number; error?: string }>;
    };
    const voices = (await (await fetch(`${server.base}/voices/`)).json()) as { voices: unknown[] };
    assert.deepEqual(
      health.voices.map((engine) => [engine.engine, engine.available]),
      [
        ['piper', false],
        ['kokoro', false],
        ['espeak', true],
        ['flite', true],
      ],
    );
    assert.equal(
      health.voices.reduce((sum, engine) => sum + engine.voices, 0),
      voices.voices.length,
    );
    assert.match(health.voices[0]!.error!, /MEDIAFLOW_TTS_MODELS/);
  });
});

describe('POST /speak/ with a neural voice (sherpa-onnx on a generated Piper voice)', () => {
  let server: TestServer;
  let models: string;

  before(async () => {
    models = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-speak-piper-'));
    const model = path.join(models, 'en_US-tone-low.onnx');
    await writeToneVoice(model);
    server = await startMediaflow({ MEDIAFLOW_TTS_MODELS: `piper:tone=${model}` });
  });
  after(async () => {
    await server?.close();
    if (models) await rm(models, { recursive: true, force: true });
  });

  it('is the default voice, speaking tones of the model with captions on them, listed in /voices/', async () => {
    const res = await server.post('/speak/', {
      text: 'Hello world. A longer second sentence follows here.',
      captions: 'srt',
      format: 'wav',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.voice, 'piper:tone');
    const file = server.pathOf(res.body.output_file!);
    const info = await probe(file);
    assert.equal(audioOf(info)?.sample_rate, String(TONE_VOICE.sampleRate));
    assert.ok(Math.abs(durationOf(info) - Number(res.body.duration)) < 0.001);
    const cues = cuesOf(await readFile(server.pathOf(res.body.subtitle_file_url!), 'utf8'));
    assert.deepEqual(
      cues.map((cue) => cue.text),
      ['Hello world.', 'A longer second sentence follows here.'],
    );
    // Each sentence is whole tokens of 0.1 s, then 0.4 s of silence: the cues are the tones, to the millisecond.
    assert.equal(cues[0]!.start, 0);
    const first = cues[0]!.end;
    assert.ok(Math.abs(((first * 10) % 1) - 0) < 0.01 || Math.abs(((first * 10) % 1) - 1) < 0.01, `${first} s`);
    assert.ok(Math.abs(cues[1]!.start - (first + 0.4)) < 0.002);
    assert.ok(Math.abs(cues[1]!.end - Number(res.body.duration)) < 0.002);
    await assertCaptionsOnSpeech(file, cues);
    const { voices } = (await (await fetch(`${server.base}/voices/`)).json()) as { voices: Array<{ id: string }> };
    assert.equal(voices[0]!.id, 'piper:tone');
  });

  it('speaks at speed 2 in half the time', async () => {
    const [normal, fast] = await Promise.all(
      ['1', '2'].map((speed) => server.post('/speak/', { text: 'Hello world. Again.', speed, format: 'wav' })),
    );
    const ratio = Number(fast!.body.duration) / Number(normal!.body.duration);
    assert.ok(Math.abs(ratio - 0.5) < 0.02, `speed 2 lasts ${ratio} of speed 1`);
  });
});

describe('mediaflow speak (the CLI)', () => {
  let work: string;

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-speak-cli-'));
  });
  after(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('speaks a long --text, writing the speech and its captions to --out-dir', async () => {
    const text = sentences(60);
    assert.ok(Buffer.byteLength(text) > 2500);
    const out = path.join(work, 'out');
    const result = await runCli(['speak', '--text', text, '--captions', 'vtt', '--format', 'm4a', '--out-dir', out], {
      env: { MEDIAFLOW_DATA_DIR: path.join(work, 'data') },
    });
    assert.equal(result.exitCode, 0, result.stderr);
    const body = JSON.parse(result.stdout) as Record<string, string | number>;
    assert.equal(body.message, 'Speech generated successfully');
    assert.equal(body.voice, 'espeak:en-us');
    const [id] = await readdir(out);
    assert.deepEqual((await readdir(path.join(out, id!))).sort(), ['speech.m4a', 'speech.vtt']);
    assert.equal(body.output_file, path.join(out, id!, 'speech.m4a'));
    assert.equal(body.subtitle_file_url, path.join(out, id!, 'speech.vtt'));
    const info = await probe(String(body.output_file));
    assert.equal(audioOf(info)?.codec_name, 'aac');
    assert.ok(Math.abs(durationOf(info) - Number(body.duration)) < 0.1);
    assert.equal(cuesOf(await readFile(String(body.subtitle_file_url), 'utf8')).length, 120);
  });

  it('refuses --output for two files, and an unknown --voice, with exit 2 before speaking', async () => {
    const two = await runCli(['speak', '--text', 'Hi.', '--captions', 'srt', '-o', path.join(work, 'hi.mp3')]);
    assert.equal(two.exitCode, 2, two.stderr);
    assert.match(two.stderr, /`--output` names one file, and speak writes 2 here: use `--out-dir`/);
    const voice = await runCli(['speak', '--text', 'Hi.', '--voice', 'espeak:en-uss', '--out-dir', work]);
    assert.equal(voice.exitCode, 2, voice.stderr);
    assert.match(voice.stderr, /did you mean espeak:en-us/);
    const one = await runCli(['speak', '--text', 'Hi.', '--format', 'wav', '-o', path.join(work, 'hi.wav')]);
    assert.equal(one.exitCode, 0, one.stderr);
    assert.equal(audioOf(await probe(path.join(work, 'hi.wav')))?.codec_name, 'pcm_s16le');
  });
});
