import {
  argv,
  concatList,
  concatListArgs,
  CONTRACT_VERSION,
  definePlugin,
  even,
  muxerFor,
  Optional,
  Param,
  Type,
  videoEncoder,
  isLargeFrame,
  qualityParam,
  paramError,
  type LocalInput,
  type MediaFacts,
  type Plan,
} from '../sdk.js';
import { motionPieces } from './shared/slideshow-motion.js';
import { flattenOntoBlack, letterbox as fitInto } from './shared/still-image.js';

const FORMATS = ['mp4', 'avi', 'mov', 'mkv', 'webm'] as const;

/** The largest frame a slideshow is made in: 8K UHD, either way round. */
const MAX_FRAME_PIXELS = 7680 * 4320;

/**
 * The frame: width x height when given, else the first image's size, made even and, for a huge
 * first image, scaled down (keeping its shape) to at most 8K's pixel count.
 */
export function frameSize(
  width: number | undefined,
  height: number | undefined,
  firstWidth: number,
  firstHeight: number,
) {
  if (width !== undefined && height !== undefined && width * height > MAX_FRAME_PIXELS) {
    throw paramError(
      `Expected \`width\` x \`height\` to be at most ${MAX_FRAME_PIXELS} pixels (8K), got ${width}x${height}`,
    );
  }
  const w = width ?? firstWidth;
  const h = height ?? firstHeight;
  const shrink = width === undefined || height === undefined ? Math.min(1, Math.sqrt(MAX_FRAME_PIXELS / (w * h))) : 1;
  return { width: even(Math.floor(w * shrink)), height: even(Math.floor(h * shrink)) };
}

/** The facts of an image letterboxed into the frame by mediaflow itself: one Ut Video picture of the frame's size. */
const stillFacts = (width: number, height: number): MediaFacts => ({
  formatName: 'matroska,webm',
  isImage: false,
  video: { codec: 'utvideo', width, height, fps: 25, pixFmt: 'yuv420p' },
});

