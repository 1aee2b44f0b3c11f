import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

/** ffmpeg's generated sources as inputs: `-f lavfi -i <source>` for each. */
export const lavfi = (...sources: string[]): string[] => sources.flatMap((source) => ['-f', 'lavfi', '-i', source]);
/** H.264 in yuv420p, which every player takes, written as fast as x264 goes. */
export const H264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
/** VP9 as fast as libvpx goes. */
export const VP9 = ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8'];
/** A sine tone's lavfi source. */
export const sine = (frequency: number, seconds: number, rate: number): string =>
  `sine=frequency=${frequency}:duration=${seconds}:sample_rate=${rate}`;

/** A video of a lavfi picture with a 440 Hz tone, in H.264/AAC, as long as the shorter of the two. */
export const withTone = (picture: string, seconds = 3): string[] => [
  ...lavfi(picture, `sine=frequency=440:duration=${seconds}`),
  ...H264,
  ...['-c:a', 'aac', '-shortest'],
];

const MP3_STEREO = ['-ac', '2', '-c:a', 'libmp3lame', '-q:a', '4'];
const AAC_STEREO = ['-c:a', 'aac', '-ac', '2'];
/** A test pattern with a tone as long, in H.264/AAC, ready to stream (`+faststart`). */
const testClip = (size: string, seconds: number, frequency: number, ...extra: string[]) => [
  ...lavfi(`testsrc2=size=${size}:rate=25:duration=${seconds}`, sine(frequency, seconds, 48000)),
  ...H264,
  ...AAC_STEREO,
  '-shortest',
  ...extra,
];
/** One frame of a lavfi source. */
export const still = (source: string, ...extra: string[]) => [...lavfi(source), '-frames:v', '1', ...extra];

/** Each fixture: the ffmpeg arguments that make it (output name appended), or literal text. */
const RECIPES: Record<string, string[] | { text: string }> = {
  // audio
  'tone-2s-44k-stereo.mp3': [...lavfi(sine(440, 2, 44100)), ...MP3_STEREO],
  'tone-3s-44k-stereo.mp3': [...lavfi(sine(550, 3, 44100)), ...MP3_STEREO],
  'tone-1s-22k-mono.wav': [...lavfi(sine(660, 1, 22050)), '-ac', '1', '-c:a', 'pcm_s16le'],
  // 22 MB: uploads that fill a small disk (disk-full.test.ts).
  'tone-125s-44k-stereo.wav': [...lavfi(sine(330, 125, 44100)), '-ac', '2', '-c:a', 'pcm_s16le'],
  'tone-1s-48k-stereo.m4a': [...lavfi(sine(330, 1, 48000)), '-ac', '2', '-c:a', 'aac', '-b:a', '96k'],
  'tone-2s-48k-stereo.aac': [...lavfi(sine(880, 2, 48000)), '-ac', '2', '-c:a', 'aac', '-b:a', '96k', '-f', 'adts'],
  'tone-5s-44k-stereo.mp3': [...lavfi(sine(220, 5, 44100)), ...MP3_STEREO],
  // video
  'clip-2s-640x360-25fps.mp4': testClip('640x360', 2, 440, '-movflags', '+faststart'),
  'clip-3s-640x360-25fps.mp4': testClip('640x360', 3, 660, '-movflags', '+faststart'),
  'clip-1s-320x240-30fps-silent.mp4': [...lavfi('testsrc=size=320x240:rate=30:duration=1'), ...H264],
  'clip-2s-480x270-black.mp4': [
    ...lavfi('color=c=black:size=480x270:rate=25:duration=2', sine(440, 2, 44100)),
    ...H264,
    ...['-c:a', 'aac', '-shortest'],
  ],
  // a black, silent picture long enough for one subtitle cue per second in each script tested
  'black-8s-640x360-silent.mp4': [...lavfi('color=c=black:size=640x360:rate=10:duration=8'), ...H264],
  'clip-2s-320x240.webm': [
    ...lavfi('testsrc=size=320x240:rate=25:duration=2', sine(440, 2, 48000)),
    ...VP9,
    ...['-c:a', 'libopus', '-shortest'],
  ],
  // odd width and height (testsrc is RGB, so the size is kept), VP9/Opus
  'clip-1s-321x241-odd.webm': [
    ...lavfi('testsrc=size=321x241:rate=25:duration=1', sine(440, 1, 48000)),
    ...VP9,
    ...['-pix_fmt', 'yuv420p', '-c:a', 'libopus', '-shortest'],
  ],
  // 1 s of picture, 3 s of sound (770 Hz): the container lasts as long as the sound
  'clip-1s-320x240-long-sound.mp4': [
    ...lavfi('testsrc2=size=320x240:rate=25:duration=1', sine(770, 3, 48000)),
    ...H264,
    ...AAC_STEREO,
  ],
  // clip-3s-640x360-25fps.mp4's twin with another video track timescale (90000, not 12800)
  'clip-3s-640x360-25fps-90k.mp4': testClip('640x360', 3, 660, '-video_track_timescale', '90000'),
  // images
  'landscape-1920x1080.jpg': still('testsrc2=size=1920x1080', '-q:v', '3'),
  'portrait-1080x1920.jpg': still('testsrc2=size=1080x1920', '-q:v', '3'),
  'small-300x200.png': still('testsrc=size=300x200'),
  'red-alpha-400x300.png': still('color=c=red@0.0:size=400x300,format=rgba'),
  'white-800x600.png': still('color=c=white:size=800x600'),
  'blue-640x480.webp': still('color=c=blue:size=640x480', '-c:v', 'libwebp'),
  // images for the image operations: solid colours and marks that decoded pixels can be checked against
  'red-640x360.jpg': still('color=c=red:size=640x360', '-q:v', '2'),
  'green-360x640.png': still('color=c=0x00ff00:size=360x640'),
  // odd sizes need an RGB source format (lavfi's yuv420p rounds them down to even)
  'yellow-333x251.jpg': still('color=c=yellow:size=333x251,format=rgb24,format=yuvj420p', '-q:v', '2'),
  'white-100x400.png': still('color=c=white:size=100x400'),
  // grey, a blue band on the left, a green band on the right, a red square at the centre
  'mark-1920x1080.jpg': still(
    'color=c=0x808080:size=1920x1080,drawbox=x=0:y=0:w=100:h=1080:color=blue:t=fill,drawbox=x=1820:y=0:w=100:' +
      'h=1080:color=green:t=fill,drawbox=x=910:y=490:w=100:h=100:color=red:t=fill',
    '-q:v',
    '2',
  ),
  // grey, a blue band at the top, a green band at the bottom, a red square at the centre
  'mark-800x2400.png': still(
    'color=c=0x808080:size=800x2400,drawbox=x=0:y=0:w=800:h=150:color=blue:t=fill,drawbox=x=0:y=2250:w=800:' +
      'h=150:color=green:t=fill,drawbox=x=350:y=1150:w=100:h=100:color=red:t=fill',
  ),
  // fully transparent red, with an opaque white 200x200 square at the centre
  'alpha-box-1080x1920.png': still(
    "color=c=black@0:size=1080x1920,format=rgba,geq=r='255':g='255*between(X,440,639)*between(Y,860,1059)':" +
      "b='255*between(X,440,639)*between(Y,860,1059)':a='255*between(X,440,639)*between(Y,860,1059)'",
  ),
  // subtitles
  'hello.srt': { text: '1\n00:00:00,000 --> 00:00:02,000\nHELLO WORLD HELLO WORLD\n' },
  'hello.vtt': { text: 'WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nHELLO WORLD HELLO WORLD\n' },
  'hello.ass': {
    text: [
      '[Script Info]',
      'ScriptType: v4.00+',
      'PlayResX: 384',
      'PlayResY: 288',
      '',
      '[V4+ Styles]',
      'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, ' +
        'Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, ' +
        'MarginL, MarginR, MarginV, Encoding',
      'Style: Default,DejaVu Sans,36,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,' +
        '0,0,0,0,100,100,0,0,1,2,0,2,10,10,10,1',
      '',
      '[Events]',
      'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
      'Dialogue: 0,0:00:00.00,0:00:02.00,Default,,0,0,0,,HELLO WORLD HELLO WORLD',
      '',
    ].join('\n'),
  },
  'not-media.txt': { text: 'this is plainly not a media file\n' },
};

