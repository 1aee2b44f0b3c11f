import assert from 'node:assert/strict';
import { describe, it } from '../helpers/lifecycle.js';
import type { LocalInput, Plan } from '../../src/engine/contract/plugin.js';
import type { MediaFacts } from '../../src/engine/contract/media-facts.js';
import cutMedia from '../../src/plugins/cut-media.js';
import splitMedia from '../../src/plugins/split-media.js';

/** A probed 10 s H.264/AAC MP4 at 25 fps, or its sound alone as an MP3, as the builders see them. */
const VIDEO: MediaFacts = {
  formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
  duration: 10,
  isImage: false,
  video: { codec: 'h264', width: 160, height: 120, fps: 25, pixFmt: 'yuv420p' },
  audio: { codec: 'aac', sampleRate: 48000, channels: 1 },
};
const SOUND: MediaFacts = { formatName: 'mp3', duration: 10, isImage: false, audio: VIDEO.audio! };

const media = (facts: MediaFacts): LocalInput => ({ file: 'in0.mp4', source: 'clip', facts });
const context = <P>(params: P, facts: MediaFacts, outputs = ['output.mp4']) => ({
  params,
  inputs: { media_url: [media(facts)] },
  output: outputs[0]!,
  outputs,
  input: (input: LocalInput) => ['-i', input.file],
});
/** A keyframe listing's log as showinfo writes it. */
const listed = (times: number[]) =>
  times.map((t) => `[Parsed_showinfo_0 @ 0x1] n: 0 pts: 0 pts_time:${t} pos: 1 fmt:yuv420p iskey:1 type:I`).join('\n');
/** Each `-ss`/`-to` pair of a command's inputs, as [start, end] (end undefined: to the input's end). */
const spans = (command: string[]) =>
  command.flatMap((arg, i) => {
    if (arg !== '-i' || command[i + 1] !== 'in0.mp4') return [];
    const before = command.slice(Math.max(0, i - 4), i);
    const at = (flag: string) => (before.includes(flag) ? Number(before[before.indexOf(flag) + 1]) : undefined);
    return [[at('-ss') ?? 0, at('-to')]];
  });

describe('cut-media plans', () => {
  const cut = (remove: Array<[number, number]>, facts = VIDEO) =>
    cutMedia.build(
      context(
        {
          media_url: 'clip',
          remove: remove.map(([start, end]) => ({ start, end })),
          quality: 'balanced',
          fanout: true,
        },
        facts,
      ),
    ) as Plan;

  it('merges overlapping and touching ranges, lists the keyframes near the cuts, then copies on them', () => {
    const first = cut([
      [3, 4],
      [1, 2],
      [2, 3.5],
    ]);
    // The cuts are at 1 and 4 s: the listing spans them, half a frame either side, and expects up to its end.
    assert.deepEqual(first.commands[0]!.slice(first.commands[0]!.indexOf('-ss'), -8).slice(0, 4), [
      '-ss',
      '0.980000',
      '-t',
      '3.040000',
    ]);
    assert.equal(first.expectedSeconds, 4.02);
    const copied = first.next!([listed([0, 1, 2, 3, 4])]) as Plan;
    assert.equal(copied.files!['pieces.txt'], "file 'piece_001.mp4'\nfile 'piece_003.mp4'\n");
    assert.equal(copied.expectedSeconds, 7);
    assert.ok(copied.commands[0]!.includes('-segment_times'));
    assert.deepEqual(spans(copied.commands[1]!), [
      [0, 1],
      [4, undefined],
    ]);
  });

  it('re-encodes when a cut is off a keyframe, each cut moved to the next frame edge', () => {
    const encoded = cut([[2.3, 4.5]]).next!([listed([0, 2, 4])]) as Plan;
    assert.equal(encoded.commands.length, 1);
    assert.deepEqual(spans(encoded.commands[0]!), [
      [0, 2.32],
      [4.52, undefined],
    ]);
    assert.ok(encoded.commands[0]!.some((arg) => arg.startsWith('[0:v:0][0:a:0][1:v:0][1:a:0]concat=n=2:v=1:a=1')));
  });

  it('cuts sound alone at the times given, in one stage', () => {
    const plan = cut([[2.3, 4.5]], SOUND);
    assert.equal(plan.next, undefined);
    assert.deepEqual(spans(plan.commands[0]!), [
      [0, 2.3],
      [4.5, undefined],
    ]);
  });
});

describe('split-media plans', () => {
  const params = (fields: { every?: number; at?: number[]; mode?: 'fast' | 'precise' }) => ({
    media_url: 'clip',
    mode: 'fast' as const,
    quality: 'balanced' as const,
    ...fields,
  });
  const paths = (fields: Parameters<typeof params>[0], facts = VIDEO) => {
    const spec = splitMedia.output(params(fields), { media_url: [facts] });
    return 'files' in spec ? spec.files : [];
  };

  it('counts the parts from the probed duration, the last one what is left', () => {
    assert.deepEqual(paths({ every: 4 }), ['{id}/part_001.mp4', '{id}/part_002.mp4', '{id}/part_003.mp4']);
    assert.equal(paths({ every: 2.5 }).length, 4);
    assert.equal(paths({ every: 20 }).length, 1);
    assert.deepEqual(paths({ at: [7, 3, 7] }, SOUND), ['{id}/part_001.mp3', '{id}/part_002.mp3', '{id}/part_003.mp3']);
  });

  it('answers precise starts at frame edges, and fast ones at the keyframes listed', () => {
    const outputs = ['output-1.mp4', 'output-2.mp4', 'output-3.mp4'];
    const precise = splitMedia.build(context(params({ at: [2.5, 7], mode: 'precise' }), VIDEO, outputs)) as Plan;
    assert.deepEqual(precise.answers, { starts: [0, 2.52, 7] });
    assert.equal(precise.commands[0]!.at(-1), 'output-%d.mp4');
    const fast = splitMedia.build(context(params({ at: [2.5, 7] }), VIDEO, outputs)) as Plan;
    assert.deepEqual((fast.next!([listed([0, 2, 4, 6, 8])]) as Plan).answers, { starts: [0, 4, 8] });
  });
});
