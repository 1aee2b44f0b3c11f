/**
 * The render benchmark's short (bench/render.ts): its media, made with ffmpeg's lavfi sources and flite once and
 * cached in bench/.cache, and its edit: `pictures` photos shown `seconds` each with a zoom and a fade into each, a
 * voice, music ducked under it, ten captions, a logo and a title, at a 1080x1920 (or RENDER_BENCH_SIZE) frame.
 */
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { CACHE } from './fixtures.js';

/** What the short is made of, as local files. */
export interface ShortMedia {
  photos: string[];
  voice: string;
  music: string;
  captions: string;
  logo: string;
  title: string;
}

/** The short's length: the voice lasts exactly this long, and the pictures fill it. */
export const SHORT_SECONDS = 30;
/** The fade into each picture, in seconds. */
export const FADE = 0.5;
/** The music's level under the voice, in dB (mix-audio's default puts it 18 LU under the voice). */
export const MUSIC_DB = -18;
/** The logo's share of the frame's width, and its margin's (overlay-image's defaults). */
export const LOGO_WIDTH = 0.15;
export const LOGO_MARGIN = 0.03;
/** The title's time on screen, from the start. */
export const TITLE_SECONDS = 3;

/** Ten cues of 2.8 s, one every 3 s. */
const CAPTIONS = Array.from({ length: 10 }, (_, i) => {
  const at = (seconds: number, millis: string) => `00:00:${String(seconds).padStart(2, '0')},${millis}`;
  return `${i + 1}\n${at(i * 3, '000')} --> ${at(i * 3 + 2, '800')}\nThis is caption number ${i + 1} of the short\n`;
}).join('\n');

/** What the voice says: about 30 s of speech. */
const SCRIPT =
  'Welcome to the render benchmark. This short is made of six photographs, each shown for five seconds, ' +
  'zooming in slowly, with a fade from one to the next. A voice speaks over them, and music plays underneath, ' +
  'dipping while the voice is heard. Ten captions follow the speech at the bottom of the frame, a logo sits in ' +
  'the top right corner, and a title opens the short. Everything is encoded once, from one document.';

/** A detailed still, different for each number: a test pattern, a fractal or gradients, with a little grain. */
function photoSource(n: number): string {
  const size = 's=1920x1280';
  // Grain, as a photograph has, in 4:2:0 (gradients draws RGBA, whose alpha the noise would make show).
  const grain = 'format=yuv420p,noise=alls=10:allf=u';
  switch (n % 3) {
    case 0:
      return `testsrc2=${size}:r=25,trim=start_frame=${n * 11}:end_frame=${n * 11 + 1},${grain}`;
    case 1:
      return (
        `mandelbrot=${size}:maxiter=256:start_scale=${(3 / (1 + n * 0.4)).toFixed(3)}:` +
        `start_x=-0.743643887:start_y=0.131825904,${grain}`
      );
    default:
      return `gradients=${size}:nb_colors=5:seed=${n}:x0=100:y0=100:x1=1800:y1=1200,${grain}`;
  }
}