export type FixtureName = keyof typeof RECIPES;

/**
 * Fixtures are made with ffmpeg's lavfi sources at test time, cached per machine, never committed. The folder is
 * named after the recipes, so that a changed recipe is made afresh rather than served from an older run's file.
 */
export const FIXTURE_DIR = path.join(
  os.tmpdir(),
  `mediaflow-test-fixtures-${createHash('sha256').update(JSON.stringify(RECIPES)).digest('hex').slice(0, 12)}`,
);

const pending = new Map<string, Promise<string>>();

/** The path of a fixture, made on first use (safe across parallel test workers: written aside, then renamed). */
export function fixture(name: string): Promise<string> {
  const recipe = RECIPES[name];
  if (!recipe) throw new Error(`No fixture recipe '${name}'`);
  let promise = pending.get(name);
  if (!promise) {
    promise = (async () => {
      const target = path.join(FIXTURE_DIR, name);
      if (existsSync(target)) return target;
      await mkdir(FIXTURE_DIR, { recursive: true });
      const temp = path.join(FIXTURE_DIR, `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}-${name}`);
      if ('text' in recipe) await writeFile(temp, recipe.text);
      else
        await execa('ffmpeg', [
          '-hide_banner',
          '-nostdin',
          '-loglevel',
          'error',
          '-y',
          ...recipe,
          '-f',
          formatOf(name),
          temp,
        ]);
      await rename(temp, target);
      return target;
    })();
    pending.set(name, promise);
  }
  return promise;
}

/** The muxer for a fixture's extension (the temp name hides it from ffmpeg). */
function formatOf(name: string): string {
  const ext = path.extname(name).slice(1);
  const muxers: Record<string, string> = {
    mp3: 'mp3',
    wav: 'wav',
    m4a: 'ipod',
    aac: 'adts',
    mp4: 'mp4',
    webm: 'webm',
    jpg: 'image2',
    png: 'image2',
    webp: 'webp',
  };
  const muxer = muxers[ext];
  if (!muxer) throw new Error(`no muxer for .${ext}`);
  return muxer;
}

/** Makes every named fixture (in a before-all hook, so tests themselves stay quick). */
export async function fixtures(...names: string[]): Promise<void> {
  for (const name of names) await fixture(name);
}
