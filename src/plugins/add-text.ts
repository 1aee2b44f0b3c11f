import { assScript } from './captions/ass-captions.js';
import { assLines } from './captions/ass-script.js';
import { captionStyleFields, captionStyleOf } from './captions/caption-style.js';
import { keptFormatParam, keptVideoContainer } from './shared/kept-container.js';
import { checkLayerTimes, layerTimeFields } from './shared/layer-times.js';
import {
  argv,
  audioCodecFor,
  CONTRACT_VERSION,
  definePlugin,
  escapeFilterValue,
  evenPadFilter,
  fanoutParam,
  frameByFrame,
  keptFrameTimes,
  muxerFor,
  Param,
  qualityParam,
  splitsInParts,
  timeWithin,
  Type,
  videoEncoder,
} from '../sdk.js';

/** The text as an ASS script, written into the job's workspace under this generated name. */
const ASS_FILE = 'text.ass';

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'add-text',
  path: '/add-text/',
  summary: 'Draw a title or lower third over a video for a time range',
  description:
    'The text (one or more lines) is drawn from `start` to `end` with libass, as burned-in subtitles are: ' +
    'shaped, with fonts chosen per character, so every script add-subtitles draws is drawn here. It is drawn ' +
    'literally: braces and backslashes are not ASS override tags. The optional style fields of add-subtitles ' +
    '(font, size, colours, outline, background box, position, margin, wrapping width) set its look. The ' +
    "audio is copied when the container takes it. The output keeps the input's container (MP4 and MOV as " +
    'mp4, Matroska as mkv or webm, avi) unless `format` names another video container.',
  params: Type.Object({
    video_url: Param.url('video', 'URL of the video'),
    text: Param.text({
      maxLength: 2000,
      examples: ['Episode 12\nThe long way home'],
      description: 'The text to draw; a newline starts another line',
    }),
    ...layerTimeFields('the text'),
    format: keptFormatParam(),
    quality: qualityParam(),
    ...captionStyleFields,
    fanout: fanoutParam(),
  }),
  output: (p, inputs) => ({
    field: 'output_file',
    path: `{id}/with_text.${keptVideoContainer(p.format, inputs?.video_url?.[0])}`,
  }),
  // What the fields alone say is wrong is refused before anything is downloaded.
  checkParams: checkLayerTimes,
  build: ({ params, inputs, output, input }) => {
    const video = inputs.video_url![0]!;
    const { facts } = video;
    const start = timeWithin('start', params.start, facts);
    // Without an end, the text stays to the end of the video (or for ever, when its length is unknown).
    const end = params.end !== undefined ? timeWithin('end', params.end, facts) : (facts.duration ?? 360_000);
    const container = keptVideoContainer(params.format, facts);
    // The user's text goes only into the script, escaped (braces, backslashes, newlines as \N); the
    // filter graph names the script by its generated name, exactly as add-subtitles burns its captions.
    const script = assScript([{ start, end, text: assLines(params.text) }], captionStyleOf(params));
    const encoder = videoEncoder(container, { quality: params.quality });
    const pad = evenPadFilter(encoder, facts.video);
    const burn = `ass=filename=${escapeFilterValue(ASS_FILE)}:shaping=complex${pad ? `,${pad}` : ''}`;
    const audio = facts.audio ? audioCodecFor(container, facts) : undefined;
    return {
      ...(facts.duration ? { expectedSeconds: facts.duration } : {}),
      files: { [ASS_FILE]: script },
      // A long video to H.264 in parts (docs/fanout.md): each part's frames are put on the whole input's clock
      // before libass draws them, so the text's `start` and `end` hold across a join as in one pass.
      ...(params.fanout && splitsInParts(encoder)
        ? {
            fanout: frameByFrame({
              input: video,
              opened: input(video),
              // -loglevel is global: libass's warnings of each part, as the one pass logs them.
              filters: (shift, reset) => ['-loglevel', 'warning', '-map', '0:v:0', '-vf', `${shift},${burn},${reset}`],
              videoArgs: encoder,
              ...(audio ? { audioArgs: audio } : {}),
              muxer: muxerFor(container),
              output,
            }),
          }
        : {}),
      commands: [
        argv(
          // libass names each character no font has at warning level: the answer's `warnings`.
          ['-loglevel', 'warning'],
          input(video),
          ['-map', '0:v:0', '-map', '0:a:0?', '-vf', burn],
          encoder,
          keptFrameTimes(encoder),
          audio ?? null,
          muxerFor(container),
          [output],
        ),
      ],
    };
  },
  message: () => 'Text added successfully',
});
