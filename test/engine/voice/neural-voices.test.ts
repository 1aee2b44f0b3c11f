import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../../src/engine/config.js';
import { MediaflowError } from '../../../src/engine/errors.js';
import { ModelStore } from '../../../src/engine/voice/model-store.js';
import { NeuralEngine } from '../../../src/engine/voice/neural-engine.js';
import { sentencesOf } from '../../../src/engine/voice/text-units.js';
import { parseTtsModels } from '../../../src/engine/voice/tts-models.js';
import { Voices } from '../../../src/engine/voice/voices.js';
import type { Speech } from '../../../src/engine/contract/speech.js';
import { serveFile, startFileServer, type FileServer } from '../../helpers/file-server.js';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { useScratch } from '../../helpers/scratch.js';
import { pcm, toneLevel } from '../../helpers/media.js';
import { idOf, TONE_VOICE, toneOf, writeToneKokoro, writeToneVoice } from '../../helpers/piper-onnx.js';
import { assertCuesOnSpeech, processesMentioning } from '../../helpers/speech-audio.js';

/**
 * The neural path, run by the real sherpa-onnx on models generated here (test/helpers/piper-onnx.ts): a Piper voice
 * and a Kokoro model that speak a tone per token, 0.1 s a token at speed 1, each token at its own pitch. What the
 * synthesis answers is checked against that known waveform.
 */
const scratch = useScratch('mediaflow-neural-');
let models: string;
let piper: string;
let kokoro: string;
let server: FileServer;

before(async () => {
  models = path.join(scratch.dir, 'models');
  kokoro = path.join(models, 'kokoro');
  await mkdir(kokoro, { recursive: true });
  piper = path.join(models, 'en_US-tone-low.onnx');
  await writeToneVoice(piper);
  await writeToneKokoro(kokoro);
  const cut = path.join(models, 'cut.onnx');
  await writeFile(cut, (await readFile(piper)).subarray(0, 700));
  await copyFile(`${piper}.json`, `${cut}.json`);
  server = await startFileServer({
    '/v/tone.onnx': serveFile(piper),
    '/v/tone.onnx.json': serveFile(`${piper}.json`),
    '/v/cut.onnx': serveFile(cut),
    '/v/cut.onnx.json': serveFile(`${piper}.json`),
  });
});

after(async () => {
  await server?.close();
});

/** The fragment naming the tone voice's two files' SHA-256. */
async function toneHashes(): Promise<string> {
  const sha256 = async (file: string) =>
    createHash('sha256')
      .update(await readFile(file))
      .digest('hex');
  return `#sha256=${await sha256(piper)}+${await sha256(`${piper}.json`)}`;
}

/** Voices with `models` as MEDIAFLOW_TTS_MODELS and a data directory of their own. */
async function voicesWith(...items: string[]): Promise<{ voices: Voices; dataDir: string }> {
  const dataDir = await mkdtemp(path.join(scratch.dir, 'data-'));
  const settings = loadConfig({
    MEDIAFLOW_DATA_DIR: dataDir,
    MEDIAFLOW_TTS_MODELS: items.join(','),
    MEDIAFLOW_ALLOW_PRIVATE_URLS: '1',
  });
  return { voices: new Voices({ settings, ffmpeg: 'ffmpeg' }), dataDir };
}

async function speak(voices: Voices, text: string, voice: string, speed = 1): Promise<{ speech: Speech; dir: string }> {
  const dir = await mkdtemp(path.join(scratch.dir, 'run-'));
  const speech = await voices.synthesise({ text, voice, speed }, 'speech.wav', {
    dir,
    signal: AbortSignal.timeout(60_000),
  });
  return { speech, dir };
}

const TWO = 'Hello world. A longer second sentence follows here.';
const samples = (seconds: number) => Math.round(seconds * TONE_VOICE.sampleRate);
/** A sentence's length in samples. */
const lengths = (speech: Speech) => speech.sentences.map((sentence) => samples(sentence.end - sentence.start));
const level = async (file: string, hz: number, start: number, seconds: number) =>
  toneLevel(await pcm(file, start, seconds), hz, TONE_VOICE.sampleRate);

