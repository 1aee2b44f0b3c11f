import assert from 'node:assert/strict';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from '../../helpers/lifecycle.js';
import { fixture } from '../../helpers/fixtures.js';
import { audioOf, beepAt, durationOf, pcm, probe, toneLevel } from '../../helpers/media.js';
import { countingClip } from '../../helpers/timed-media.js';
import { resolveBinaries } from '../../../src/engine/exec/binaries.js';
import { inputArgs } from '../../../src/engine/exec/input-policy.js';
import type { LocalInput } from '../../../src/engine/contract/plugin.js';
import { probeFile } from '../../../src/engine/probe/probe.js';
import { DUCK } from '../../../src/plugins/render/ducking.js';
import { InputList } from '../../../src/plugins/render/input-list.js';
import { SOUND_LABEL, soundAlone, soundGraph } from '../../../src/plugins/render/sound.js';
import type { AudioClip, Clip, Timeline, VideoClip, VoiceClip } from '../../../src/plugins/render/timeline.js';

/**
 * The render's sound, rendered by the real ffmpeg from timelines built by hand over real, probed media: tones at
 * known frequencies, each measured (Goertzel) only where its clip is, and a video whose beep tells its time.
 */

let scratch: string;
/** Each fixture's name in the scratch folder, probed as the engine probes an input. */
const media: Record<string, LocalInput> = {};

/** lavfi sounds: a frequency's sine at 0.5 of full scale on each of `channels`. */
function tone(hz: number | string, seconds: number, rate: number, channels = 1): string[] {
  const sine = `0.5*sin(2*PI*${hz}*t)`;
  return ['-f', 'lavfi', '-i', `aevalsrc='${Array(channels).fill(sine).join('|')}':s=${rate}:d=${seconds}`];
}

const SOURCES: Record<string, readonly string[]> = {
  // mono at 22.05 kHz: brought to 48 kHz stereo, at its own level on both sides
  'a440.wav': [...tone(440, 1, 22050), '-c:a', 'pcm_s16le'],
  'b660.mp3': [...tone(660, 1, 44100, 2), '-c:a', 'libmp3lame', '-q:a', '4'],
  // 550 Hz for a second, then 770 Hz: tells where a trim cut
  'switch.wav': [...tone('if(lt(t,1),550,770)', 2, 44100), '-c:a', 'pcm_s16le'],
  'music330.mp3': [...tone(330, 1, 44100, 2), '-c:a', 'libmp3lame', '-q:a', '4'],
  'bed880.wav': [...tone(880, 1, 48000, 2), '-c:a', 'pcm_s16le'],
  'voice1000.wav': [...tone(1000, 1, 24000), '-c:a', 'pcm_s16le'],
  // a video whose sound starts 0.5 s after its picture
  'late.mp4': [
    ...['-f', 'lavfi', '-i', 'color=c=black:s=64x64:r=25:d=2', '-itsoffset', '0.5'],
    ...tone(1000, 1.5, 48000),
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac'],
  ],
};

async function probed(name: string): Promise<LocalInput> {
  const facts = await probeFile(resolveBinaries().ffprobe, name, { cwd: scratch, timeoutMs: 30_000 });
  return { file: name, source: `https://example.test/${name}`, facts };
}

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-render-sound-'));
  for (const [name, args] of Object.entries(SOURCES))
    await execa('ffmpeg', ['-v', 'error', '-nostdin', ...args, path.join(scratch, name)]);
  // 1 kHz beeps from 1.0 to 1.4 s of its clock, silence around them.
  await countingClip(path.join(scratch, 'beep.mp4'), { seconds: 2, flashAt: 1 });
  for (const name of ['clip-2s-640x360-25fps.mp4', 'clip-3s-640x360-25fps.mp4', 'clip-1s-320x240-30fps-silent.mp4'])
    await symlink(await fixture(name), path.join(scratch, name));
  for (const name of [...Object.keys(SOURCES), 'beep.mp4', 'clip-2s-640x360-25fps.mp4', 'clip-3s-640x360-25fps.mp4'])
    media[name] = await probed(name);
  media.silent = await probed('clip-1s-320x240-30fps-silent.mp4');
}, 120_000);

