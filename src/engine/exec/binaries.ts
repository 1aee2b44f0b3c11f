import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { MediaflowError } from '../errors.js';

/** The ffmpeg and ffprobe binaries in use, and where each was found. */
export interface Binaries {
  ffmpeg: string;
  ffprobe: string;
  ffmpegSource: string;
  ffprobeSource: string;
}

/** An ffmpeg and the ffprobe of the same build, from the optional package; undefined when it is not installed. */
export type PackagedPair = () => { ffmpeg: string; ffprobe: string } | undefined;

const require = createRequire(import.meta.url);

function isExecutable(file: string | null | undefined): file is string {
  if (!file) return false;
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `name` on PATH, or undefined. */
function onPath(name: string, envPath = ''): string | undefined {
  return envPath
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.join(dir, name))
    .find(isExecutable);
}

/**
 * `ffmpeg-ffprobe-static`, an optional dependency: one download of an ffmpeg and its own ffprobe.
 * (`ffmpeg-static` ships no ffprobe, and `ffprobe-static` carries a 2018 build: no such mixed pair.)
 */
const ffmpegFfprobeStatic: PackagedPair = () => {
  try {
    const { ffmpegPath, ffprobePath } = require('ffmpeg-ffprobe-static') as {
      ffmpegPath?: string | null;
      ffprobePath?: string | null;
    };
    return isExecutable(ffmpegPath) && isExecutable(ffprobePath)
      ? { ffmpeg: ffmpegPath, ffprobe: ffprobePath }
      : undefined;
  } catch {
    return undefined;
  }
};

const INSTALL_HINT =
  'Install ffmpeg (Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg) or set FFMPEG_PATH and ' +
  'FFPROBE_PATH.';

const missing = (why: string) => new MediaflowError('MF_ERR_INTERNAL', `${why} ${INSTALL_HINT}`);

/**
 * Finds ffmpeg and ffprobe as a pair from one source, in the order docs/deploy.md gives, so that the probe
 * is never of another era than the ffmpeg it serves:
 * 1. `FFMPEG_PATH` (with `FFPROBE_PATH`, or the ffprobe beside it);
 * 2. `ffmpeg` on PATH (with `FFPROBE_PATH`, the ffprobe beside it, or `ffprobe` on PATH);
 * 3. the optional `ffmpeg-ffprobe-static` package, both of its binaries.
 */
export function resolveBinaries(
  env: NodeJS.ProcessEnv = process.env,
  packaged: PackagedPair = ffmpegFfprobeStatic,
): Binaries {
  const probeFor = (ffmpeg: string): [string, string] | undefined => {
    if (env.FFPROBE_PATH) {
      if (!isExecutable(env.FFPROBE_PATH))
        throw missing(`No ffprobe binary found: FFPROBE_PATH=${env.FFPROBE_PATH} is not an executable file.`);
      return [env.FFPROBE_PATH, 'FFPROBE_PATH'];
    }
    const beside = path.join(path.dirname(ffmpeg), path.basename(ffmpeg).replace(/ffmpeg/i, 'ffprobe'));
    return isExecutable(beside) && beside !== ffmpeg ? [beside, 'beside ffmpeg'] : undefined;
  };

  if (env.FFMPEG_PATH) {
    if (!isExecutable(env.FFMPEG_PATH))
      throw missing(`No ffmpeg binary found: FFMPEG_PATH=${env.FFMPEG_PATH} is not an executable file.`);
    const probe = probeFor(env.FFMPEG_PATH);
    if (!probe)
      throw missing(
        `No ffprobe binary found beside FFMPEG_PATH=${env.FFMPEG_PATH}: set FFPROBE_PATH to the ffprobe of ` +
          `the same build.`,
      );
    return { ffmpeg: env.FFMPEG_PATH, ffmpegSource: 'FFMPEG_PATH', ffprobe: probe[0], ffprobeSource: probe[1] };
  }

  const ffmpegOnPath = onPath('ffmpeg', env.PATH);
  if (ffmpegOnPath) {
    const probe =
      probeFor(ffmpegOnPath) ?? (onPath('ffprobe', env.PATH) ? [onPath('ffprobe', env.PATH)!, 'PATH'] : undefined);
    if (probe) return { ffmpeg: ffmpegOnPath, ffmpegSource: 'PATH', ffprobe: probe[0], ffprobeSource: probe[1] };
  }

  const pair = packaged();
  if (pair) return { ...pair, ffmpegSource: 'ffmpeg-ffprobe-static', ffprobeSource: 'ffmpeg-ffprobe-static' };
  throw missing(ffmpegOnPath ? `No ffprobe binary found to go with ${ffmpegOnPath}.` : 'No ffmpeg binary found.');
}
