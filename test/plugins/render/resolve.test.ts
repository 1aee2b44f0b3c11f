import assert from 'node:assert/strict';
import { describe, it } from '../../helpers/lifecycle.js';
import type { LocalInput } from '../../../src/engine/contract/plugin.js';
import type { MediaFacts } from '../../../src/engine/contract/media-facts.js';
import { MediaflowError } from '../../../src/engine/errors.js';
import { timelineView } from '../../../src/plugins/render/dry-run.js';
import {
  documentProblems,
  mediaSources,
  resolve,
  srcOf,
  type Limits,
  type MediaOf,
} from '../../../src/plugins/render/resolve.js';
import type { EditDocument } from '../../../src/plugins/render/schema.js';

/** Media as the probe describes them, without ffmpeg: the resolver reads only their facts. */
const VIDEO: MediaFacts = {
  formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
  duration: 6,
  isImage: false,
  video: { codec: 'h264', width: 640, height: 360, fps: 25, pixFmt: 'yuv420p' },
  audio: { codec: 'aac', sampleRate: 48000, channels: 2 },
};
const PICTURE: MediaFacts = {
  formatName: 'png_pipe',
  isImage: true,
  video: { codec: 'png', width: 300, height: 200, fps: 25, pixFmt: 'rgb24' },
};
const MUSIC: MediaFacts = {
  formatName: 'mp3',
  duration: 4,
  isImage: false,
  audio: { codec: 'mp3', sampleRate: 44100, channels: 2 },
};
const SUBTITLES: MediaFacts = { formatName: 'srt', duration: 9, isImage: false, subtitle: { codec: 'subrip' } };
const ASS =
  '[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n' +
  'Dialogue: 0,0:00:00.50,0:00:02.00,Default,,0,0,0,,One\nDialogue: 0,0:00:02.00,0:00:03.25,Default,,0,0,0,,Two\n';

const FACTS: Record<string, MediaFacts> = {
  'video.mp4': VIDEO,
  'a.png': PICTURE,
  'b.png': PICTURE,
  'music.mp3': MUSIC,
  'subs.srt': SUBTITLES,
};

/** Each clip's media, by its src, as the builder finds them among its inputs. */
const media: MediaOf = (placed) => {
  const src = srcOf(placed.clip);
  if (src === undefined || !FACTS[src]) return undefined;
  const input: LocalInput = { file: `in-${src}`, source: src, facts: FACTS[src]! };
  return src.endsWith('.srt') ? { ...input, ass: ASS } : input;
};

const LIMITS: Limits = { maxDuration: 3600, maxPixels: 100_000_000, maxInputs: 50, maxClips: 200 };

const doc = (tracks: unknown[], extra: Record<string, unknown> = {}) => ({ tracks, ...extra }) as EditDocument;

/** The problems `resolve` refuses a document with, as path and error. */
function refused(document: EditDocument, limits: Limits = LIMITS): Array<[string, string]> {
  try {
    resolve(document, {}, media, limits);
  } catch (error) {
    assert.ok(error instanceof MediaflowError && error.status === 400, String(error));
    return error.errors!.map((problem) => [problem.path, problem.error]);
  }
  assert.fail('the document was resolved');
}

/** The start and end of every clip, in the timeline's order. */
const times = (document: EditDocument) =>
  resolve(document, {}, media, LIMITS).clips.map((clip) => [clip.path, clip.start, clip.end]);

