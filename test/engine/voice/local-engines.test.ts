import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/engine/config.js';
import { MediaflowError } from '../../../src/engine/errors.js';
import { EspeakEngine } from '../../../src/engine/voice/espeak-engine.js';
import { joinSentences } from '../../../src/engine/voice/sentence-join.js';
import { sentencesOf } from '../../../src/engine/voice/text-units.js';
import { Voices } from '../../../src/engine/voice/voices.js';
import type { Speech } from '../../../src/engine/contract/speech.js';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { assertCuesOnSpeech, heardSpans, peakDb, processesMentioning } from '../../helpers/speech-audio.js';

/**
 * The engines installed on every machine mediaflow runs on here, run for real: flite inside Debian's ffmpeg, and
 * Debian's espeak-ng, through its library (koffi is a development dependency) and through its command line.
 */
let root: string;
let voices: Voices;

before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-voices-'));
  voices = new Voices({ settings: loadConfig({ MEDIAFLOW_DATA_DIR: root }), ffmpeg: 'ffmpeg' });
});

after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A fresh run directory. */
const runDir = () => mkdtemp(path.join(root, 'run-'));

async function speak(text: string, voice: string, speed = 1): Promise<{ speech: Speech; dir: string }> {
  const dir = await runDir();
  const speech = await voices.synthesise({ text, voice, speed }, 'speech.wav', {
    dir,
    signal: AbortSignal.timeout(60_000),
  });
  return { speech, dir };
}

const THREE = 'The first sentence is here. A second one follows it. And the third one ends the text.';

describe('flite, inside ffmpeg', () => {
  it('lists its voices, and speaks each sentence where its cue says, words placed by their length', async () => {
    const listed = (await voices.list()).filter((voice) => voice.engine === 'flite').map((voice) => voice.id);
    assert.deepEqual(listed.sort(), ['flite:awb', 'flite:kal', 'flite:kal16', 'flite:rms', 'flite:slt']);
    const { speech } = await speak(THREE, 'flite:slt');
    assert.equal(speech.sampleRate, 16000);
    assert.equal(speech.wordTimes, 'proportional');
    assert.deepEqual(
      speech.sentences.map((sentence) => sentence.text),
      ['The first sentence is here.', 'A second one follows it.', 'And the third one ends the text.'],
    );
    await assertCuesOnSpeech(speech.file, speech.sentences);
  });

  it('speaks twice as fast at speed 2, through atempo', async () => {
    const [slow, fast] = await Promise.all([speak(THREE, 'flite:kal16', 1), speak(THREE, 'flite:kal16', 2)]);
    const ratio = fast.speech.duration / slow.speech.duration;
    assert.ok(ratio > 0.45 && ratio < 0.55, `speed 2 lasts ${ratio} of speed 1`);
    // The pause between sentences is halved too (0.2 s).
    await assertCuesOnSpeech(fast.speech.file, fast.speech.sentences, 0.15);
  });
});

