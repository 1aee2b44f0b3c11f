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
} from '../sdk.js';
import { flattenOntoBlack } from './shared/still-image.js';

const FORMATS = ['mp4', 'avi', 'mov', 'mkv', 'webm'] as const;

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'images-to-video',
  path: '/images-to-video/',
  summary: 'Slideshow video from images',
  description:
    'Each image is shown for seconds_per_image, letterboxed (never stretched, transparency black) into one frame size: the first image\'s, made even, or width x height. Constant frame rate, yuv420p.',
  params: Type.Object({
    image_urls: Param.urlList('image', 'Comma-separated image URLs (JPG, PNG, WebP, ...), shown in this order', {
      tooFew: 'No image URLs provided',
    }),
    seconds_per_image: Param.integer({ minimum: 1, maximum: 3600, default: 5, description: 'Seconds each image is shown' }),
    format: Param.format(FORMATS, { default: 'mp4', description: 'Output video format' }),
    fps: Param.integer({ minimum: 1, maximum: 60, default: 25, description: 'Frames per second of the output' }),
    width: Optional(Param.integer({ minimum: 16, maximum: 7680, description: 'Frame width (default: the first image\'s)' })),
    height: Optional(Param.integer({ minimum: 16, maximum: 4320, description: 'Frame height (default: the first image\'s)' })),
  }),
  output: (p) => ({ field: 'output_file', path: `{id}/output.${p.format}` }),
  build: ({ params, inputs, output, input }) => {
    const images = inputs.image_urls!;
    const first = images[0]!.facts.video!;
    const width = even(params.width ?? first.width);
    const height = even(params.height ?? first.height);
    const total = images.length * params.seconds_per_image;
    // Each picture is first letterboxed into the frame on its own, flattened onto black and
    // written as an RGB PNG of exactly width x height. The slideshow then reads pictures that all
    // share one codec, size and pixel format: the concat demuxer cannot switch decoders mid-stream,
    // and a picture of another size or format would make ffmpeg rebuild the filter graph, which
    // drops the frame the fps filter holds (every image but the last would vanish) or, with
    // -reinit_filter 0, stretches it to the first one's shape.
    const fit = `scale=${width}:${height}:force_original_aspect_ratio=decrease,pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2:color=black@0,setsar=1`;
    const frames = images.map((image, i) => ({ image, file: `frame${i}.png` }));
    const letterbox = frames.map(({ image, file }) =>
      argv(input(image), ['-filter_complex', flattenOntoBlack(fit, width, height)], ['-frames:v', '1', '-update', '1', '-c:v', 'png', '-pix_fmt', 'rgb24', '-f', 'image2', file]),
    );
    // The concat demuxer reads one picture at a time, so memory does not grow with the count. Its
    // last entry's duration is only honoured when the file is listed once more.
    const list = concatList([
      ...frames.map(({ file }) => ({ file, duration: params.seconds_per_image })),
      { file: frames[frames.length - 1]!.file },
    ]);
    // Convert each picture once, before fps duplicates it into frames.
    const filter = ['setsar=1', 'format=yuv420p', `fps=${params.fps}`].join(',');
    return {
      files: { 'images.txt': list },
      expectedSeconds: total,
      commands: [
        ...letterbox,
        argv(concatListArgs('images.txt', 'image'), ['-vf', filter, '-t', String(total), '-an'], videoEncoder(params.format, { still: true }), [
          '-r',
          String(params.fps),
          ...muxerFor(params.format),
          output,
        ]),
      ],
    };
  },
  message: () => 'Video created successfully',
});
