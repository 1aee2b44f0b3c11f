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

const FORMATS = ['mp4', 'avi', 'mov', 'mkv', 'webm'] as const;

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'images-to-video',
  path: '/images-to-video/',
  summary: 'Slideshow video from images',
  description:
    'Each image is shown for seconds_per_image, letterboxed (never stretched) into one frame size: the first image\'s, made even, or width x height. Constant frame rate, yuv420p.',
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
    // The concat demuxer cannot switch decoders mid-stream: when the images mix codecs (JPEG and
    // PNG, say), the others are first converted, losslessly, to PNG.
    const mixed = new Set(images.map((image) => image.facts.video!.codec)).size > 1;
    const normalise = images.map((image, i) =>
      mixed && image.facts.video!.codec !== 'png' ? { from: image, file: `frame${i}.png` } : { from: image, file: image.file },
    );
    const conversions = normalise
      .filter(({ from, file }) => file !== from.file)
      .map(({ from, file }) => argv(input(from), ['-frames:v', '1', '-update', '1', '-c:v', 'png', '-f', 'image2', file]));
    // The concat demuxer reads one image at a time, so memory does not grow with the count. Its
    // last entry's duration is only honoured when the file is listed once more.
    const list = concatList([
      ...normalise.map(({ file }) => ({ file, duration: params.seconds_per_image })),
      { file: normalise[normalise.length - 1]!.file },
    ]);
    // Scale and convert each picture once, before fps duplicates it into frames.
    const filter = [
      `scale=${width}:${height}:force_original_aspect_ratio=decrease`,
      `pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2:color=black`,
      'setsar=1',
      'format=yuv420p',
      `fps=${params.fps}`,
    ].join(',');
    return {
      files: { 'images.txt': list },
      expectedSeconds: total,
      commands: [
        ...conversions,
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