/** Pixel formats with an alpha channel (rgba, ya8, yuva420p, pal8 may carry it too). */
const hasAlpha = (pixFmt: string) => /a|pal8/.test(pixFmt.replace(/^gray/, 'grey'));

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'images-to-video',
  path: '/images-to-video/',
  summary: 'Slideshow video from images',
  description:
    'Each image is shown for seconds_per_image, letterboxed (never stretched, transparency black) into one ' +
    "frame size: the first image's, made even, or width x height. Constant frame rate, yuv420p. " +
    'motion=zoom zooms slowly into each image; transition=fade cross-fades between them. The length stays ' +
    'seconds_per_image times the number of images.',
  params: Type.Object({
    image_urls: Param.urlList('image', 'Images (JPG, PNG, WebP, ...), shown in this order', {
      tooFew: 'No image URLs provided',
    }),
    seconds_per_image: Param.integer({
      minimum: 1,
      maximum: 3600,
      default: 5,
      description: 'Seconds each image is shown',
    }),
    format: Param.format(FORMATS, { default: 'mp4', description: 'Output video format' }),
    quality: qualityParam(),
    fps: Param.integer({ minimum: 1, maximum: 60, default: 25, description: 'Frames per second of the output' }),
    width: Optional(
      Param.integer({ minimum: 16, maximum: 7680, description: "Frame width (default: the first image's, within 8K)" }),
    ),
    height: Optional(
      Param.integer({
        minimum: 16,
        maximum: 7680,
        description: "Frame height (default: the first image's, within 8K)",
      }),
    ),
    motion: Param.choice(['none', 'zoom'], {
      default: 'none',
      description: 'none: each image stands still; zoom: a slow zoom into each image (Ken Burns)',
    }),
    transition: Param.choice(['none', 'fade'], {
      default: 'none',
      description: 'none: a cut between images; fade: a cross-fade of transition_seconds',
    }),
    transition_seconds: Param.number({
      minimum: 0.1,
      maximum: 1800,
      default: 0.5,
      description: 'Length of each cross-fade, at most half of seconds_per_image (rounded to whole frames)',
    }),
  }),
  output: (p) => ({ field: 'output_file', path: `{id}/output.${p.format}` }),
  // The images times their seconds: a long slideshow is refused before any image is fetched.
  // (A list parameter arrives as the array of its URLs.)
  outputSeconds: (p) => (p.image_urls as unknown as string[]).length * p.seconds_per_image,
  outputSize: (p) =>
    p.width !== undefined && p.height !== undefined ? { width: p.width, height: p.height } : undefined,
  build: ({ params, inputs, output, input }): Plan => {
    const images = inputs.image_urls!;
    const first = images[0]!.facts.video!;
    const { width, height } = frameSize(params.width, params.height, first.width, first.height);
    const total = images.length * params.seconds_per_image;
    if (params.transition === 'fade' && params.transition_seconds > params.seconds_per_image / 2) {
      throw paramError(
        `Expected \`transition_seconds\` to be at most half of seconds_per_image (${params.seconds_per_image / 2}), ` +
          `got ${params.transition_seconds}`,
      );
    }
    const fit = fitInto(width, height);
    // An image letterboxed into the frame, flattened onto black and written as an RGB PNG of the frame size.
    const letterboxed = (image: LocalInput, file: string) =>
      argv(
        input(image),
        ['-filter_complex', flattenOntoBlack(fit, width, height)],
        ['-frames:v', '1', '-update', '1', '-c:v', 'png', '-pix_fmt', 'rgb24', '-f', 'image2', file],
      );
    const encoding = { quality: params.quality, framePixels: width * height };
    // A frame above 4K has each image letterboxed by a command of its own into a picture the video's commands read
    // as it is, in 4:2:0 and without loss (Ut Video; FFV1's encoder took 2.3 GB at 8K): a large image's letterboxing
    // holds its pictures apart from the encoder's. Two 8K PNGs made into a slideshow in one command took 1.6 GB.
    const large = isLargeFrame(width * height);
    const still = (image: LocalInput, file: string) => ({
      command: argv(
        input(image),
        ['-filter_complex', `${flattenOntoBlack(fit, width, height)},format=yuv420p`],
        ['-frames:v', '1', '-c:v', 'utvideo', '-f', 'matroska', file],
      ),
      // One decoder thread: the file holds one picture, and each thread of a decoder keeps its own.
      input: ['-threads', '1', ...input({ ...image, file, facts: stillFacts(width, height) })],
    });
    if (params.motion !== 'none' || params.transition !== 'none') {
      // Each image's moving part is rendered on its own, in the output's codec, then the parts are joined
      // without encoding again: memory stays that of one or two pictures however many images there are.
      const pieces = motionPieces({
        images,
        width,
        height,
        fps: params.fps,
        frames: params.seconds_per_image * params.fps,
        zoom: params.motion === 'zoom',
        fade: params.transition === 'fade' ? Math.max(1, Math.round(params.transition_seconds * params.fps)) : 0,
        input,
        encoder: videoEncoder(params.format, { ...encoding, still: params.motion === 'none' }),
        muxer: muxerFor(params.format),
        extension: params.format,
        ...(large ? { still } : {}),
      });
      // Each piece's length is given, so the joined timestamps are exact whatever the container rounds to.
      const list = concatList(pieces.map(({ file }) => ({ file, duration: params.seconds_per_image })));
      return {
        files: { 'pieces.txt': list },
        expectedSeconds: total,
        frameSize: { width, height },
        // Progress follows the pieces, each its image's seconds (a letterboxing before it, none); the join only copies.
        parts: [
          ...pieces.flatMap(({ commands }) =>
            commands.map((_, i) => (i === commands.length - 1 ? params.seconds_per_image : 0)),
          ),
          0,
        ],
        commands: [
          ...pieces.flatMap(({ commands }) => commands),
          argv(
            concatListArgs('pieces.txt', 'video'),
            ['-c:v', 'copy', '-frames:v', String(total * params.fps), '-an'],
            [...muxerFor(params.format), output],
          ),
        ],
      };
    }
    // The concat demuxer reads one picture at a time, so memory does not grow with the count, but
    // it cannot switch decoders mid-stream. Pictures that all share the first one's codec and have
    // no alpha are read as they are; otherwise each is first letterboxed on its own, flattened
    // onto black and written as an RGB PNG of the frame size, so all share one codec (a large frame's as stills).
    const direct =
      !large &&
      images.every((image) => image.facts.video!.codec === first.codec && !hasAlpha(image.facts.video!.pixFmt));
    const frames = images.map((image, i) => ({
      image,
      file: direct ? image.file : large ? `still${i}.mkv` : `frame${i}.png`,
    }));
    const letterbox = direct
      ? []
      : frames.map(({ image, file }) => (large ? still(image, file).command : letterboxed(image, file)));
    // The last entry's duration is only honoured when the file is listed once more.
    const list = concatList([
      ...frames.map(({ file }) => ({ file, duration: params.seconds_per_image })),
      { file: frames[frames.length - 1]!.file },
    ]);
    // Each picture is scaled and converted to yuv420p once; the output's constant frame rate then
    // repeats the converted picture (-fps_mode cfr) instead of an fps filter, which would hold a
    // frame that a filter-graph rebuild (the next picture has another size) throws away. The frame
    // count, not -t, ends the video: -t would drop the closing entry that makes the last picture repeat.
    const filter = [direct ? fit : 'setsar=1', 'format=yuv420p'].join(',');
    return {
      files: { 'images.txt': list },
      expectedSeconds: total,
      frameSize: { width, height },
      commands: [
        ...letterbox,
        argv(
          // A still's file is Matroska, which an image's demuxers do not take; one decoder thread, as for pieces.
          large ? ['-threads', '1', ...concatListArgs('images.txt', 'video')] : concatListArgs('images.txt', 'image'),
          ['-vf', filter, '-fps_mode', 'cfr', '-r', String(params.fps), '-frames:v', String(total * params.fps), '-an'],
          videoEncoder(params.format, { ...encoding, still: true }),
          [...muxerFor(params.format), output],
        ),
      ],
    };
  },
  message: () => 'Video created successfully',
});
