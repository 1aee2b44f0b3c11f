import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/engine/config.js';
import type { LocalInput } from '../../../src/engine/contract/plugin.js';
import { probeFile } from '../../../src/engine/probe/probe.js';
import { resolveBinaries } from '../../../src/engine/exec/binaries.js';
import { Voices } from '../../../src/engine/voice/voices.js';
import { resolve } from '../../../src/plugins/render/resolve.js';
import type { EditDocument } from '../../../src/plugins/render/schema.js';
import { speechToTranscribe, textScript } from '../../../src/plugins/render/text-script.js';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { heardSpans } from '../../helpers/speech-audio.js';

/**
 * Captions `from` a voice clip, written from its synthesis's timings (never a transcription): the real espeak-ng and
 * flite speak a text of sentences separated by pauses, and the ASS script the render draws is read back against where
 * ffmpeg's silencedetect hears each sentence, on the timeline's clock.
 */

const TEXT = 'Hello there, my friends. This is the second sentence of the voice. Goodbye now.';
/** Where the voice clip starts on the timeline. */
const START = 1.5;

let root: string;
let voices: Voices;

before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-render-voice-'));
  voices = new Voices({ settings: loadConfig({ MEDIAFLOW_DATA_DIR: root }), ffmpeg: 'ffmpeg' });
});

after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The text is spoken by `voice` into the workspace, and probed, as the engine's input stage hands it to the render. */
async function spokenInput(voice: string): Promise<LocalInput> {
  const dir = await mkdtemp(path.join(root, 'job-'));
  const { file, ...speech } = await voices.synthesise({ text: TEXT, voice }, 'in0.wav', {
    dir,
    signal: AbortSignal.timeout(60_000),
  });
  const facts = await probeFile(resolveBinaries().ffprobe, path.basename(file), { cwd: dir, timeoutMs: 30_000 });
  return { file: path.join(dir, 'in0.wav'), source: 'the speech of tracks[0].clips[0]', facts, speech };
}

/** The script's events: times in seconds and the text without its tags. */
function events(ass: string): Array<{ start: number; end: number; text: string }> {
  const seconds = (time: string) => time.split(':').reduce((sum, part) => sum * 60 + Number(part), 0);
  return ass
    .split('\n')
    .filter((line) => line.startsWith('Dialogue:'))
    .map((line) => {
      const fields = line.slice('Dialogue:'.length).split(',');
      return {
        start: seconds(fields[1]!),
        end: seconds(fields[2]!),
        text: fields
          .slice(9)
          .join(',')
          .replace(/\{[^}]*\}/g, ''),
      };
    });
}

describe('captions from a voice clip', () => {
  for (const voice of ['espeak:en-us', 'flite:slt']) {
    it(`are cut as generate-subtitles cuts a text, each where ${voice} says it on the timeline`, async () => {
      const speech = await spokenInput(voice);
      const document: EditDocument = {
        output: { width: 320, height: 240 },
        tracks: [
          { clips: [{ id: 'narrator', type: 'voice', text: TEXT, voice, start: START }] },
          { clips: [{ type: 'captions', from: 'narrator', words_per_line: 3, highlight: 'word' }] },
        ],
      };
      const timeline = resolve(document, {}, ({ clip }) => (clip.type === 'voice' ? speech : undefined));
      const [said, captions] = timeline.clips;
      assert.equal(said!.type, 'voice');
      assert.equal(said!.end, START + speech.facts.duration!, "the voice lasts its speech's length");
      assert.deepEqual([captions!.start, captions!.end], [said!.start, said!.end], 'the captions follow the voice');
      const span = { start: 0, end: timeline.output.duration };
      assert.deepEqual(speechToTranscribe(timeline, span), [], 'nothing to transcribe');

      const cues = events(textScript(timeline, span)!);
      // At most three words a cue, a cue ending early at a sentence's end; every word of the text, in order.
      assert.deepEqual(
        cues.map((cue) => cue.text),
        ['Hello there, my', 'friends.', 'This is the', 'second sentence of', 'the voice.', 'Goodbye now.'],
      );
      // Each sentence's first cue where silencedetect hears it start, shifted to the clip's start; none after it.
      const { spans, duration } = await heardSpans(speech.file, -45, 0.25);
      assert.equal(spans.length, 3, JSON.stringify(spans));
      for (const [sentence, cue] of [
        [0, 0],
        [1, 2],
        [2, 5],
      ] as const) {
        const onset = START + spans[sentence]!.start;
        assert.ok(Math.abs(cues[cue]!.start - onset) <= 0.15, `cue ${cue} at ${cues[cue]!.start}, heard at ${onset}`);
      }
      for (const [i, cue] of cues.entries()) {
        assert.ok(cue.start < cue.end, JSON.stringify(cue));
        assert.ok(cue.end <= START + duration + 0.01, `cue ${i} ends at ${cue.end}, after the speech`);
        if (i > 0) assert.ok(cue.start >= cues[i - 1]!.end - 0.01, 'one cue at a time');
      }
    });
  }

  it('end with a voice clip cut short, showing nothing said after its end', async () => {
    const speech = await spokenInput('espeak:en-us');
    const document: EditDocument = {
      tracks: [
        { clips: [{ id: 'narrator', type: 'voice', text: TEXT, voice: 'espeak:en-us', duration: 1 }] },
        { clips: [{ type: 'captions', from: 'narrator' }] },
      ],
    };
    const timeline = resolve(document, {}, ({ clip }) => (clip.type === 'voice' ? speech : undefined));
    const cues = events(textScript(timeline, { start: 0, end: timeline.output.duration })!);
    assert.ok(cues.length >= 1);
    assert.ok(
      cues.every((cue) => cue.end <= 1 + 0.01),
      JSON.stringify(cues),
    );
    assert.equal(cues[0]!.text.split(' ')[0], 'Hello');
  });
});