describe('resolve: auto starts and durations', () => {
  it('starts a clip where the one before it on its track ends, and lasts as long as its media', () => {
    const document = doc([
      {
        clips: [
          { type: 'image', src: 'a.png', duration: 2 },
          { type: 'video', src: 'video.mp4' },
          { type: 'video', src: 'video.mp4', trim: 1, speed: 2 },
          { type: 'image', src: 'b.png', duration: '00:01.5' },
        ],
      },
      { clips: [{ type: 'audio', src: 'music.mp3', start: 1, trim: '0.5' }] },
    ]);
    assert.deepEqual(times(document), [
      ['tracks[0].clips[0]', 0, 2],
      ['tracks[0].clips[1]', 2, 8],
      // (6 - 1) s of media at twice the speed.
      ['tracks[0].clips[2]', 8, 10.5],
      ['tracks[0].clips[3]', 10.5, 12],
      ['tracks[1].clips[0]', 1, 4.5],
    ]);
    assert.equal(resolve(document, {}, media, LIMITS).output.duration, 12, 'the end of the last clip');
  });

  it('overlaps a clip with the one before it by its transition: two 2 s pictures with a 0.5 s fade last 3.5 s', () => {
    const document = doc([
      {
        clips: [
          { type: 'image', src: 'a.png', duration: 2 },
          { type: 'image', src: 'b.png', duration: 2, transition: { type: 'fade', duration: 0.5 } },
          { type: 'video', src: 'video.mp4', duration: 1, transition: { type: 'wipeleft' } },
        ],
      },
    ]);
    assert.deepEqual(times(document), [
      ['tracks[0].clips[0]', 0, 2],
      ['tracks[0].clips[1]', 1.5, 3.5],
      ['tracks[0].clips[2]', 3, 4],
    ]);
    const [, second, third] = resolve(document, {}, media, LIMITS).clips;
    assert.deepEqual(second?.type === 'image' && second.transition, { type: 'fade', duration: 0.5 });
    assert.deepEqual(third?.type === 'video' && third.transition, { type: 'wipeleft', duration: 0.5 });
    // A start of its own that keeps the overlap is taken too.
    const given = doc([
      {
        clips: [
          { type: 'image', src: 'a.png', duration: 2 },
          { type: 'image', src: 'b.png', duration: 2, start: 1.5, transition: { type: 'fade' } },
        ],
      },
    ]);
    assert.deepEqual(times(given)[1], ['tracks[0].clips[1]', 1.5, 3.5]);
  });

  it('loops a sound to its given duration, and starts captions and waveforms with the clip they follow', () => {
    const document = doc([
      {
        clips: [
          { type: 'image', src: 'a.png', duration: 3 },
          { id: 'talk', type: 'video', src: 'video.mp4' },
        ],
      },
      { clips: [{ type: 'audio', src: 'music.mp3', loop: true, duration: 10 }] },
      { clips: [{ type: 'captions', from: 'talk' }] },
      { clips: [{ type: 'waveform', from: 'talk', start: 4 }] },
      { clips: [{ type: 'captions', src: 'subs.srt', start: 2 }] },
    ]);
    assert.deepEqual(times(document), [
      ['tracks[0].clips[0]', 0, 3],
      ['tracks[0].clips[1]', 3, 9],
      ['tracks[1].clips[0]', 0, 10],
      ['tracks[2].clips[0]', 3, 9],
      ['tracks[3].clips[0]', 4, 9],
      // The subtitles' last cue ends at 3.25 s of their own clock.
      ['tracks[4].clips[0]', 2, 5.25],
    ]);
    const timeline = resolve(document, {}, media, LIMITS);
    assert.equal(timeline.output.duration, 10);
    const music = timeline.clips.find((clip) => clip.type === 'audio')!;
    assert.deepEqual(music.type === 'audio' && [music.loop, music.trim, music.volume, music.role, music.duck], [
      true,
      0,
      0,
      'music',
      false,
    ]);
    const captions = timeline.clips.filter((clip) => clip.type === 'captions');
    assert.deepEqual(
      captions.map(
        (clip) => clip.type === 'captions' && ('from' in clip.source ? clip.source.from : clip.source.subtitles.source),
      ),
      ['talk', 'subs.srt'],
    );
  });

  it('orders each track by time, and takes the output and the layout with their defaults', () => {
    const document = doc(
      [
        {
          clips: [
            { type: 'image', src: 'b.png', duration: 1, start: 5, fit: 'contain-blur' },
            { type: 'image', src: 'a.png', duration: 1, start: 0, position: 'top-left', opacity: 0.5 },
          ],
        },
        { clips: [{ type: 'text', text: 'Hi', duration: 1, color: '#FF0000', position: 'top' }] },
      ],
      { output: { width: 640, height: 360, fps: 25, background: '#102030', duration: 8 } },
    );
    const timeline = resolve(document, { TITLE: 'x' }, media, LIMITS);
    assert.deepEqual(timeline.output, {
      format: 'mp4',
      width: 640,
      height: 360,
      fps: 25,
      quality: 'balanced',
      background: '#102030',
      duration: 8,
    });
    assert.deepEqual(timeline.merge, { TITLE: 'x' });
    const [overlay, filled, text] = timeline.clips;
    assert.equal(overlay!.path, 'tracks[0].clips[1]');
    assert.deepEqual(overlay?.type === 'image' && overlay.layout, {
      overlay: { position: 'top-left', width: 0.15, opacity: 0.5, margin: 0.03 },
    });
    assert.deepEqual(filled?.type === 'image' && [filled.layout, filled.motion], [{ fit: 'contain-blur' }, 'none']);
    assert.deepEqual(text?.type === 'text' && [text.text, text.style], ['Hi', { color: '#FF0000', position: 'top' }]);
  });
});

