import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { MediaflowError } from './errors.js';

/** The ffmpeg and ffprobe binaries in use, and where each was found. */
export interface Binaries {
  ffmpeg: string;
  ffprobe: string;
  ffmpegSource: string;
  ffprobeSource: string;
}

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
function onPath(name: string, envPath = process.env.PATH ?? ''): string | undefined {
  return envPath
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.join(dir, name))
    .find(isExecutable);
}

/** The binary an npm package ships, when it is installed and its binary really exists. */
function fromPackage(name: 'ffmpeg-static' | 'ffprobe-static'): string | undefined {
  try {
    const exported = require(name) as string | { path?: string };
    const file = typeof exported === 'string' ? exported : exported.path;
    return isExecutable(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

const INSTALL_HINT =
  'Install ffmpeg (Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg) or set FFMPEG_PATH and FFPROBE_PATH.';

/**
 * Finds ffmpeg and ffprobe in CONTRACT.md's order. ffmpeg: FFMPEG_PATH, ffmpeg-static, PATH.
 * ffprobe: FFPROBE_PATH, the ffprobe beside the chosen ffmpeg, ffprobe-static, PATH.
 */
export function resolveBinaries(env: NodeJS.ProcessEnv = process.env): Binaries {
  const candidates: Array<[string | undefined, string]> = [
    [env.FFMPEG_PATH, 'FFMPEG_PATH'],
    [fromPackage('ffmpeg-static'), 'ffmpeg-static'],
    [onPath('ffmpeg', env.PATH), 'PATH'],
  ];
  const ffmpeg = candidates.find(([file]) => isExecutable(file));
  if (!ffmpeg) {
    const hint = env.FFMPEG_PATH ? ` FFMPEG_PATH=${env.FFMPEG_PATH} is not an executable file.` : '';
    throw new MediaflowError('MF_ERR_INTERNAL', `No ffmpeg binary found.${hint} ${INSTALL_HINT}`);
  }
  const beside = path.join(path.dirname(ffmpeg[0]!), 'ffprobe');
  const probeCandidates: Array<[string | undefined, string]> = [
    [env.FFPROBE_PATH, 'FFPROBE_PATH'],
    [beside, 'beside ffmpeg'],
    [fromPackage('ffprobe-static'), 'ffprobe-static'],
    [onPath('ffprobe', env.PATH), 'PATH'],
  ];
  const ffprobe = probeCandidates.find(([file]) => isExecutable(file));
  if (!ffprobe) throw new MediaflowError('MF_ERR_INTERNAL', `No ffprobe binary found. ${INSTALL_HINT}`);
  return { ffmpeg: ffmpeg[0]!, ffmpegSource: ffmpeg[1], ffprobe: ffprobe[0]!, ffprobeSource: ffprobe[1] };
}
