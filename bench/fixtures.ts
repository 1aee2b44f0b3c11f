import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';

/** Benchmark media, made with lavfi once and cached between runs (bench/.cache is not committed). */
export const CACHE = path.resolve(import.meta.dirname, '.cache');

const video = (seconds: number, size: string, freq: number) => [
  '-f',
  'lavfi',
  '-i',
  `testsrc2=size=${size}:rate=30:duration=${seconds}`,
  '-f',
  'lavfi',
  '-i',
  `sine=frequency=${freq}:duration=${seconds}:sample_rate=48000`,
  '-c:v',
  'libx264',
  '-preset',
  'veryfast',
  '-pix_fmt',
  'yuv420p',
  '-c:a',
  'aac',
  '-ac',
  '2',
  '-shortest',
  '-movflags',
  '+faststart',
  '-f',
  'mp4',
];
const tone = (seconds: number, freq: number) => [
  '-f',
  'lavfi',
  '-i',
  `sine=frequency=${freq}:duration=${seconds}:sample_rate=44100`,
  '-ac',
  '2',
  '-c:a',
  'libmp3lame',
  '-b:a',
  '128k',
  '-f',
  'mp3',
];
/** Frame n of a moving test pattern as a 1080p JPEG, so every slide differs. */
const still = (n: number) => [
  '-f',
  'lavfi',
  '-i',
  `testsrc2=size=1920x1080:rate=25`,
  '-vf',
  `select=eq(n\\,${n * 7})`,
  '-frames:v',
  '1',
  '-q:v',
  '3',
  '-f',
  'image2',
];

/** The toolbox's long input: ten minutes of 720p H.264/AAC, a keyframe exactly every 2 s (60 frames at 30 fps). */
const longVideo = (seconds: number) => [
  ...video(seconds, '1280x720', 440).slice(0, -2),
  '-g',
  '60',
  '-keyint_min',
  '60',
  '-sc_threshold',
  '0',
  '-f',
  'mp4',
];

const RECIPES: Record<string, string[] | string> = {
  'long-600s-720p.mp4': longVideo(600),
  'a-30s-720p.mp4': video(30, '1280x720', 440),
  'b-30s-720p.mp4': video(30, '1280x720', 660),
  'c-10s-480p.mp4': video(10, '854x480', 550),
  'intro-30s.mp3': tone(30, 330),
  // A podcast-like body: ten minutes between a short intro and outro.
  'body-600s.mp3': tone(600, 440),
  'outro-30s.mp3': tone(30, 550),
  'voice-30s.mp3': tone(30, 220),
  // A voice-over for mix-audio, as a codec meets one: mono, in the voice band (pink noise from 200 Hz to 3.5 kHz),
  // in syllables (4.3 a second) and phrases of 3 s with pauses of 0.7 s, around -21 LUFS.
  'speech-600s.mp3': [
    '-f',
    'lavfi',
    '-i',
    'anoisesrc=color=pink:r=44100:a=0.5:d=600',
    '-af',
    "highpass=f=200,lowpass=f=3500,volume='2.4*(0.55+0.45*sin(2*PI*4.3*t))*lt(mod(t\\,3.7)\\,3.0)':eval=frame",
    '-ac',
    '1',
    '-c:a',
    'libmp3lame',
    '-q:a',
    '2',
    '-f',
    'mp3',
  ],
  // Music for mix-audio: three minutes of a two-note chord, stereo, to loop under the ten-minute body.
  'music-180s.mp3': [
    '-f',
    'lavfi',
    '-i',
    "aevalsrc=exprs='0.2*sin(2*PI*262*t)+0.2*sin(2*PI*330*t)|0.2*sin(2*PI*392*t)+0.2*sin(2*PI*262*t)':s=44100:d=180",
    '-c:a',
    'libmp3lame',
    '-b:a',
    '128k',
    '-f',
    'mp3',
  ],
  'photo-1080p.jpg': still(0),
  // A logo: half-transparent red, so the overlay blends every pixel it covers.
  'logo-400x200.png': [
    '-f',
    'lavfi',
    '-i',
    'color=c=red@0.5:size=400x200,format=rgba',
    '-frames:v',
    '1',
    '-f',
    'image2',
  ],
  'subs.srt': Array.from(
    { length: 10 },
    (_, i) =>
      `${i + 1}\n00:00:${String(i * 3).padStart(2, '0')},000 --> ` +
      `00:00:${String(i * 3 + 3).padStart(2, '0')},000\nSubtitle line number ${i + 1}\n`,
  ).join('\n'),
};
for (let i = 0; i < 100; i++) RECIPES[`slide-${String(i).padStart(3, '0')}.jpg`] = still(i);

/** Makes (or finds) every benchmark fixture and returns the cache folder. */
export async function ensureFixtures(): Promise<string> {
  await mkdir(CACHE, { recursive: true });
  const missing = Object.entries(RECIPES).filter(([name]) => !existsSync(path.join(CACHE, name)));
  let next = 0;
  // Two at a time: the machine has two cores.
  await Promise.all(
    [0, 1].map(async () => {
      while (next < missing.length) {
        const [name, recipe] = missing[next++]!;
        const temp = path.join(CACHE, `.tmp-${name}`);
        if (typeof recipe === 'string') await writeFile(temp, recipe);
        else await execa('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...recipe, temp]);
        await rename(temp, path.join(CACHE, name));
      }
    }),
  );
  return CACHE;
}