describe('resolve: what is refused, with its path', () => {
  it("clips of one track that overlap, other than by the later one's transition", () => {
    assert.deepEqual(
      refused(
        doc([
          {
            clips: [
              { type: 'image', src: 'a.png', duration: 4 },
              { type: 'image', src: 'b.png', duration: 2, start: 3 },
              { type: 'image', src: 'a.png', duration: 2, start: 4.6, transition: { type: 'fade', duration: 0.5 } },
            ],
          },
          {
            clips: [
              { type: 'audio', src: 'music.mp3' },
              { type: 'audio', src: 'music.mp3', start: 1 },
            ],
          },
        ]),
      ),
      [
        [
          'tracks[0].clips[2].start',
          'with its 0.5 s transition the clip starts 0.5 s before the end of tracks[0].clips[1], at 4.5 s (or give ' +
            '`start: auto`)',
        ],
        [
          'tracks[0].clips[1].start',
          'the clip (3 s to 5 s) overlaps tracks[0].clips[0] (0 s to 4 s) on its track: clips of one track meet ' +
            'only by a transition; put one on another track',
        ],
      ],
    );
  });

  it('times past the end of the media, a transition longer than a clip, and a clip of no length', () => {
    assert.deepEqual(
      refused(
        doc([
          { clips: [{ type: 'video', src: 'video.mp4', trim: 7 }] },
          { clips: [{ type: 'video', src: 'video.mp4', trim: 2, speed: 2, duration: 3 }] },
          { clips: [{ type: 'audio', src: 'music.mp3', duration: 5 }] },
          { clips: [{ type: 'audio', src: 'music.mp3', duration: 50, loop: true }] },
          {
            clips: [
              { type: 'image', src: 'a.png', duration: 1 },
              { type: 'image', src: 'b.png', duration: 3, transition: { type: 'fade', duration: 2 } },
            ],
          },
          { clips: [{ type: 'text', text: 'x', duration: 0 }] },
        ]),
      ),
      [
        ['tracks[0].clips[0].trim', 'is 7 s, past the end of the media, which lasts 6 s'],
        [
          'tracks[1].clips[0].duration',
          'lasts 3 s, past the end of the media: it has 4 s after `trim`, 2 s at its speed',
        ],
        ['tracks[2].clips[0].duration', 'lasts 5 s, past the end of the media: it has 4 s after `trim`'],
        ['tracks[4].clips[1].transition.duration', 'is 2 s, longer than the clip before it (1 s)'],
        ['tracks[5].clips[0].duration', 'a clip lasts more than 0 s'],
      ],
    );
  });

  it('a from naming no clip or a silent kind, a transition with nothing before it, ids used twice, a cycle', () => {
    const document = doc([
      {
        clips: [
          { type: 'image', src: 'a.png', duration: 1, id: 'pic', transition: { type: 'fade' } },
          { type: 'text', text: 'x', duration: 1, id: 'pic' },
        ],
      },
      { clips: [{ type: 'captions', from: 'nobody' }] },
      { clips: [{ type: 'waveform', from: 'pic' }] },
      {
        clips: [
          { type: 'captions', from: 'late' },
          { type: 'audio', id: 'late', src: 'music.mp3' },
        ],
      },
      {
        clips: [
          { type: 'captions', src: 'subs.srt', from: 'late' },
          { type: 'audio', src: 'music.mp3', loop: true },
        ],
      },
      { clips: [{ type: 'image', src: 'b.png', duration: 1, width: 0.2 }] },
    ]);
    const expected: Array<[string, string]> = [
      ['tracks[0].clips[1].id', "the id 'pic' is already tracks[0].clips[0]'s: an id names one clip"],
      ['tracks[0].clips[0].transition', 'a transition needs a video or image clip before it on its track'],
      ['tracks[1].clips[0].from', "no clip has the id 'nobody'"],
      [
        'tracks[2].clips[0].from',
        "'pic' is tracks[0].clips[0], an image clip: waveform clips follow an audio, voice or video clip",
      ],
      ['tracks[4].clips[0].from', 'give `src` or `from`, not both'],
      ['tracks[4].clips[1].duration', 'missing: a looping clip needs it (it repeats until then)'],
      ['tracks[5].clips[0].width', 'an overlay field: give `position` too, or leave it out'],
      ['tracks[3].clips[0].start', 'its start depends on its own end (through `from` and `start: auto`)'],
    ];
    assert.deepEqual(refused(document), expected);
    // All of them are seen in the document alone, before any media is fetched.
    assert.deepEqual(
      documentProblems(document, LIMITS).map((problem) => [problem.path, problem.error]),
      expected,
    );
  });

  it('the limits: clips, media files, pixels and length, from the document alone where it says them', () => {
    const many = doc(
      [
        {
          clips: [
            { type: 'image', src: 'a.png', duration: 2 },
            { type: 'image', src: 'b.png', duration: 2 },
            { type: 'video', src: 'video.mp4' },
          ],
        },
      ],
      { output: { width: 4096, height: 4096 } },
    );
    const limits = { maxClips: 2, maxInputs: 2, maxPixels: 1920 * 1080, maxDuration: 3 };
    assert.deepEqual(
      documentProblems(many, limits).map((problem) => [problem.path, problem.error]),
      [
        ['tracks', '3 clips, more than the limit of 2 (MEDIAFLOW_MAX_CLIPS)'],
        ['tracks', '3 different media files, more than the limit of 2 (MEDIAFLOW_MAX_INPUTS)'],
        ['output', '4096x4096 is 16777216 pixels a frame, more than the limit of 2073600 (MEDIAFLOW_MAX_PIXELS)'],
        // The video's length is not known yet; the pictures alone pass the limit.
        ['tracks', 'the timeline lasts 4 s, more than the limit of 3 s (MEDIAFLOW_MAX_DURATION)'],
      ],
    );
    // Once probed, the video's 6 s count.
    const long = doc([{ clips: [{ type: 'video', src: 'video.mp4' }] }]);
    assert.deepEqual(documentProblems(long, { ...LIMITS, maxDuration: 5 }), []);
    assert.deepEqual(refused(long, { ...LIMITS, maxDuration: 5 }), [
      ['tracks', 'the timeline lasts 6 s, more than the limit of 5 s (MEDIAFLOW_MAX_DURATION)'],
    ]);
    // Each speech is an input too; voice clips that say the same share one.
    const spoken = doc([
      { clips: [{ type: 'image', src: 'a.png', duration: 1 }] },
      {
        clips: [
          { type: 'voice', text: 'Hello.' },
          { type: 'voice', text: 'Hello.' },
          { type: 'voice', text: 'Hello.', voice: 'flite:slt' },
        ],
      },
    ]);
    assert.deepEqual(
      documentProblems(spoken, { ...LIMITS, maxInputs: 2 }).map((problem) => [problem.path, problem.error]),
      [['tracks', '3 different media files and speeches, more than the limit of 2 (MEDIAFLOW_MAX_INPUTS)']],
    );
    // Lines of words are for captions made from speech; a subtitle file keeps its own.
    const lines = doc([{ clips: [{ type: 'captions', src: 'subs.srt', words_per_line: 3 }] }]);
    assert.deepEqual(
      documentProblems(lines, LIMITS).map((problem) => problem.path),
      ['tracks[0].clips[0].words_per_line'],
    );
    const stated = doc([{ clips: [{ type: 'image', src: 'a.png', duration: 1 }] }], { output: { duration: 7 } });
    assert.deepEqual(
      documentProblems(stated, { ...LIMITS, maxDuration: 5 }).map((problem) => problem.path),
      ['output.duration'],
    );
  });

  it('a time the document alone cannot tell is no problem before the media are probed', () => {
    const document = doc([
      {
        clips: [
          { type: 'video', src: 'video.mp4' },
          { type: 'image', src: 'a.png', duration: 30, start: 5 },
        ],
      },
    ]);
    // 6 s of video overlap the picture at 5 s: known only once the video is probed.
    assert.deepEqual(documentProblems(document, LIMITS), []);
    assert.equal(refused(document)[0]![0], 'tracks[0].clips[1].start');
  });
});

