import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/engine/config.js';
import { sherpaInstalled } from '../../../src/engine/voice/neural-engine.js';
import { Voices } from '../../../src/engine/voice/voices.js';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { pcm } from '../../helpers/media.js';
import { optionalCases } from '../../helpers/optional-cases.js';
import { PIPER_LOW, samplesPerToken, writeLowVoice } from '../../helpers/piper-low-onnx.js';

/**
 * The Piper "low" voice that `npm run bench:speak` times (test/helpers/piper-low-onnx.ts: the real network's
 * dimensions, random weights), run by the real sherpa-onnx through the voice layer: it has a real low voice's size,
 * loads, and speaks finite, audible audio whose length follows the input and the length scale. A model that no longer
 * did would make the benchmark time nothing.
 */
const { skipped } = optionalCases(
  'Piper low voice',
  sherpaInstalled() ? undefined : 'sherpa-onnx-node is not installed (npm install)',
);

/** Piper's published low voices (en_US-amy-low.onnx, en_US-lessac-low.onnx, ...: voices.json's size_bytes). */
const PUBLISHED_LOW_BYTES = 63_104_526;
/**
 * SynthesizerTrn.infer's weights at the low quality's dimensions, counted from Piper's models.py: text encoder
 * 6,341,760, duration predictor (the 3 flows inference runs) 555,163, flow 7,090,560, generator 1,662,976.
 */
const LOW_PARAMETERS = 15_650_459;

let root: string;
let model: string;
let parameters: number;

before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-piper-low-'));
  model = path.join(root, 'en_US-random-low.onnx');
  parameters = await writeLowVoice(model);
});

after(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the benchmark’s Piper low voice', () => {
  it('has the weights of a real low voice, and about its size on disk', async () => {
    assert.equal(parameters, LOW_PARAMETERS);
    const bytes = (await stat(model)).size;
    assert.ok(Math.abs(bytes / PUBLISHED_LOW_BYTES - 1) < 0.01, `${bytes} bytes against ${PUBLISHED_LOW_BYTES}`);
  });

  const caseName = 'speaks finite, audible audio whose length follows the input and the length scale';
  it(caseName, { timeout: 180_000 } as never, async (context) => {
    if (skipped(context)) return;
    const dataDir = await mkdtemp(path.join(root, 'data-'));
    const settings = loadConfig({
      MEDIAFLOW_DATA_DIR: dataDir,
      MEDIAFLOW_TTS_MODELS: `piper:low=${model}`,
      MEDIAFLOW_CONCURRENCY: '1',
    });
    const voices = new Voices({ settings, ffmpeg: 'ffmpeg' });
    const tokens: number[][] = [];
    for (const speed of [1, 2, 0.5]) {
      const dir = await mkdtemp(path.join(root, 'run-'));
      const text = 'Hello world. A longer second sentence follows here.';
      const speech = await voices.synthesise({ text, voice: 'piper:low', speed }, 'speech.wav', {
        dir,
        signal: AbortSignal.timeout(90_000),
      });
      assert.equal(speech.sampleRate, PIPER_LOW.sampleRate);
      const perToken = samplesPerToken(1 / speed);
      const counts: number[] = [];
      for (const sentence of speech.sentences) {
        const samples = await pcm(speech.file, sentence.start, sentence.end - sentence.start);
        // Whole tokens: the join kept every sample of the sentence, as none is silent.
        assert.equal(samples.length % perToken, 0, `${samples.length} samples at speed ${speed}`);
        counts.push(samples.length / perToken);
        const rms = Math.sqrt(samples.reduce((sum, x) => sum + x * x, 0) / samples.length);
        assert.ok(rms > 0.05, `RMS ${rms} at speed ${speed}`);
        // A NaN is written as 0, which noise of this level hardly ever is exactly.
        const zeros = samples.filter((sample) => sample === 0).length;
        assert.ok(zeros < samples.length / 100, `${zeros} of ${samples.length} samples are 0 at speed ${speed}`);
      }
      tokens.push(counts);
    }
    // The same tokens at every speed, each its frames times the length scale; more for the longer sentence.
    assert.deepEqual(tokens[1], tokens[0]);
    assert.deepEqual(tokens[2], tokens[0]);
    assert.ok(tokens[0]![1]! > 2 * tokens[0]![0]!, `${tokens[0]} tokens`);
  });
});
