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
  'tone-2s-44k-stereo.mp3': ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=2:sample_rate=44100', '-ac', '2', '-c:a', 'libmp3lame', '-q:a', '4'],
  'tone-3s-44k-stereo.mp3': ['-f', 'lavfi', '-i', 'sine=frequency=550:duration=3:sample_rate=44100', '-ac', '2', '-c:a', 'libmp3lame', '-q:a', '4'],
  'tone-1s-22k-mono.wav': ['-f', 'lavfi', '-i', 'sine=frequency=660:duration=1:sample_rate=22050', '-ac', '1', '-c:a', 'pcm_s16le'],
  'tone-1s-48k-stereo.m4a': ['-f', 'lavfi', '-i', 'sine=frequency=330:duration=1:sample_rate=48000', '-ac', '2', '-c:a', 'aac', '-b:a', '96k'],
  'tone-2s-48k-stereo.aac': ['-f', 'lavfi', '-i', 'sine=frequency=880:duration=2:sample_rate=48000', '-ac', '2', '-c:a', 'aac', '-b:a', '96k', '-f', 'adts'],
  'tone-5s-44k-stereo.mp3': ['-f', 'lavfi', '-i', 'sine=frequency=220:duration=5:sample_rate=44100', '-ac', '2', '-c:a', 'libmp3lame', '-q:a', '4'],
  // video
  'clip-2s-640x360-25fps.mp4': [
    '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=2',
    '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2:sample_rate=48000',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-ac', '2', '-shortest', '-movflags', '+faststart',
  ],
  'clip-3s-640x360-25fps.mp4': [
    '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=3',
    '-f', 'lavfi', '-i', 'sine=frequency=660:duration=3:sample_rate=48000',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-ac', '2', '-shortest', '-movflags', '+faststart',
  ],
  'clip-1s-320x240-30fps-silent.mp4': ['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=30:duration=1', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'],
  'clip-2s-480x270-black.mp4': [
    '-f', 'lavfi', '-i', 'color=c=black:size=480x270:rate=25:duration=2',
    '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2:sample_rate=44100',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest',
  ],
  'clip-2s-320x240.webm': [
    '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25:duration=2',
    '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2:sample_rate=48000',
    '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-c:a', 'libopus', '-shortest',
  ],
  // images
  'landscape-1920x1080.jpg': ['-f', 'lavfi', '-i', 'testsrc2=size=1920x1080', '-frames:v', '1', '-q:v', '3'],
  'portrait-1080x1920.jpg': ['-f', 'lavfi', '-i', 'testsrc2=size=1080x1920', '-frames:v', '1', '-q:v', '3'],
  'small-300x200.png': ['-f', 'lavfi', '-i', 'testsrc=size=300x200', '-frames:v', '1'],
  'red-alpha-400x300.png': ['-f', 'lavfi', '-i', 'color=c=red@0.0:size=400x300,format=rgba', '-frames:v', '1'],
  'white-800x600.png': ['-f', 'lavfi', '-i', 'color=c=white:size=800x600', '-frames:v', '1'],
  'blue-640x480.webp': ['-f', 'lavfi', '-i', 'color=c=blue:size=640x480', '-frames:v', '1', '-c:v', 'libwebp'],
  // subtitles
  'hello.srt': { text: '1\n00:00:00,000 --> 00:00:02,000\nHELLO WORLD HELLO WORLD\n' },
  'hello.vtt': { text: 'WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nHELLO WORLD HELLO WORLD\n' },
  'hello.ass': {
    text: [
      '[Script Info]', 'ScriptType: v4.00+', 'PlayResX: 384', 'PlayResY: 288', '',
      '[V4+ Styles]',
      'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding',
      'Style: Default,DejaVu Sans,36,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2,0,2,10,10,10,1',
      '', '[Events]', 'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
      'Dialogue: 0,0:00:00.00,0:00:02.00,Default,,0,0,0,,HELLO WORLD HELLO WORLD', '',
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
      else await execa('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...recipe, '-f', formatOf(name), temp]);
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
  const muxers: Record<string, string> = { mp3: 'mp3', wav: 'wav', m4a: 'ipod', aac: 'adts', mp4: 'mp4', webm: 'webm', jpg: 'image2', png: 'image2', webp: 'webp' };
  const muxer = muxers[ext];
  if (!muxer) throw new Error(`no muxer for .${ext}`);
  return muxer;
}

/** Makes every named fixture (in a before-all hook, so tests themselves stay quick). */
export async function fixtures(...names: string[]): Promise<void> {
  for (const name of names) await fixture(name);
}