describe('espeak-ng', () => {
  it('speaks through its library, each sentence where its cue says', async () => {
    const { speech } = await speak(THREE, 'espeak:en-us');
    assert.equal(speech.sampleRate, 22050);
    assert.equal(speech.wordTimes, 'engine');
    await assertCuesOnSpeech(speech.file, speech.sentences);
  });

  it("times each word where espeak-ng says it starts: within 0.08 s of its sound, after a comma's pause", async () => {
    const { speech } = await speak('Alpha, bravo, charlie, delta.', 'espeak:en-us');
    const [sentence] = speech.sentences;
    const { spans } = await heardSpans(speech.file, -45, 0.08);
    assert.equal(spans.length, 4, JSON.stringify(spans));
    for (const [i, word] of sentence!.words.entries())
      assert.ok(
        Math.abs(word.start - spans[i]!.start) <= 0.08,
        `${word.text} at ${word.start}, heard at ${spans[i]!.start}`,
      );
  });

  it('speaks through its command line, where koffi is missing, words placed by their length', async () => {
    const dir = await runDir();
    const sentences = sentencesOf(THREE);
    const espeak = new EspeakEngine('espeak-ng', false);
    const [voice] = (await espeak.status()).voices.filter((candidate) => candidate.name === 'en-us');
    const spoken = await espeak.speak(voice!, sentences, 1, { dir, signal: AbortSignal.timeout(60_000) });
    assert.ok(spoken.every((sentence) => sentence.wordStarts === undefined));
    const output = path.join(dir, 'speech.wav');
    const joined = await joinSentences(sentences, spoken, output, { speed: 1 });
    await assertCuesOnSpeech(output, joined.sentences);
    assert.deepEqual(await readdir(dir), ['speech.wav', ...sentences.map((_, i) => `espeak-${i}.txt`)].sort());
  });

  it('speaks faster at speed 2', async () => {
    const [slow, fast] = await Promise.all([speak(THREE, 'espeak:en-us', 1), speak(THREE, 'espeak:en-us', 2)]);
    const ratio = fast.speech.duration / slow.speech.duration;
    assert.ok(ratio > 0.4 && ratio < 0.7, `speed 2 lasts ${ratio} of speed 1`);
  });

  for (const [voice, text, sentences] of [
    ['espeak:de', 'Guten Morgen, wie geht es Ihnen heute? Mir geht es gut.', 2],
    ['espeak:ar', 'مرحبا بالعالم. كيف حالك اليوم؟', 2],
    ['espeak:hi', 'नमस्ते दुनिया। आज मौसम अच्छा है।', 2],
    ['espeak:cmn', '你好世界。今天天气很好。', 2],
  ] as const) {
    it(`speaks ${voice}: sound of a length its text needs`, async () => {
      const { speech } = await speak(text, voice);
      assert.equal(speech.sentences.length, sentences);
      assert.ok(speech.duration > 1 && speech.duration < 12, `${speech.duration} s`);
      assert.ok((await peakDb(speech.file)) > -20, 'it is loud enough to be speech');
      const { spans } = await heardSpans(speech.file);
      const heard = spans.reduce((sum, span) => sum + span.end - span.start, 0);
      assert.ok(heard > speech.duration / 2, `${heard} s of ${speech.duration} s heard`);
      assert.ok(speech.sentences.every((sentence) => sentence.words.length > 0));
    });
  }

  it('is killed on cancel, its work files removed', async () => {
    const dir = await runDir();
    const controller = new AbortController();
    const long = Array.from({ length: 200 }, (_, i) => `This is sentence number ${i + 1} of a long text.`).join(' ');
    const synthesis = voices.synthesise({ text: long, voice: 'espeak:en-us' }, 'speech.wav', {
      dir,
      signal: controller.signal,
      progress: (ratio) => ratio > 0 && controller.abort(new DOMException('Cancelled', 'AbortError')),
    });
    await assert.rejects(synthesis, { name: 'AbortError' });
    assert.deepEqual(await processesMentioning(dir), []);
    assert.deepEqual(await readdir(dir), []);
  });
});

describe('the voices', () => {
  it('default to espeak-ng without a neural model, and say which engines speak here', async () => {
    assert.equal((await voices.defaultVoice()).id, 'espeak:en-us');
    const status = await voices.status();
    assert.deepEqual(
      status.map((engine) => [engine.engine, engine.available]),
      [
        ['piper', false],
        ['kokoro', false],
        ['espeak', true],
        ['flite', true],
      ],
    );
    assert.match(status[0]!.error!, /no piper model is configured \(MEDIAFLOW_TTS_MODELS/);
    assert.ok(status[2]!.voices > 100, `espeak-ng has ${status[2]!.voices} voices`);
  });

  it('refuse an unknown voice, a speed out of range and a text with no word, naming the field', async () => {
    const dir = await runDir();
    const refused = (request: { text: string; voice?: string; speed?: number }, message: RegExp) =>
      assert.rejects(
        voices.synthesise(request, 'speech.wav', { dir, signal: AbortSignal.timeout(10_000) }),
        (error: MediaflowError) => error.status === 400 && message.test(error.message),
      );
    await refused(
      { text: 'Hi.', voice: 'espeak:en-uss' },
      /Unknown voice 'espeak:en-uss' for `voice`: did you mean espeak:en-us/,
    );
    await refused({ text: 'Hi.', voice: 'say:alex' }, /Unknown voice 'say:alex'.*<engine>:<name>/);
    await refused({ text: 'Hi.', voice: 'flite:slt', speed: 3 }, /`speed` must be from 0.5 to 2, not 3/);
    await refused({ text: ' ... ', voice: 'flite:slt' }, /`text` has no words to speak/);
    assert.deepEqual(await readdir(dir), []);
  });

  it('refuse a voice that makes no sound for the text, leaving nothing behind', async () => {
    const dir = await runDir();
    await assert.rejects(
      voices.synthesise({ text: '你好世界。', voice: 'flite:slt' }, 'speech.wav', {
        dir,
        signal: AbortSignal.timeout(10_000),
      }),
      (error: MediaflowError) => error.status === 422 && /flite:slt made no sound/.test(error.message),
    );
    assert.deepEqual(await readdir(dir), []);
  });
});