after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const base = (start: number, end: number) => ({ track: 0, index: 0, path: 'tracks[0].clips[0]', start, end });

function audio(name: string, start: number, end: number, more: Partial<AudioClip> = {}): AudioClip {
  return {
    ...base(start, end),
    type: 'audio',
    media: media[name]!,
    trim: 0,
    volume: 0,
    loop: false,
    fadeIn: 0,
    fadeOut: 0,
    role: 'music',
    duck: false,
    ...more,
  };
}

function video(name: string, start: number, end: number, more: Partial<VideoClip> = {}): VideoClip {
  return {
    ...base(start, end),
    type: 'video',
    media: media[name]!,
    trim: 0,
    speed: 1,
    volume: 0,
    layout: { fit: 'cover' },
    ...more,
  };
}

const voice = (name: string, start: number, end: number): VoiceClip => ({
  ...base(start, end),
  type: 'voice',
  text: 'hello',
  voice: 'flite:slt',
  speed: 1,
  volume: 0,
  media: media[name]!,
  words: [],
});

const timeline = (duration: number, clips: Clip[]): Timeline => ({
  output: { format: 'mp4', width: 64, height: 64, fps: 25, quality: 'fast', background: '#000000', duration },
  clips,
  merge: {},
});

const open = (input: LocalInput) => inputArgs(input, 'media');

type Levels = (hz: number, from: number, to: number) => number;

/**
 * A file's tones: a frequency's level in dB between two times, read from its sound decoded once (16 kHz, both channels
 * summed at -3 dB each): OWN for the fixtures' 0.5 of full scale on both sides.
 */
async function tones(file: string): Promise<Levels> {
  const samples = await pcm(file, 0, durationOf(await probe(file)));
  return (hz, from, to) =>
    20 * Math.log10(toneLevel(samples.subarray(Math.round(from * 16000), Math.round(to * 16000)), hz));
}

/** Renders the timeline's sound alone into a WAV file (as a render in parts does), checks its decode, reads it. */
async function render(name: string, edit: Timeline): Promise<{ file: string; level: Levels }> {
  const sound = soundAlone(edit, open, ['-c:a', 'pcm_f32le'], `${name}.graph`);
  assert.ok(sound, 'the timeline has sound');
  await writeFile(path.join(scratch, sound.script), sound.graph);
  const file = `${name}.wav`;
  await execa('ffmpeg', ['-v', 'error', '-nostdin', '-y', ...sound.command(file)], { cwd: scratch });
  const { stderr } = await execa('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-'], { cwd: scratch });
  assert.equal(stderr, '', 'a clean decode');
  return { file: path.join(scratch, file), level: await tones(path.join(scratch, file)) };
}

/** How long a file's sound is, in samples at 48 kHz, and its format. */
async function shapeOf(file: string): Promise<{ samples: number; rate: string; channels: number }> {
  const info = await probe(file);
  const stream = audioOf(info)!;
  return { samples: Math.round(durationOf(info) * 48000), rate: stream.sample_rate!, channels: stream.channels! };
}

const OWN = -3;
const PRESENT = OWN - 1.5;
const ABSENT = -40;

