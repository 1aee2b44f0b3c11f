import { resolveBinaries } from '../engine/exec/binaries.js';
import { binaryVersion } from '../engine/exec/ffmpeg.js';
import { VERSION } from '../engine/version.js';
import { fail } from './fail.js';

/**
 * `mediaflow --version`: mediaflow's version and those of the ffmpeg and ffprobe it found. Its own module, so that
 * bin/mediaflow.js can run a bare `--version` without loading the operations and their schemas (docs/cli.md).
 */
export async function printVersions(): Promise<void> {
  try {
    const binaries = resolveBinaries();
    const [ffmpeg, ffprobe] = await Promise.all([binaryVersion(binaries.ffmpeg), binaryVersion(binaries.ffprobe)]);
    process.stdout.write(
      `mediaflow ${VERSION}\n${ffmpeg} (${binaries.ffmpegSource}: ${binaries.ffmpeg})\n${ffprobe} ` +
        `(${binaries.ffprobeSource}: ${binaries.ffprobe})\n`,
    );
  } catch (error) {
    fail(error);
  }
}
