import {
  argv,
  concatList,
  concatListArgs,
  CONTRACT_VERSION,
  definePlugin,
  mediaError,
  Optional,
  Param,
  paramError,
  timeWithin,
  Type,
  type LocalInput,
  type Plan,
  type VideoFacts,
} from '../sdk.js';
import { JPEG_OUTPUT } from './shared/still-image.js';
import { shownSize } from './shared/shown-size.js';

const FORMATS = ['jpg', 'png', 'webp'] as const;
type PictureFormat = (typeof FORMATS)[number];

/** Most frames one request may take, by `count` or `at`. */
const MAX_FRAMES = 100;
const DEFAULT_COLUMNS = 4;

/**
 * Options that write exactly one picture in each format. None of the three needs even sizes (JPEG
 * and WebP pad 4:2:0 chroma inside the file), so a frame keeps its proportions to the pixel.
 */
const PICTURE_OUTPUT: Record<PictureFormat, readonly string[]> = {
  jpg: JPEG_OUTPUT,
  png: ['-frames:v', '1', '-update', '1', '-c:v', 'png', '-pix_fmt', 'rgb24', '-f', 'image2'],
  webp: ['-frames:v', '1', '-update', '1', '-c:v', 'libwebp', '-quality', '90', '-f', 'image2'],
};

/** A sheet's frames on their way to the tile filter: PNG loses nothing, and its fastest level costs little. */
const TILE_OUTPUT = ['-frames:v', '1', '-update', '1', '-c:v', 'png', '-compression_level', '1', '-f', 'image2'];

/**
 * Largest side each format's encoder writes (WebP's own limit; ffmpeg's JPEG encoder's 16-bit sizes). The pixels of
 * a frame or a sheet are MEDIAFLOW_MAX_PIXELS's to bound (the plan's frameSize): the tile filter holds a sheet whole.
 */
const MAX_SIDE: Record<PictureFormat, number> = { jpg: 65535, png: 2 ** 31 - 1, webp: 16383 };

/**
 * Seeked inputs one ffmpeg command opens at most: each keeps a decoder (its reference pictures) and a scaler's
 * pictures until the command ends, so many frames are taken a group at a time. Ten per command take 0.08 s a frame
 * against 0.19 s with a process each (720p H.264, keyframes every 2 s); ten 720p decoders hold 190 MB, fifty 720 MB.
 * The budget keeps a group of 4K frames as small, and of frames scaled up as much: six 7680x4320 frames of a 640x360
 * video took 1.2 GB in one command.
 */
const GROUP_MAX = 10;
const GROUP_PIXELS = 10 * 1920 * 1080;

/** Frames per command for pictures of `pixels` (read or written, the larger): fewer as they grow, one at the least. */
const groupSize = (pixels: number): number =>
  Math.max(1, Math.min(GROUP_MAX, Math.floor(GROUP_PIXELS / Math.max(1, pixels))));

/** Seconds as ffmpeg reads them, to the microsecond its timestamps are counted in. */
const seconds = (value: number): string => String(Math.round(value * 1e6) / 1e6);

interface FrameParams {
  at?: number[];
  count?: number;
  format: PictureFormat;
  width?: number;
  sheet: boolean;
  columns?: number;
}

/** How many frames the parameters ask for: those listed in `at`, `count`, else one. */
const frameCount = (p: FrameParams): number => p.at?.length ?? p.count ?? 1;

/** The output files in order: the sheet, or one picture per frame (`frame_001`, ...). */
function outputPaths(p: FrameParams): string[] {
  if (p.sheet) return [`{id}/sheet.${p.format}`];
  return Array.from({ length: frameCount(p) }, (_, i) => `{id}/frame_${String(i + 1).padStart(3, '0')}.${p.format}`);
}

/**
 * When each frame is taken, in the order of the outputs: the times of `at` (each refused past the
 * end), `count` times at the middles of as many equal parts of the input, or one at a tenth of it.
 */