describe('render sound', () => {
  it('places each clip at its start, heard only within its time, at its own level, as long as the output', async () => {
    const { file, level } = await render(
      'placed',
      timeline(4, [audio('a440.wav', 0.5, 1.5), { ...audio('b660.mp3', 2, 3), track: 1 }]),
    );
    assert.deepEqual(await shapeOf(file), { samples: 4 * 48000, rate: '48000', channels: 2 });
    // The mono tone is heard at its own level on both sides, not 3 dB down on each.
    assert.ok(Math.abs(level(440, 0.6, 1.4) - OWN) < 0.3);
    assert.ok(level(660, 2.1, 2.9) > PRESENT);
    for (const [from, to] of [
      [0, 0.45],
      [1.55, 3.95],
    ] as const)
      assert.ok(level(440, from, to) < ABSENT, `no 440 Hz from ${from} to ${to}`);
    for (const [from, to] of [
      [0, 1.95],
      [3.05, 4],
    ] as const)
      assert.ok(level(660, from, to) < ABSENT, `no 660 Hz from ${from} to ${to}`);
    // To the sample (a sine at 0.5 passes 0.1 four samples in).
    assert.ok(Math.abs((await beepAt(file)) - 0.5) < 0.0002, `starts at ${await beepAt(file)}`);
  });

  it('skips the trimmed seconds and pads a media shorter than its clip with silence', async () => {
    // From 0.75 s into the switch: 550 Hz for 0.25 s, then 770 Hz until the media ends at 1.25 s; the clip lasts 2.
    const { file, level } = await render('trimmed', timeline(2.5, [audio('switch.wav', 0.25, 2.25, { trim: 0.75 })]));
    assert.equal((await shapeOf(file)).samples, 2.5 * 48000);
    assert.ok(level(550, 0.27, 0.47) > PRESENT);
    assert.ok(level(770, 0.27, 0.47) < ABSENT);
    assert.ok(level(770, 0.53, 1.48) > PRESENT);
    assert.ok(level(550, 0.53, 1.48) < ABSENT);
    assert.ok(level(770, 1.52, 2.5) < ABSENT, 'silence after the media');
    assert.ok(level(550, 0, 0.23) < ABSENT, 'silence before the clip');
  });

  it('loops a media over its whole clip, without gaps, and stops at its end', async () => {
    const { file, level } = await render('looped', timeline(4.5, [audio('music330.mp3', 0.5, 4, { loop: true })]));
    for (let from = 0.55; from < 3.9; from += 0.1) {
      const db = level(330, from, from + 0.1);
      assert.ok(db > PRESENT, `330 Hz at ${db.toFixed(1)} dB from ${from.toFixed(2)} s`);
    }
    assert.ok(level(330, 4.02, 4.5) < ABSENT);
    assert.equal((await shapeOf(file)).samples, 4.5 * 48000);
  });

  it('fades in from the clip start and out to the end of its sound', async () => {
    const { level } = await render(
      'faded',
      timeline(3, [audio('music330.mp3', 0, 3, { loop: true, fadeIn: 1, fadeOut: 1 })]),
    );
    const at = (t: number) => level(330, t - 0.05, t + 0.05);
    const full = at(1.5);
    assert.ok(Math.abs(full - OWN) < 0.5);
    const rising = [at(0.25), at(0.5), at(0.75)];
    const falling = [at(2.25), at(2.5), at(2.75)];
    assert.ok(rising[0]! < rising[1]! && rising[1]! < rising[2]! && rising[2]! < full, rising.join(' '));
    assert.ok(falling[0]! > falling[1]! && falling[1]! > falling[2]!, falling.join(' '));
    // Linear: half way through, half the amplitude.
    assert.ok(Math.abs(rising[1]! - full + 6) < 1, `half way in: ${rising[1]! - full} dB`);
    assert.ok(Math.abs(falling[1]! - full + 6) < 1, `half way out: ${falling[1]! - full} dB`);
  });

  it('sets each clip to its own volume in dB and sums them with no normalisation', async () => {
    const { level } = await render(
      'volumes',
      timeline(3, [
        audio('a440.wav', 0, 1),
        { ...audio('b660.mp3', 0, 1, { volume: 3 }), track: 1 },
        { ...audio('a440.wav', 2, 3, { volume: -9 }), index: 1 },
      ]),
    );
    const loud = level(440, 0.1, 0.9);
    // Each at its own level although both sound: not halved by the mix.
    assert.ok(Math.abs(loud - OWN) < 0.3, `440 Hz at ${loud} dB`);
    assert.ok(Math.abs(level(660, 0.1, 0.9) - OWN - 3) < 0.3);
    const quiet = level(440, 2.1, 2.9);
    assert.ok(Math.abs(loud - quiet - 9) < 0.3, `${loud - quiet} dB apart`);
  });

  it('ducks music with duck by at least 6 dB while a voice sounds, and no other music', async () => {
    const { level } = await render(
      'ducked',
      timeline(7, [
        audio('music330.mp3', 0, 7, { loop: true, duck: true }),
        { ...audio('bed880.wav', 0, 7, { loop: true }), track: 1 },
        { ...voice('voice1000.wav', 2, 3), track: 2 },
        // A recorded voice 0.3 s after the first: the music stays down between them.
        { ...audio('voice1000.wav', 3.3, 4.3, { role: 'voice' }), track: 2, index: 1 },
      ]),
    );
    const before = level(330, 0.2, 1.6);
    const after = level(330, 5.2, 6.8);
    assert.ok(Math.abs(before - OWN) < 0.5 && Math.abs(after - OWN) < 0.5, `${before} ${after}`);
    for (const [from, to] of [
      [2.05, 2.95],
      [2.95, 3.35],
      [3.35, 4.25],
    ] as const) {
      const dipped = level(330, from, to);
      assert.ok(before - dipped >= 6, `down ${before - dipped} dB from ${from} to ${to}`);
      assert.ok(Math.abs(before - dipped - DUCK.depthDb) < 0.5, `down ${before - dipped} dB, not ${DUCK.depthDb}`);
    }
    assert.ok(level(1000, 2.1, 4.2) > PRESENT, 'the voices are heard');
    // The music without duck keeps its level under the voices.
    assert.ok(Math.abs(level(880, 2.1, 4.2) - level(880, 0.2, 1.6)) < 0.3);
  });

  it('ducks under every voice of a long narration, and comes back up between them', async () => {
    // 30 voices of 0.3 s, 1.5 s apart: more than one volume filter's worth of spans.
    const starts = Array.from({ length: 30 }, (_, i) => 0.5 + i * 1.5);
    const { level } = await render(
      'narration',
      timeline(46, [
        audio('music330.mp3', 0, 46, { loop: true, duck: true }),
        ...starts.map((start, i) => ({ ...voice('voice1000.wav', start, start + 0.3), track: 1, index: i })),
      ]),
    );
    for (const start of starts) {
      const dip = OWN - level(330, start + 0.05, start + 0.25);
      const between = OWN - level(330, start + 0.9, start + 1.2);
      assert.ok(Math.abs(dip - DUCK.depthDb) < 0.5, `down ${dip} dB under the voice at ${start} s`);
      assert.ok(Math.abs(between) < 0.5, `down ${between} dB after the voice at ${start} s`);
    }
  });

  it("keeps a video's sound in step with its picture at any speed, from its trim", async () => {
    // The beep is at 1.0 s of the video's clock: (1.0 - trim) / speed into the clip.
    for (const [speed, trim, start, at] of [
      [2, 0, 1, 1.5],
      [0.5, 0.5, 0, 1],
      [4, 0, 0.2, 0.45],
    ] as const) {
      const clipEnd = start + (2 - trim) / speed;
      const { file, level } = await render(
        `speed-${speed}`,
        timeline(clipEnd + 0.2, [video('beep.mp4', start, clipEnd, { speed, trim })]),
      );
      const heard = await beepAt(file);
      assert.ok(Math.abs(heard - at) < 0.02, `at speed ${speed}, the beep at ${heard} s, not ${at}`);
      assert.ok(level(1000, at + 0.02, at + 0.38 / speed) > -3, `at speed ${speed}, the beep's pitch`);
      assert.equal((await shapeOf(file)).samples, Math.round((clipEnd + 0.2) * 48000));
    }
  });

  it("keeps a media's own clock: a sound that starts after its picture starts as late", async () => {
    const { file } = await render('late', timeline(3, [video('late.mp4', 1, 3, { trim: 0.2 })]));
    const heard = await beepAt(file);
    assert.ok(Math.abs(heard - 1.3) < 0.002, `the sound starts at ${heard} s, not 1.3`);
  });

  it('crosses two video clips’ sounds over their transition', async () => {
    const { level } = await render(
      'crossed',
      timeline(4.5, [
        video('clip-2s-640x360-25fps.mp4', 0, 2),
        { ...video('clip-3s-640x360-25fps.mp4', 1.5, 4.5), index: 1, transition: { type: 'fade', duration: 0.5 } },
      ]),
    );
    const full440 = level(440, 0.5, 1.4);
    const early = [level(440, 1.55, 1.65), level(660, 1.55, 1.65)];
    const late = [level(440, 1.85, 1.95), level(660, 1.85, 1.95)];
    assert.ok(early[0]! > early[1]! + 6 && late[1]! > late[0]! + 6, `${early.join(' ')} / ${late.join(' ')}`);
    assert.ok(early[0]! < full440, 'the first has begun to fade');
    assert.ok(level(440, 2.05, 4.5) < ABSENT);
    assert.ok(Math.abs(level(660, 2.1, 4.4) - full440) < 1, 'the second at its full level');
  });

  it('hears nothing of a muted video, nor of a video without sound', async () => {
    const silent = timeline(2, [
      video('clip-2s-640x360-25fps.mp4', 0, 2, { volume: 'mute' }),
      { ...video('silent', 0, 1), index: 1 },
    ]);
    assert.equal(soundGraph(silent, new InputList(open)), undefined);
    assert.equal(soundAlone(silent, open, []), undefined);
    const both = { ...silent, clips: [...silent.clips, { ...video('clip-3s-640x360-25fps.mp4', 0, 2), track: 1 }] };
    const { level } = await render('muted', both);
    assert.ok(level(440, 0.1, 1.9) < ABSENT);
    // The fixture's sine is lavfi's, at an eighth of full scale, made stereo 3 dB down on each side: -18 dB here.
    const heard = level(660, 0.1, 1.9);
    assert.ok(Math.abs(heard + 18) < 0.5, `660 Hz at ${heard} dB`);
    // A gif has no sound at all.
    assert.equal(soundGraph({ ...both, output: { ...both.output, format: 'gif' } }, new InputList(open)), undefined);
  });

  it('refuses an audio clip whose media has no sound', () => {
    const clip = { ...audio('a440.wav', 0, 1), media: media.silent! };
    assert.throws(() => soundGraph(timeline(1, [clip]), new InputList(open)), /has no audio stream/);
  });

  it("joins the picture's graph in one script and one encode, both from 0 and as long as the output", async () => {
    const inputs = new InputList(open);
    const drawn = `color=c=black:s=64x64:r=25:d=3[vout]`;
    const heard = soundGraph(timeline(3, [audio('a440.wav', 1, 2), video('beep.mp4', 0, 2)]), inputs)!;
    await writeFile(path.join(scratch, 'joined.graph'), `${drawn};\n${heard}`);
    await execa(
      'ffmpeg',
      [
        ...['-v', 'error', '-nostdin', '-y', ...inputs.args(), '-filter_complex_script', 'joined.graph'],
        ...['-map', '[vout]', '-map', `[${SOUND_LABEL}]`, '-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac'],
        'joined.mp4',
      ],
      { cwd: scratch },
    );
    const { stdout } = await execa('ffprobe', [
      ...['-v', 'error', '-show_entries', 'stream=codec_type,start_time,duration,sample_rate,channels'],
      ...['-of', 'json', path.join(scratch, 'joined.mp4')],
    ]);
    const streams = (JSON.parse(stdout) as { streams: Array<Record<string, string | number>> }).streams;
    const [picture, sound] = ['video', 'audio'].map((type) => streams.find((stream) => stream.codec_type === type)!);
    assert.equal(Number(picture!.start_time), 0);
    assert.equal(Number(sound!.start_time), 0);
    assert.equal(Number(picture!.duration), 3);
    // AAC ends on a whole frame of 1,024 samples.
    assert.ok(Math.abs(Number(sound!.duration) - 3) < 1024 / 48000, `the sound lasts ${sound!.duration} s`);
    assert.equal(sound!.sample_rate, '48000');
    assert.equal(sound!.channels, 2);
  });

  it("reads each clip's sound from an input of its own, a looped one with the demuxer's loop", () => {
    const inputs = new InputList(open);
    const shown = video('clip-2s-640x360-25fps.mp4', 0, 2);
    const picture = inputs.indexOf(shown.media);
    const graph = soundGraph(
      timeline(4, [
        shown,
        { ...audio('music330.mp3', 0, 4, { loop: true }), track: 1 },
        { ...audio('music330.mp3', 2, 3), track: 2 },
      ]),
      inputs,
    )!;
    const read = [...graph.matchAll(/\[(\d+):a:0\]/g)].map((match) => Number(match[1]));
    assert.deepEqual(
      read.sort((a, b) => a - b),
      [1, 2, 3],
    );
    const args = inputs.args();
    assert.equal(args.filter((arg) => arg === '-i').length, 4);
    assert.equal(args.filter((arg) => arg === '-stream_loop').length, 1);
    // The looped one is the second input: after the picture's and the video's sound.
    const loop = args.indexOf('-stream_loop');
    assert.equal(args[loop + 1], '-1');
    assert.equal(args.slice(0, loop).filter((arg) => arg === '-i').length, 2);
    assert.equal(picture, 0);
    assert.ok(graph.endsWith(`[${SOUND_LABEL}]`));
  });

  it('writes nothing from the document into the graph: only numbers, filters and generated labels', () => {
    const hostile = "x'];[0:v]drawtext=text=pwned;[a],";
    const evil = (clip: Clip): Clip => ({ ...clip, id: hostile, path: hostile });
    const edit = timeline(8, [
      evil({ ...audio('music330.mp3', 0, 8, { loop: true, duck: true, fadeIn: 1, fadeOut: 2, volume: -4.5 }) }),
      evil({ ...voice('voice1000.wav', 1, 2), text: hostile, voice: hostile, track: 1 }),
      evil({ ...video('beep.mp4', 2, 3, { speed: 2, trim: 0.25, volume: 2 }), track: 2 }),
      evil({ ...audio('switch.wav', 3, 5, { trim: 0.5, role: 'voice' }), track: 3 }),
    ]);
    edit.merge = { TITLE: hostile };
    for (const clip of edit.clips) if ('media' in clip) clip.media = { ...clip.media, source: hostile, file: hostile };
    const graph = soundGraph(edit, new InputList(open))!;
    assert.ok(!graph.includes('pwned'));
    const labels = graph.match(/\[[^\]]*\]/g)!;
    for (const label of labels) assert.match(label, /^\[(\d+:a:0|snd\d+|sndlane\d+|aout)\]$/);
    const words = graph
      .replace(/\[[^\]]*\]/g, ' ')
      .split(/[\s;,:=|'()*+/-]+/)
      .filter(Boolean);
    const allowed = new Set(
      (
        'pan stereo c0 c1 aresample async first_pts asetpts N SR TB PTS STARTPTS aformat sample_fmts fltp ' +
        'channel_layouts atrim start_pts end_pts end_sample adelay delays S all atempo apad whole_len volume dB ' +
        'afade t in out ss ns asetnsamples n p eval frame enable between clip pow amix inputs duration longest ' +
        'normalize concat v a'
      ).split(' '),
    );
    for (const word of words)
      assert.ok(allowed.has(word) || /^\d+(\.\d+)?(S|dB)?$/.test(word), `"${word}" in the graph:\n${graph}`);
  });
});
