import { writeFile } from 'node:fs/promises';
import { checkScriptCost, type DrawnInto } from './captions/ass-cost.js';
import { captionStyleFields, captionStyleOf, restyle, type CaptionStyle } from './captions/caption-style.js';
import {
  qualityParam,
  argv,
  audioCodecFor,
  CONTRACT_VERSION,
  definePlugin,
  escapeFilterValue,
  even,
  fanoutParam,
  frameByFrame,
  keptFrameTimes,
  muxerFor,
  Param,
  splitsInParts,
  Type,
  videoEncoder,
  VIDEO_CONTAINERS,
} from '../sdk.js';

/** The subtitles as ASS, styled, in the job's workspace. */
const ASS_FILE = 'subtitles.ass';

/**
 * Writes the subtitle script with the style fields applied, once its cost to draw is known to be within bounds
 * (ass-cost.ts: a 422 otherwise, before the video is decoded). Run in a worker thread (StepContext.offThread): a
 * subtitle input of megabytes is tens of thousands of lines to weigh and rewrite.
 */
export async function writeRestyled(
  ass: string,
  style: CaptionStyle,
  video: DrawnInto & { height: number },
  source: string,
  file: string,
): Promise<void> {
  checkScriptCost(ass, video, source);
  await writeFile(file, restyle(ass, style, video.height), 'utf8');
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'add-subtitles',
  path: '/add-subtitles/',
  summary: 'Burn a subtitle file into a video',
  description:
    'SRT, ASS/SSA and WebVTT subtitles, in any common character encoding, are drawn into the picture with ' +
    'libass (shaped text, fonts chosen per character). The audio is copied when the container takes it. ' +
    "Characters no installed font has are listed in the answer's `warnings`. " +
    'The optional style fields (font, size, colours, outline, background box, position, wrapping width) apply ' +
    'to every cue of SRT and WebVTT files; an ASS file keeps what of its own styles no field overrides.',
  params: Type.Object({
    video_url: Param.url('video', 'URL of the video'),
    subtitle_url: Param.url('subtitle', 'URL of the subtitle file (.srt, .ass, .ssa, .vtt)'),
    format: Param.format(VIDEO_CONTAINERS, { default: 'mp4', description: 'Output video format' }),
    quality: qualityParam(),
    ...captionStyleFields,
    fanout: fanoutParam(),
  }),
  output: (p) => ({ field: 'output_video', path: `{id}/video_with_subtitles.${p.format}` }),
  build: ({ params, inputs, output, input }) => {
    const video = inputs.video_url![0]!;
    const subtitles = inputs.subtitle_url![0]!;
    // Only the `ass` filter takes `shaping` (ffmpeg 5's `subtitles` filter leaves libass on simple
    // shaping, which draws Devanagari without its conjuncts and Thai tone marks over the wrong
    // vowels), and it reads ASS only: the engine hands subtitle inputs over as ASS, which is what the
    // `subtitles` filter converted them to itself. The style fields are applied to that script's
    // styles and the result written under a generated name: no style value enters the filter graph.
    const size = video.facts.video;
    // The engine converts every subtitle input (LocalInput.ass); a step restyles it off the event loop.
    const drawnInto = {
      height: size?.height ?? 1080,
      fps: size?.fps || 25,
      ...(video.facts.duration ? { duration: video.facts.duration } : {}),
    };
    const restyled = [subtitles.ass!, captionStyleOf(params), drawnInto, subtitles.source];
    // Complex shaping (HarfBuzz) with fontconfig's fallback fonts: every script the fonts cover is drawn shaped.
    // The name is generated; it is escaped all the same, so the graph stays intact whatever names come later.
    const burn = `ass=filename=${escapeFilterValue(ASS_FILE)}:shaping=complex`;
    // x264 in 4:2:0 refuses odd sizes: a picture of odd width or height gets one black column or row.
    const encoder = videoEncoder(params.format, { quality: params.quality });
    const odd = encoder.includes('libx264') && size && (size.width % 2 !== 0 || size.height % 2 !== 0);
    const pad = odd ? `,pad=${even(size.width)}:${even(size.height)}:0:0:color=black` : '';
    const audio = video.facts.audio ? audioCodecFor(params.format, video.facts) : undefined;
    return {
      ...(video.facts.duration ? { expectedSeconds: video.facts.duration } : {}),
      // A long burn to H.264 in parts (docs/fanout.md): each part's frames are put on the whole input's clock
      // before libass draws them, so a cue is drawn on the frames it is drawn on in one pass, across a join too.
      ...(params.fanout && splitsInParts(encoder)
        ? {
            fanout: frameByFrame({
              input: video,
              opened: input(video),
              // -loglevel is global: libass's warnings of each part, as the one pass logs them.
              filters: (shift, reset) => [
                '-loglevel',
                'warning',
                '-map',
                '0:v:0',
                '-vf',
                `${shift},${burn}${pad},${reset}`,
              ],
              // Written by the step below: a part on another worker fetches it with the inputs.
              reads: [ASS_FILE],
              videoArgs: encoder,
              ...(audio ? { audioArgs: audio } : {}),
              muxer: muxerFor(params.format),
              output,
            }),
          }
        : {}),
      steps: [
        {
          label: `worker thread: ${subtitles.file} weighed (its cost to draw) and styled -> ${ASS_FILE}`,
          run: (context) =>
            context.offThread(new URL(import.meta.url), 'writeRestyled', [...restyled, context.path(ASS_FILE)]),
        },
      ],
      commands: [
        argv(
          // libass names each character no font has at warning level; the engine reports them as
          // the answer's `warnings`.
          ['-loglevel', 'warning'],
          input(video),
          ['-map', '0:v:0', '-map', '0:a:0?', '-vf', `${burn}${pad}`],
          encoder,
          keptFrameTimes(encoder),
          audio ?? null,
          muxerFor(params.format),
          [output],
        ),
      ],
    };
  },
  message: () => 'Subtitles added successfully',
});