function frameTimes(p: FrameParams, video: LocalInput): number[] {
  const { duration } = video.facts;
  if (p.at) return p.at.map((time) => timeWithin('at', time, video.facts));
  if (duration === undefined)
    throw mediaError(`The duration of ${video.source} is unknown: give the frames' times in \`at\``);
  if (p.count !== undefined) return Array.from({ length: p.count }, (_, i) => (duration * (i + 0.5)) / p.count!);
  return [duration / 10];
}

/**
 * The input, opened at the keyframe at or before `time`, and the filters that keep its first frame
 * at or after `time`: what ffmpeg's own exact seek does, except at the end. There the picture may
 * stop before the file does (the end itself, a sound that outlasts the picture), and the exact seek
 * would find no frame at all; here the last frame is repeated (with the input's frame rate; none
 * when it has none) for as long as it takes to reach `time`, so the picture taken is the last one.
 * Seeking leaves timestamps counted from `time`: the frames before it are negative.
 */
function seekTo(time: number, video: LocalInput, input: (input: LocalInput) => string[]) {
  return {
    input: argv(['-noaccurate_seek', '-ss', seconds(time)], input(video)),
    filter: `tpad=stop_mode=clone:stop_duration=${seconds(time + 1)},trim=start=0`,
  };
}

/**
 * The picture as it is shown, in square pixels: turned as its display matrix says (ffmpeg does so
 * while decoding, before this chain), stretched by its sample aspect ratio, then `width` pixels
 * wide when asked, the height in proportion. Only numbers from the parsed fields reach the graphs.
 */
function scaleFilter(width: number | undefined): string {
  const size = width ? `w=${width}:h='max(1,round(${width}/dar))'` : "w='round(iw*sar)':h=ih";
  return `scale=${size}:flags=lanczos,setsar=1`;
}

/**
 * A frame's size as it is taken, from the probed picture as shown (a video turned a quarter by its display matrix
 * shows its frames the other way): `width` wide when asked, the height in proportion.
 */
function frameSize(p: FrameParams, picture: VideoFacts): { width: number; height: number } {
  const shown = shownSize(picture);
  if (!p.width) return shown;
  return { width: p.width, height: Math.max(1, Math.round((p.width * shown.height) / shown.width)) };
}

/** The sheet's size: `columns` (no more than the frames) across, as many rows as the frames fill. */
function sheetLayout(frames: number, columns: number): { columns: number; rows: number } {
  const across = Math.min(columns, frames);
  return { columns: across, rows: Math.ceil(frames / across) };
}

/** The sheet's size from its frames', refused when wider or higher than its format can hold. */
function sheetSize(
  p: FrameParams,
  frame: { width: number; height: number },
  layout: { columns: number; rows: number },
): { width: number; height: number } {
  const width = frame.width * layout.columns;
  const height = frame.height * layout.rows;
  const side = MAX_SIDE[p.format];
  if (width > side || height > side) {
    throw mediaError(
      `The contact sheet would be ${width}x${height} pixels, more than a ${p.format} sheet may be (at most ` +
        `${side} pixels a side): give a smaller \`width\`, fewer frames or other \`columns\``,
    );
  }
  return { width, height };
}

/**
 * ffmpeg commands that write the picture at each time into the file of the same index: each input
 * seeked before it is opened (seekTo: only the keyframe's group before the time is decoded), a group
 * of frames per command (groupSize). A command of several inputs decodes each on one thread, which
 * keeps the group's memory small.
 */
function frameCommands(
  times: readonly number[],
  files: readonly string[],
  video: LocalInput,
  input: (input: LocalInput) => string[],
  scale: string,
  picture: readonly string[],
  framePixels: number,
): string[][] {
  const size = groupSize(Math.max((video.facts.video?.width ?? 0) * (video.facts.video?.height ?? 0), framePixels));
  const commands: string[][] = [];
  for (let first = 0; first < times.length; first += size) {
    const seeks = times.slice(first, first + size).map((time) => seekTo(time, video, input));
    const threads = seeks.length > 1 ? ['-threads', '1'] : null;
    commands.push(
      argv(
        ...seeks.map((seek) => argv(threads, seek.input)),
        ...seeks.map((seek, i) =>
          argv(['-map', `${i}:v:0`, '-vf', `${seek.filter},${scale}`], picture, [files[first + i]!]),
        ),
      ),
    );
  }
  return commands;
}

