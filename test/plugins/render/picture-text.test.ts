import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { captionPixels, meanX } from '../../helpers/caption-pixels.js';
import { brightPixels, frameRgb } from '../../helpers/media.js';
import type { LocalInput } from '../../../src/engine/contract/plugin.js';
import { textScript } from '../../../src/plugins/render/picture.js';
import type { Clip } from '../../../src/plugins/render/timeline.js';
import { decodedFrames, timelineOf, Workspace } from './picture-helpers.js';

/** Text big enough to count its pixels in a 320x180 frame (sizes are of a 1080-high frame). */
const STYLE = { font_size: 200 };
/** Frames of a dark picture: anything bright is text. */
const SIZE = { width: 320, height: 180, background: '#101010' };

describe("a render's text and captions", () => {
  let work: Workspace;
  let srt: LocalInput;
  let tone: LocalInput;

  before(async () => {
    work = await Workspace.create();
    srt = await work.subtitles('cues.srt', '1\n00:00:00,200 --> 00:00:00,600\nAB\n');
    tone = await work.media('tone.wav', ['sine=frequency=440:duration=1:sample_rate=48000']);
  });
  after(() => work.remove());

  const bright = async (file: string, time: number) => brightPixels(await frameRgb(file, time), 0, 0, 320, 180, 150);

  it('draws text only within its times, and subtitle cues at their times shifted to the clip', async () => {
    const timeline = timelineOf(
      [
        { type: 'text', track: 0, start: 0.5, end: 1, text: 'Hi', style: STYLE },
        {
          ...{ type: 'captions', track: 1, start: 1, end: 2, source: { subtitles: srt } },
          ...{ style: STYLE, highlight: 'none', highlightColor: '#FFD700' },
        },
      ] as Clip[],
      { ...SIZE, duration: 2 },
    );
    const { file, picture } = await work.render('text.mp4', timeline);
    assert.deepEqual(Object.keys(picture.files), ['text-0.ass']);
    assert.equal(picture.graph.match(/\bass=/g)?.length, 1, 'one ass filter');
    for (const time of [0.25, 1.1, 1.8]) assert.equal(await bright(file, time), 0, `nothing drawn at ${time} s`);
    assert.ok((await bright(file, 0.75)) > 50, 'the text at 0.75 s');
    assert.ok((await bright(file, 1.4)) > 50, 'the cue at 1.4 s (0.4 s into its clip)');
    assert.equal((await decodedFrames(file)).errors, '');
  });

  it("highlights a voice's words as they are said, and captions a transcription written by a step", async () => {
    const timeline = timelineOf(
      [
        {
          ...{ type: 'voice', track: 0, start: 0, end: 1, id: 'narrator', text: 'one two', voice: 'espeak:en' },
          ...{ speed: 1, volume: 0, media: tone },
          words: [
            { text: 'one', spaced: true, start: 0, end: 0.5 },
            { text: 'two', spaced: true, start: 0.5, end: 1 },
          ],
        },
        { type: 'audio', track: 1, start: 1, end: 2, id: 'guest', media: tone, trim: 0, volume: 0 },
        ...[
          { track: 2, start: 0, end: 1, source: { from: 'narrator' }, highlight: 'word' },
          { track: 2, start: 1, end: 2, source: { from: 'guest' }, highlight: 'none' },
        ].map((captions) => ({
          ...{ type: 'captions', ...captions, style: STYLE },
          ...{ highlightColor: '#FFD700', wordsPerLine: 8 },
        })),
      ] as Clip[],
      { ...SIZE, duration: 2 },
    );
    // The guest's speech as a transcription of its media heard it: one word, 0.1 to 0.5 s into the file.
    const heard = new Map([['guest', [{ word: 'hello', start: 0.1, end: 0.5 }]]]);
    const { file, picture } = await work.render('captions.mp4', timeline, undefined, (p) => ({
      [p.speech!.file]: textScript(timeline, { start: 0, end: 2 }, heard)!,
    }));
    assert.deepEqual(
      picture.speech?.clips.map((clip) => clip.id),
      ['guest'],
    );
    assert.deepEqual(picture.files, {}, 'the script waits for the transcription');
    const [first, second] = [captionPixels(await frameRgb(file, 0.25)), captionPixels(await frameRgb(file, 0.75))];
    assert.ok(first.gold.length > 20 && second.gold.length > 20, 'a word is lit each time');
    assert.ok(meanX(first.gold) < meanX(first.white), '"one" is lit first');
    assert.ok(meanX(second.gold) > meanX(second.white), 'then "two"');
    assert.equal(await bright(file, 1.05), 0, 'nothing before the guest says a word');
    assert.ok((await bright(file, 1.3)) > 50, "the guest's word at 1.3 s");
    assert.equal(await bright(file, 1.7), 0, 'nothing once it is said');
  });
});
