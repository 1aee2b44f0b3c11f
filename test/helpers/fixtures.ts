import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

/** Fixtures are made with ffmpeg's lavfi sources at test time, cached per machine, never committed. */
export const FIXTURE_DIR = path.join(os.tmpdir(), 'mediaflow-test-fixtures-v1');

/** Each fixture: the ffmpeg arguments that make it (output name appended), or literal text. */
const RECIPES: Record<string, string[] | { text: string }> = {
  // audio
  'tone-2s-44k-stereo.mp3': [
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=2:sample_rate=44100',
    '-ac',
    '2',
    '-c:a',
    'libmp3lame',
    '-q:a',
    '4',
  ],
  'tone-3s-44k-stereo.mp3': [
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=550:duration=3:sample_rate=44100',
    '-ac',
    '2',
    '-c:a',
    'libmp3lame',
    '-q:a',
    '4',
  ],
  'tone-1s-22k-mono.wav': [
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=660:duration=1:sample_rate=22050',
    '-ac',
    '1',
    '-c:a',
    'pcm_s16le',
  ],
  // 22 MB: uploads that fill a small disk (disk-full.test.ts).
  'tone-125s-44k-stereo.wav': [
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=330:duration=125:sample_rate=44100',
    '-ac',
    '2',
    '-c:a',
    'pcm_s16le',
  ],
  'tone-1s-48k-stereo.m4a': [
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=330:duration=1:sample_rate=48000',
    '-ac',
    '2',
    '-c:a',
    'aac',
    '-b:a',
    '96k',
  ],
  'tone-2s-48k-stereo.aac': [
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=880:duration=2:sample_rate=48000',
    '-ac',
    '2',
    '-c:a',
    'aac',
    '-b:a',
    '96k',
    '-f',
    'adts',
  ],
  'tone-5s-44k-stereo.mp3': [
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=220:duration=5:sample_rate=44100',
    '-ac',
    '2',
    '-c:a',
    'libmp3lame',
    '-q:a',
    '4',
  ],
  // video
  'clip-2s-640x360-25fps.mp4': [
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=640x360:rate=25:duration=2',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=2:sample_rate=48000',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-ac',
    '2',
    '-shortest',
    '-movflags',
    '+faststart',
  ],
  'clip-3s-640x360-25fps.mp4': [
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=640x360:rate=25:duration=3',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=660:duration=3:sample_rate=48000',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-ac',
    '2',
    '-shortest',
    '-movflags',
    '+faststart',
  ],
  'clip-1s-320x240-30fps-silent.mp4': [
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=320x240:rate=30:duration=1',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
  ],
  'clip-2s-480x270-black.mp4': [
    '-f',
    'lavfi',
    '-i',
    'color=c=black:size=480x270:rate=25:duration=2',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=2:sample_rate=44100',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
  ],
  // a black, silent picture long enough for one subtitle cue per second in each script tested
  'black-8s-640x360-silent.mp4': [
    '-f',
    'lavfi',
    '-i',
    'color=c=black:size=640x360:rate=10:duration=8',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
  ],
  'clip-2s-320x240.webm': [
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=320x240:rate=25:duration=2',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=2:sample_rate=48000',
    '-c:v',
    'libvpx-vp9',
    '-deadline',
    'realtime',
    '-cpu-used',
    '8',
    '-c:a',
    'libopus',
    '-shortest',
  ],
  // odd width and height (testsrc is RGB, so the size is kept), VP9/Opus
  'clip-1s-321x241-odd.webm': [
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=321x241:rate=25:duration=1',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=1:sample_rate=48000',
    '-c:v',
    'libvpx-vp9',
    '-deadline',
    'realtime',
    '-cpu-used',
    '8',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'libopus',
    '-shortest',
  ],
  // 1 s of picture, 3 s of sound (770 Hz): the container lasts as long as the sound
  'clip-1s-320x240-long-sound.mp4': [
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=320x240:rate=25:duration=1',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=770:duration=3:sample_rate=48000',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-ac',
    '2',
  ],
  // clip-3s-640x360-25fps.mp4's twin with another video track timescale (90000, not 12800)
  'clip-3s-640x360-25fps-90k.mp4': [
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=640x360:rate=25:duration=3',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=660:duration=3:sample_rate=48000',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-ac',
    '2',
    '-shortest',
    '-video_track_timescale',
    '90000',
  ],
  // images
  'landscape-1920x1080.jpg': ['-f', 'lavfi', '-i', 'testsrc2=size=1920x1080', '-frames:v', '1', '-q:v', '3'],
  'portrait-1080x1920.jpg': ['-f', 'lavfi', '-i', 'testsrc2=size=1080x1920', '-frames:v', '1', '-q:v', '3'],
  'small-300x200.png': ['-f', 'lavfi', '-i', 'testsrc=size=300x200', '-frames:v', '1'],
  'red-alpha-400x300.png': ['-f', 'lavfi', '-i', 'color=c=red@0.0:size=400x300,format=rgba', '-frames:v', '1'],
  'white-800x600.png': ['-f', 'lavfi', '-i', 'color=c=white:size=800x600', '-frames:v', '1'],
  'blue-640x480.webp': ['-f', 'lavfi', '-i', 'color=c=blue:size=640x480', '-frames:v', '1', '-c:v', 'libwebp'],
  // images for the image operations: solid colours and marks that decoded pixels can be checked against
  'red-640x360.jpg': ['-f', 'lavfi', '-i', 'color=c=red:size=640x360', '-frames:v', '1', '-q:v', '2'],
  'green-360x640.png': ['-f', 'lavfi', '-i', 'color=c=0x00ff00:size=360x640', '-frames:v', '1'],
  // odd sizes need an RGB source format (lavfi's yuv420p rounds them down to even)
  'yellow-333x251.jpg': [
    '-f',
    'lavfi',
    '-i',
    'color=c=yellow:size=333x251,format=rgb24,format=yuvj420p',
    '-frames:v',
    '1',
    '-q:v',
    '2',
  ],
  'white-100x400.png': ['-f', 'lavfi', '-i', 'color=c=white:size=100x400', '-frames:v', '1'],
  // grey, a blue band on the left, a green band on the right, a red square at the centre
  'mark-1920x1080.jpg': [
    '-f',
    'lavfi',
    '-i',
    'color=c=0x808080:size=1920x1080,drawbox=x=0:y=0:w=100:h=1080:color=blue:t=fill,drawbox=x=1820:y=0:w=100:' +
      'h=1080:color=green:t=fill,drawbox=x=910:y=490:w=100:h=100:color=red:t=fill',
    '-frames:v',
    '1',
    '-q:v',
    '2',
  ],
  // grey, a blue band at the top, a green band at the bottom, a red square at the centre
  'mark-800x2400.png': [
    '-f',
    'lavfi',
    '-i',
    'color=c=0x808080:size=800x2400,drawbox=x=0:y=0:w=800:h=150:color=blue:t=fill,drawbox=x=0:y=2250:w=800:' +
      'h=150:color=green:t=fill,drawbox=x=350:y=1150:w=100:h=100:color=red:t=fill',
    '-frames:v',
    '1',
  ],
  // fully transparent red, with an opaque white 200x200 square at the centre
  'alpha-box-1080x1920.png': [
    '-f',
    'lavfi',
    '-i',
    "color=c=black@0:size=1080x1920,format=rgba,geq=r='255':g='255*between(X,440,639)*between(Y,860,1059)':" +
      "b='255*between(X,440,639)*between(Y,860,1059)':a='255*between(X,440,639)*between(Y,860,1059)'",
    '-frames:v',
    '1',
  ],
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
