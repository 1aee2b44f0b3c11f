// @ts-check
/**
 * mediaflow-plugin-thumbnail: one frame of a video, at a time code, as a JPEG, PNG or WebP picture.
 *
 * A third-party operation plugin. It uses mediaflow only through its public entry ('mediaflow'),
 * as any plugin outside the repository does, and gets what a built-in gets: `POST /thumbnail/`
 * with validation, `mediaflow thumbnail` with `--help`, a place in pipelines (`op: thumbnail`)
 * and an entry in `/openapi.json`. Load it with `MEDIAFLOW_PLUGINS=mediaflow-plugin-thumbnail`.
 */
import { argv, CONTRACT_VERSION, definePlugin, mediaError, Optional, Param, Type } from 'mediaflow';

/** Picture formats, and the options that write exactly one picture in each. */
const FORMATS = /** @type {const} */ (['jpg', 'png', 'webp']);
const ENCODE = {
  jpg: ['-c:v', 'mjpeg', '-q:v', '2', '-pix_fmt', 'yuvj420p'],
  png: ['-c:v', 'png', '-pix_fmt', 'rgb24'],
  webp: ['-c:v', 'libwebp', '-quality', '90'],
};

/** Seconds (`12.5`) or `[HH:]MM:SS[.fraction]` (`01:02.5`, `00:01:02.5`). */
const TIME_CODE = '^(\\d{1,6}(\\.\\d{1,6})?|(\\d{1,2}:)?[0-5]?\\d:[0-5]?\\d(\\.\\d{1,6})?)$';

/**
 * A time code in seconds.
 * @param {string} time a value the TIME_CODE pattern accepted
 */
export function toSeconds(time) {
  return time.split(':').reduce((total, part) => total * 60 + Number(part), 0);
}

export default definePlugin({
  // The plugin contract this plugin is written against; mediaflow refuses an incompatible one at load.
  contract: CONTRACT_VERSION,
  name: 'thumbnail',
  path: '/thumbnail/',
  summary: 'Take one frame of a video, at a time code, as a picture',
  description:
    'The frame shown at `time` is written as a JPEG, PNG or WebP picture, at the size of the video or `width` ' +
    'pixels wide (the height follows the aspect ratio). A time at or past the end of the video is refused with a 422.',
  params: Type.Object({
    video_url: Param.url('video', 'Direct URL of the video'),
    time: Param.text({
      description: 'A time code: seconds (12.5) or [HH:]MM:SS[.fraction] (00:01:02.5)',
      maxLength: 20,
      default: '0',
      pattern: TIME_CODE,
    }),
    width: Optional(
      Param.integer({
        minimum: 16,
        maximum: 7680,
        description: 'Width of the picture in pixels (default: the width of the video)',
      }),
    ),
    format: Param.format(FORMATS, { default: 'jpg', description: 'Picture format' }),
  }),
  output: (p) => ({ field: 'output_file', path: `{id}_thumbnail.${p.format}` }),

  // Runs once the input is downloaded and probed, before build: an unusable request becomes a 422.
  check: ({ params, inputs }) => {
    const duration = inputs.video_url?.[0]?.facts.duration;
    const seconds = toSeconds(params.time);
    if (duration !== undefined && seconds >= duration) {
      throw mediaError(`Time ${params.time} is past the end of the video (${duration.toFixed(2)} s)`);
    }
  },

  // Pure: from params and the probed input to an ffmpeg argv. mediaflow runs it, in a workspace of its own.
  build: ({ params, inputs, output, input }) => {
    const video = /** @type {import('mediaflow').LocalInput} */ (inputs.video_url?.[0]);
    return argv(
      // Before the input: seek in the demuxer (fast), then decode exactly to the time.
      ['-ss', String(toSeconds(params.time))],
      input(video),
      ['-map', '0:v:0', '-frames:v', '1'],
      // Square pixels at the display size; -2 keeps the height even, which JPEG's 4:2:0 needs.
      [
        '-vf',
        params.width
          ? `scale=${params.width}:-2:flags=lanczos,setsar=1`
          : 'scale=trunc(iw*sar/2)*2:trunc(ih/2)*2,setsar=1',
      ],
      ENCODE[params.format],
      ['-update', '1', '-f', 'image2', output],
    );
  },
  message: (p) => `Thumbnail taken at ${p.time} successfully`,
});