describe('the media a document names', () => {
  it('lists each file once, with the kind its clips need, and refuses one used as subtitles and as media', () => {
    const { sources, problems } = mediaSources(
      doc([
        {
          clips: [
            { type: 'video', src: 'video.mp4' },
            { type: 'image', src: 'a.png', duration: 1 },
            { type: 'image', src: 'a.png', duration: 1 },
            { type: 'image', src: 'odd', duration: 1 },
          ],
        },
        {
          clips: [
            { type: 'audio', src: 'video.mp4' },
            { type: 'audio', src: 'music.mp3' },
            { type: 'video', src: 'odd' },
          ],
        },
        {
          clips: [
            { type: 'captions', src: 'subs.srt' },
            { type: 'captions', src: 'music.mp3' },
          ],
        },
      ]),
    );
    assert.deepEqual(sources, [
      { src: 'video.mp4', kind: 'video' },
      { src: 'a.png', kind: 'image' },
      { src: 'odd', kind: 'media' },
      { src: 'music.mp3', kind: 'audio' },
      { src: 'subs.srt', kind: 'subtitle' },
    ]);
    assert.deepEqual(problems, [
      { path: 'tracks[2].clips[1].src', error: 'this file is used as subtitles and as media: one file is one of them' },
    ]);
  });
});