describe('a Piper voice, spoken by sherpa-onnx', () => {
  it('speaks a tone per token, each sentence from its first token (bos) to its last (eos)', async () => {
    const { voices } = await voicesWith(`piper:tone=${piper}`);
    assert.deepEqual(await voices.defaultVoice(), {
      id: 'piper:tone',
      engine: 'piper',
      language: 'en-US',
      name: 'tone',
    });
    const { speech } = await speak(voices, TWO, 'piper:tone');
    assert.equal(speech.sampleRate, 16000);
    assert.equal(speech.wordTimes, 'proportional');
    const [first, second] = lengths(speech);
    // Whole tokens (bos, pad, phoneme, pad, ..., eos: an odd count), and more of them for the longer sentence.
    for (const length of [first!, second!]) assert.equal(length % TONE_VOICE.samplesPerToken, 0, `${length} samples`);
    assert.equal((first! / TONE_VOICE.samplesPerToken) % 2, 1);
    assert.ok(second! > 2 * first!, `${second} samples against ${first}`);
    // The whole: both sentences and the 0.4 s pause between them, to the sample.
    assert.equal(samples(speech.duration), first! + samples(0.4) + second!);
    const bos = toneOf(TONE_VOICE, idOf('^'));
    const eos = toneOf(TONE_VOICE, idOf('$'));
    const pad = toneOf(TONE_VOICE, idOf('_'));
    for (const sentence of speech.sentences) {
      assert.ok((await level(speech.file, bos, sentence.start, 0.1)) > 0.4, 'the first token is bos');
      assert.ok((await level(speech.file, pad, sentence.start, 0.1)) < 0.05, 'and not pad');
      assert.ok((await level(speech.file, pad, sentence.start + 0.1, 0.1)) > 0.4, 'then pad');
      assert.ok((await level(speech.file, eos, sentence.end - 0.1, 0.1)) > 0.4, 'the last token is eos');
    }
    const pause = await pcm(speech.file, speech.sentences[0]!.end, 0.4);
    assert.ok(
      pause.every((sample) => sample === 0),
      'the pause is silence',
    );
    await assertCuesOnSpeech(speech.file, speech.sentences);
  });

  it('speaks at speed 2 in exactly half the samples, and at 0.5 in twice as many', async () => {
    const { voices } = await voicesWith(`piper:tone=${piper}`);
    const [normal, fast, slow] = await Promise.all(
      [1, 2, 0.5].map(async (speed) => (await speak(voices, TWO, 'piper:tone', speed)).speech),
    );
    assert.deepEqual(
      lengths(fast!),
      lengths(normal!).map((length) => length / 2),
    );
    assert.deepEqual(
      lengths(slow!),
      lengths(normal!).map((length) => length * 2),
    );
    // The pause between sentences follows the speed too.
    assert.equal(samples(fast!.sentences[1]!.start - fast!.sentences[0]!.end), samples(0.2));
  });

  it('is killed on cancel, its work files removed', async () => {
    const { voices } = await voicesWith(`piper:tone=${piper}`);
    const dir = await mkdtemp(path.join(scratch.dir, 'run-'));
    const controller = new AbortController();
    const long = Array.from({ length: 300 }, (_, i) => `This is sentence number ${i + 1} of a long text.`).join(' ');
    let spoken = 0;
    const synthesis = voices.synthesise({ text: long, voice: 'piper:tone' }, 'speech.wav', {
      dir,
      signal: controller.signal,
      progress: (ratio) => {
        spoken = ratio;
        if (ratio > 0) controller.abort(new DOMException('Cancelled', 'AbortError'));
      },
    });
    await assert.rejects(synthesis, { name: 'AbortError' });
    assert.ok(spoken > 0 && spoken < 0.5, `cancelled while it spoke (${spoken})`);
    assert.deepEqual(await processesMentioning(dir), []);
    assert.deepEqual(await readdir(dir), []);
  });
});

describe('a Kokoro model, spoken by sherpa-onnx', () => {
  it('lists its speakers as voices, and speaks with each at its speed', async () => {
    const { voices } = await voicesWith(`kokoro:tone=${kokoro}`);
    const listed = (await voices.list()).filter((voice) => voice.engine === 'kokoro');
    assert.deepEqual(listed, [
      { id: 'kokoro:af_tone', engine: 'kokoro', language: 'en-US', name: 'af_tone' },
      { id: 'kokoro:bm_tone', engine: 'kokoro', language: 'en-GB', name: 'bm_tone' },
    ]);
    const normal = (await speak(voices, TWO, 'kokoro:bm_tone')).speech;
    const fast = (await speak(voices, TWO, 'kokoro:bm_tone', 2)).speech;
    for (const length of lengths(normal)) assert.equal(length % TONE_VOICE.samplesPerToken, 0);
    assert.deepEqual(
      lengths(fast),
      lengths(normal).map((length) => length / 2),
    );
    await assertCuesOnSpeech(normal.file, normal.sentences);
  });
});

