import assert from 'node:assert/strict';
import { describe, it } from '../helpers/lifecycle.js';
import type { FanoutPart, LocalInput, Plan, PluginDefinition } from '../../src/engine/contract/plugin.js';
import type { MediaFacts } from '../../src/engine/contract/media-facts.js';
import addSubtitles from '../../src/plugins/add-subtitles.js';
import addText from '../../src/plugins/add-text.js';
import overlayImage from '../../src/plugins/overlay-image.js';

/** A probed 10-minute H.264/AAC MP4, as the builders see it. */
const VIDEO: MediaFacts = {
  formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
  duration: 600,
  isImage: false,
  video: { codec: 'h264', width: 640, height: 360, fps: 25, pixFmt: 'yuv420p' },
  audio: { codec: 'aac', sampleRate: 48000, channels: 2 },
};
const PNG: MediaFacts = {
  formatName: 'png_pipe',
  isImage: true,
  video: { codec: 'png', width: 100, height: 100, fps: 0, pixFmt: 'rgba' },
};

/** The second part of a split, as the engine hands it to `FanoutSpec.video`. */
const PART: FanoutPart = {
  seek: ['-ss', '60.000000'],
  start: 60,
  shift: 'setpts=PTS+60.000000/TB',
  reset: 'setpts=PTS-STARTPTS',
  frames: ['-frames:v', '1500', '-fps_mode', 'passthrough'],
  output: 'fanout-part-001.mp4',
};

const inputs = {
  video_url: [{ file: 'in0.mp4', source: 'clip', facts: VIDEO }],
  subtitle_url: [{ file: 'in1.srt', source: 'subs', facts: { formatName: 'srt', isImage: false }, ass: '' }],
  image_url: [{ file: 'in2.png', source: 'logo', facts: PNG }],
};

/** Each plugin, the params of a layer from 59 to 61 s (across the join at 60), and its filter that reads time. */
const CASES: Array<[PluginDefinition, Record<string, unknown>, RegExp]> = [
  [addSubtitles as unknown as PluginDefinition, { format: 'mp4' }, /ass=filename=subtitles\.ass/],
  [addText as unknown as PluginDefinition, { text: 'TITLE', start: 59, end: 61 }, /ass=filename=text\.ass/],
  [overlayImage as unknown as PluginDefinition, { start: 59, end: 61 }, /overlay=x='if\(between\(t,59,61\),/],
];

const build = (plugin: PluginDefinition, params: Record<string, unknown>, format?: string, fanout = true) =>
  plugin.build({
    params: {
      quality: 'balanced',
      position: 'top-right',
      width: 0.15,
      opacity: 1,
      margin: 0.03,
      ...params,
      fanout,
      ...(format ? { format } : {}),
    },
    inputs,
    output: 'out.mp4',
    outputs: ['out.mp4'],
    input: (input: LocalInput) => ['-i', input.file],
  }) as Plan;

describe('the layer operations plan their encode in parts', () => {
  for (const [plugin, params, timed] of CASES) {
    it(`${plugin.name}: a part puts its frames on the input's clock before the timed filter, then resets`, () => {
      const plan = build(plugin, params);
      assert.ok(plan.fanout, 'an mp4 output has a fan-out');
      const command = plan.fanout.video(PART);
      // The seek is the video's, first; the part writes its frames alone into an mp4.
      assert.deepEqual(command.slice(0, 4), ['-ss', '60.000000', '-i', 'in0.mp4']);
      assert.deepEqual(command.slice(-10), [...PART.frames, '-an', '-sn', '-dn', '-f', 'mp4', PART.output]);
      const graph = command[command.findIndex((arg) => arg === '-vf' || arg === '-filter_complex') + 1]!;
      const at = (pattern: RegExp) => graph.search(pattern);
      assert.ok(at(/setpts=PTS\+60\.000000\/TB/) >= 0, `the part's frames are shifted: ${graph}`);
      assert.ok(at(timed) > at(/setpts=PTS\+60\.000000\/TB/), `the timed filter after the shift: ${graph}`);
      assert.ok(graph.replace(/\[v\]$/, '').endsWith(`,${PART.reset}`), `the chain ends with the reset: ${graph}`);
      // The sound is one command of its own, whole, copied as the one pass copies it.
      assert.deepEqual(plan.fanout.audio!('fanout-audio.m4a').slice(-3), ['-c:a', 'copy', 'fanout-audio.m4a']);
      assert.equal(plan.fanout.audioExtension, '.m4a');
    });

    it(`${plugin.name}: webm (VP9), avi (MPEG-4) and fanout=false run in one pass`, () => {
      for (const format of ['webm', 'avi']) assert.equal(build(plugin, params, format).fanout, undefined, format);
      assert.equal(build(plugin, params, 'mp4', false).fanout, undefined, 'fanout=false');
      assert.ok(build(plugin, params, 'mkv').fanout, 'mkv is H.264 too');
    });
  }

  it('writes the sound into .m4a when it is AAC, and into Matroska (.mka) when it is another codec', () => {
    const mp3 = { ...VIDEO, audio: { codec: 'mp3', sampleRate: 44100, channels: 2 } };
    const plan = addText.build({
      params: { text: 'TITLE', start: 0, quality: 'balanced', fanout: true } as never,
      inputs: { video_url: [{ file: 'in0.mp4', source: 'clip', facts: mp3 }] },
      output: 'out.mp4',
      outputs: ['out.mp4'],
      input: (input: LocalInput) => ['-i', input.file],
    }) as Plan;
    // MP4 takes MP3 as it is: copied, into a file that holds it.
    assert.deepEqual(plan.fanout!.audio!('fanout-audio.mka').slice(-3), ['-c:a', 'copy', 'fanout-audio.mka']);
    assert.equal(plan.fanout!.audioExtension, '.mka');
  });

  it('add-subtitles: the parts read the script its step restyles, wherever they run', () => {
    assert.deepEqual(build(addSubtitles as unknown as PluginDefinition, {}, 'mp4').fanout!.reads, ['subtitles.ass']);
  });

  it('overlay-image: every part reads the whole logo, after the video', () => {
    const command = build(overlayImage as unknown as PluginDefinition, { start: 59, end: 61 }).fanout!.video(PART);
    assert.deepEqual(command.slice(0, 6), ['-ss', '60.000000', '-i', 'in0.mp4', '-i', 'in2.png']);
  });
});