describe('the dry run', () => {
  it('answers the timeline as docs/render.md shows it', () => {
    const timeline = resolve(
      doc([
        {
          clips: [
            { type: 'image', src: 'a.png', duration: 2.0004, id: 'first' },
            { type: 'video', src: 'video.mp4', duration: 1 },
          ],
        },
        {
          clips: [
            { type: 'text', text: 'Hi', duration: 1 },
            { type: 'captions', src: 'subs.srt' },
          ],
        },
      ]),
      { TITLE: 'Hi' },
      media,
      LIMITS,
    );
    assert.deepEqual(timelineView(timeline), {
      duration: 4.25,
      width: 1080,
      height: 1920,
      fps: 30,
      clips: [
        {
          track: 0,
          index: 0,
          id: 'first',
          type: 'image',
          start: 0,
          end: 2,
          src: 'a.png',
          facts: { duration: null, image: true, video: { width: 300, height: 200, fps: 25 } },
        },
        {
          track: 0,
          index: 1,
          id: null,
          type: 'video',
          start: 2,
          end: 3,
          src: 'video.mp4',
          facts: {
            duration: 6,
            image: false,
            video: { width: 640, height: 360, fps: 25 },
            audio: { sample_rate: 48000, channels: 2 },
          },
        },
        { track: 1, index: 0, id: null, type: 'text', start: 0, end: 1, src: null, facts: null },
        {
          track: 1,
          index: 1,
          id: null,
          type: 'captions',
          start: 1,
          end: 4.25,
          src: 'subs.srt',
          facts: { duration: 9, image: false, subtitles: true },
        },
      ],
      merge: { TITLE: 'Hi' },
    });
  });
});