describe('a model that cannot be used', () => {
  /** Asserts that speaking fails with a 500 saying `why`, and leaves nothing in the run or the voices folder. */
  async function refused(item: string, voice: string, why: RegExp): Promise<void> {
    const { voices, dataDir } = await voicesWith(item);
    const dir = await mkdtemp(path.join(scratch.dir, 'run-'));
    await assert.rejects(
      voices.synthesise({ text: TWO, voice }, 'speech.wav', { dir, signal: AbortSignal.timeout(60_000) }),
      (error: MediaflowError) => {
        assert.equal(error.status, 500, error.message);
        assert.match(error.message, why);
        return true;
      },
    );
    assert.deepEqual(await readdir(dir), []);
    const kept = existsSync(path.join(dataDir, 'voices')) ? await readdir(path.join(dataDir, 'voices', 'piper')) : [];
    assert.deepEqual(kept, []);
  }

  it('a model cut short is refused before sherpa-onnx loads it, saying so', async () => {
    await refused(
      `piper:cut=${path.join(models, 'cut.onnx')}`,
      'piper:cut',
      /MEDIAFLOW_TTS_MODELS' piper:cut is not a usable Piper model: the file is cut short/,
    );
  });

  it('a damaged model that onnxruntime cannot load gives its reason', async () => {
    const damaged = path.join(models, 'damaged.onnx');
    // Sin becomes Sjn, an operator onnxruntime has not: the file is whole, its graph is not runnable.
    const bytes = await readFile(piper);
    await writeFile(damaged, Buffer.from(bytes.toString('latin1').replaceAll('Sin', 'Sjn'), 'latin1'));
    await copyFile(`${piper}.json`, `${damaged}.json`);
    await refused(`piper:damaged=${damaged}`, 'piper:damaged', /piper:damaged failed: .*Sjn/);
  });

  it('a model without metadata or a config beside it is refused, saying what it lacks', async () => {
    const bare = path.join(models, 'bare.onnx');
    await copyFile(piper, bare);
    await refused(`piper:bare=${bare}`, 'piper:bare', /no sherpa-onnx metadata, and no bare\.onnx\.json beside it/);
  });

  it('a neural voice without sherpa-onnx installed is a 501 saying what to install', async () => {
    const store = new ModelStore(loadConfig({ MEDIAFLOW_DATA_DIR: scratch.dir }));
    const engine = new NeuralEngine('piper', parseTtsModels([`piper:tone=${piper}`]), store, 1, () => false);
    assert.equal(engine.runtimeMissing()?.status, 501);
    const { status } = await engine.status();
    assert.equal(status.available, false);
    const voice = { id: 'piper:tone', engine: 'piper' as const, language: 'en-US', name: 'tone' };
    await assert.rejects(
      engine.speak(voice, sentencesOf('Hi.'), 1, { dir: scratch.dir, signal: AbortSignal.timeout(10_000) }),
      (error: MediaflowError) =>
        error.status === 501 &&
        /Piper voices are not available.*npm install sherpa-onnx-node@1\.13\.8/.test(error.message),
    );
  });
});

describe('a model given by URL', () => {
  it('is fetched once, checked against its SHA-256, and kept whole', async () => {
    const item = `piper:web=${server.url('/v/tone.onnx')}${await toneHashes()}`;
    const { voices, dataDir } = await voicesWith(item);
    // Not fetched yet: not listed, but known, and fetched when it first speaks.
    assert.deepEqual(
      (await voices.list()).filter((voice) => voice.engine === 'piper'),
      [],
    );
    const { speech } = await speak(voices, TWO, 'piper:web');
    assert.equal(speech.sentences.length, 2);
    assert.equal(server.hits.get('/v/tone.onnx'), 1);
    const kept = path.join(dataDir, 'voices', 'piper', 'web');
    assert.deepEqual((await readdir(kept)).sort(), [
      'mediaflow-voice.json',
      'model.onnx',
      'model.onnx.json',
      'tokens.txt',
    ]);
    const [entry] = voices.models;
    assert.deepEqual(
      (await voices.store.verify(entry!)).map((file) => path.basename(file.path)),
      ['model.onnx', 'model.onnx.json'],
    );
    // Another process with the same data directory finds it there.
    const again = new Voices({
      settings: loadConfig({ MEDIAFLOW_DATA_DIR: dataDir, MEDIAFLOW_TTS_MODELS: item }),
      ffmpeg: 'ffmpeg',
    });
    assert.deepEqual(
      (await again.list()).filter((voice) => voice.engine === 'piper').map((voice) => voice.id),
      ['piper:web'],
    );
    await speak(again, 'Once more.', 'piper:web');
    assert.equal(server.hits.get('/v/tone.onnx'), 1);
    // A file changed since is found out.
    await writeFile(path.join(kept, 'model.onnx.json'), '{}');
    await assert.rejects(voices.store.verify(entry!), /model\.onnx\.json is not the file MEDIAFLOW_TTS_MODELS names/);
  });

  it('is refused when a file is not the one named, leaving nothing behind', async () => {
    // The server sends a model cut short, where the setting names the whole one.
    const item = `piper:bad=${server.url('/v/cut.onnx')}${await toneHashes()}`;
    const { voices, dataDir } = await voicesWith(item);
    const dir = await mkdtemp(path.join(scratch.dir, 'run-'));
    await assert.rejects(
      voices.synthesise({ text: TWO, voice: 'piper:bad' }, 'speech.wav', { dir, signal: AbortSignal.timeout(60_000) }),
      (error: MediaflowError) =>
        error.status === 502 && /its SHA-256 is [0-9a-f]{64}, not the [0-9a-f]{64}.*refused/.test(error.message),
    );
    assert.deepEqual(await readdir(dir), []);
    assert.deepEqual(await readdir(path.join(dataDir, 'voices', 'piper')), []);
  });
});