/** The plan: the frames into `outputs`, or into tiles that one last command lays out as the sheet. */
function framesPlan(p: FrameParams, video: LocalInput, input: (input: LocalInput) => string[], outputs: string[]) {
  const times = frameTimes(p, video);
  const scale = scaleFilter(p.width);
  // The probe found a picture (the input's kind); its size as taken bounds each command's group and the plan's size.
  const frame = frameSize(p, video.facts.video!);
  const pixels = frame.width * frame.height;
  if (!p.sheet)
    return {
      frameSize: frame,
      commands: frameCommands(times, outputs, video, input, scale, PICTURE_OUTPUT[p.format], pixels),
    } satisfies Plan;
  const layout = sheetLayout(times.length, p.columns ?? DEFAULT_COLUMNS);
  const tiles = times.map((_, i) => `tile_${String(i + 1).padStart(3, '0')}.png`);
  const list = 'tiles.txt';
  return {
    files: { [list]: concatList(tiles.map((file) => ({ file }))) },
    frameSize: sheetSize(p, frame, layout),
    commands: [
      ...frameCommands(times, tiles, video, input, scale, TILE_OUTPUT, pixels),
      argv(concatListArgs(list, 'image'), ['-vf', `tile=${layout.columns}x${layout.rows}`], PICTURE_OUTPUT[p.format], [
        outputs[0]!,
      ]),
    ],
  } satisfies Plan;
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'extract-frames',
  path: '/extract-frames/',
  summary: 'Take frames of a video as pictures, or a contact sheet of them',
  description:
    'One frame at a tenth of the video, frames at the times of `at`, or `count` evenly spaced frames (at the ' +
    'middles of as many equal parts), as JPEG, PNG or WebP pictures; with `sheet=true` they are tiled, in ' +
    'order, into one contact sheet `columns` frames wide. Each frame is taken by seeking to it, never by ' +
    'decoding the video from its start, and is shown as a player shows it: turned upright and in square ' +
    'pixels, `width` pixels wide when asked (the height in proportion).',
  params: Type.Object({
    video_url: Param.url('video', 'URL of the video'),
    at: Optional(Param.times(`When to take the frames, at most ${MAX_FRAMES}`)),
    count: Optional(
      Param.integer({
        minimum: 1,
        maximum: MAX_FRAMES,
        examples: [4],
        description: 'How many evenly spaced frames to take (instead of `at`)',
      }),
    ),
    format: Param.format(FORMATS, { default: 'jpg', description: 'Picture format' }),
    width: Optional(
      Param.integer({
        minimum: 16,
        maximum: 7680,
        description: "Width of each frame in pixels, the height in proportion (default: the video's own)",
      }),
    ),
    sheet: Param.boolean({ default: false, description: 'Tile the frames into one contact sheet' }),
    columns: Optional(
      Param.integer({
        minimum: 1,
        maximum: MAX_FRAMES,
        description: `Frames across the contact sheet (default ${DEFAULT_COLUMNS}; with \`sheet=true\` only)`,
      }),
    ),
  }),
  // Always a list, a sheet too: a pipeline step's output is a list whatever the parameters.
  output: (p) => ({ files: outputPaths(p) }),
  checkParams: (p) => {
    if (p.at !== undefined && p.count !== undefined)
      throw paramError('Give either `at` (the times of the frames) or `count` (how many), not both');
    if (p.at && p.at.length > MAX_FRAMES)
      throw paramError(`Expected \`at\` to list at most ${MAX_FRAMES} times, got ${p.at.length}`);
    if (p.columns !== undefined && !p.sheet)
      throw paramError('`columns` lays out a contact sheet: give it with `sheet=true`');
  },
  build: ({ params, inputs, outputs, input }) => framesPlan(params, inputs.video_url![0]!, input, outputs),
  message: () => 'Frames extracted successfully',
});