/** Makes `file` in the cache with ffmpeg (once): `args` write it to the path appended. */
async function made(name: string, args: string[] | string): Promise<string> {
  const file = path.join(CACHE, name);
  if (existsSync(file)) return file;
  const temp = path.join(CACHE, `.tmp-${name}`);
  if (typeof args === 'string') await writeFile(temp, args);
  else await execa('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args, temp]);
  await rename(temp, file);
  return file;
}

/** The short's media, with `pictures` photos (made once each and cached). */
export async function shortMedia(pictures: number): Promise<ShortMedia> {
  await mkdir(CACHE, { recursive: true });
  const photos: string[] = [];
  for (let n = 0; n < pictures; n++)
    photos.push(
      await made(`render-photo-${String(n).padStart(2, '0')}.jpg`, [
        ...['-f', 'lavfi', '-i', photoSource(n), '-frames:v', '1', '-q:v', '3', '-f', 'image2'],
      ]),
    );
  const script = await made('render-voice.txt', SCRIPT);
  return {
    photos,
    // Speech by flite, padded with silence or cut to exactly the short's length, as an MP3 of 44.1 kHz mono.
    voice: await made('render-voice.mp3', [
      ...['-f', 'lavfi', '-i', `flite=textfile=${script}:voice=slt`, '-af', 'aresample=44100,apad'],
      ...['-t', String(SHORT_SECONDS), '-ac', '1', '-c:a', 'libmp3lame', '-q:a', '2', '-f', 'mp3'],
    ]),
    // A chord of three notes that swells a little, 12 s, looped under the voice.
    music: await made('render-music.mp3', [
      '-f',
      'lavfi',
      '-i',
      "aevalsrc=exprs='(0.15*sin(2*PI*262*t)+0.12*sin(2*PI*330*t)+0.1*sin(2*PI*392*t))*(0.8+0.2*sin(2*PI*0.25*t))" +
        "|(0.15*sin(2*PI*196*t)+0.12*sin(2*PI*330*t)+0.1*sin(2*PI*392*t))*(0.8+0.2*sin(2*PI*0.25*t))':s=44100:d=12",
      ...['-c:a', 'libmp3lame', '-b:a', '160k', '-f', 'mp3'],
    ]),
    captions: await made('render-captions.srt', CAPTIONS),
    // A red disc and a white bar on transparency.
    logo: await made('render-logo.png', [
      '-f',
      'lavfi',
      '-i',
      'color=c=black@0:s=400x200,format=rgba,' +
        "geq=r='255':g='255*gt(X,210)':b='255*gt(X,210)':" +
        "a='255*max(lt(hypot(X-100,Y-100),90),gt(X,210)*between(Y,70,130))'",
      ...['-frames:v', '1', '-f', 'image2'],
    ]),
    title: 'Episode 12: one edit, one encode',
  };
}

/** The frame and rate of the benchmark's short. */
export interface ShortFrame {
  width: number;
  height: number;
  fps: number;
}

/**
 * The short as one edit document: its photos, each `seconds` on screen (with a zoom in and the fade into it the
 * picture before it stays that much longer, as images-to-video times them), a logo top right, the captions, the title
 * at the top, the voice, and the music looped and ducked under it.
 */
export function shortEdit(media: ShortMedia, frame: ShortFrame, seconds: number, fade = FADE) {
  const last = media.photos.length - 1;
  const pictures = media.photos.map((src, i) => ({
    type: 'image',
    src,
    start: i * seconds,
    duration: seconds + (i < last ? fade : 0),
    fit: 'contain',
    motion: 'zoom-in',
    ...(i > 0 ? { transition: { type: 'fade', duration: fade } } : {}),
  }));
  return {
    // The voice's MP3 lasts a few hundredths more than the short (its encoder's padding): the short is cut at its end.
    output: { width: frame.width, height: frame.height, fps: frame.fps, quality: 'balanced', duration: SHORT_SECONDS },
    tracks: [
      { clips: pictures },
      {
        clips: [
          {
            type: 'image',
            src: media.logo,
            start: 0,
            duration: SHORT_SECONDS,
            position: 'top-right',
            width: LOGO_WIDTH,
            margin: LOGO_MARGIN,
          },
        ],
      },
      { clips: [{ type: 'captions', src: media.captions, start: 0 }] },
      { clips: [{ type: 'text', text: media.title, start: 0, duration: TITLE_SECONDS, position: 'top' }] },
      { clips: [{ type: 'audio', src: media.voice, start: 0, role: 'voice' }] },
      {
        clips: [
          {
            type: 'audio',
            src: media.music,
            start: 0,
            duration: SHORT_SECONDS,
            loop: true,
            duck: true,
            volume: MUSIC_DB,
          },
        ],
      },
    ],
  };
}
