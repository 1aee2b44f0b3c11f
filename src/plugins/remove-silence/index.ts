import {
  argv,
  audioCodecFor,
  audioFileCodecFor,
  CONTRACT_VERSION,
  definePlugin,
  evenPadFilter,
  isVideoContainer,
  mediaError,
  type MediaFacts,
  Param,
  type Plan,
  qualityParam,
  type TimeRange,
  Type,
  videoCodecFor,
  videoEncoder,
} from '../../sdk.js';
import {
  containerMuxer,
  keptContainer,
  keptFormatParam,
  soundEncoder,
  type KeptContainer,
} from '../shared/kept-container.js';
import { keptParts, silencesIn } from './silences.js';

/** The workspace file that holds the cutting graph: with a cut point per pause it outgrows a command-line argument. */
const GRAPH_FILE = 'parts.graph';

/** Seconds as the graph writes them: to the microsecond, which keeps cut points on the frame grid. */
const at = (seconds: number) => Number(seconds.toFixed(6)).toString();

/**
 * The graph that keeps `parts` of the input and joins them. The picture (`segment`) and the sound
 * (`asegment`, to the sample) are split at the same times, the parts' starts and ends, into pieces that
 * alternate between kept and removed; the removed go nowhere (`nullsink`), the kept start again at zero and
 * are concatenated in order, so picture and sound stay in step across every join. Each frame reaches one
 * piece, where a trim per part would see every frame (200 parts made a 10-minute MP3 3.6 times slower).
 * Only numbers from the parsed fields and the probe reach the graph.
 */
function cutGraph(parts: readonly TimeRange[], duration: number, withPicture: boolean, pad: string): string {
  const points = parts.flatMap(({ start, end }) => [start, end]).filter((time) => time > 0 && time < duration);
  const firstKept = parts[0]!.start === 0;
  const pieces = Array.from({ length: points.length + 1 }, (_, i) => i);
  const kept = pieces.filter((i) => i % 2 === (firstKept ? 0 : 1));
  const removed = pieces.filter((i) => !kept.includes(i));
  const streams = withPicture ? (['v', 'a'] as const) : (['a'] as const);
  const chains = streams.flatMap((kind) => {
    const [split, sink, setpts] =
      kind === 'v' ? ['segment', 'nullsink', 'setpts'] : ['asegment', 'anullsink', 'asetpts'];
    return [
      `[0:${kind}:0]${split}=timestamps=${points.map(at).join('|')}${pieces.map((i) => `[${kind}${i}]`).join('')}`,
      ...removed.map((i) => `[${kind}${i}]${sink}`),
      ...kept.map((i) => `[${kind}${i}]${setpts}=PTS-STARTPTS[${kind}k${i}]`),
    ];
  });
  const joined = kept.map((i) => streams.map((kind) => `[${kind}k${i}]`).join('')).join('');
  const picture = withPicture ? (pad ? '[joined]' : '[v]') : '';
  chains.push(`${joined}concat=n=${kept.length}:v=${withPicture ? 1 : 0}:a=1${picture}[a]`);
  if (withPicture && pad) chains.push(`[joined]${pad}[v]`);
  return chains.join(';\n');
}

/** The streams' options when nothing is cut: each copied where the container takes its codec. */
function copyArgs(container: KeptContainer, facts: MediaFacts): string[] {
  if (!isVideoContainer(container)) return argv(['-map', '0:a:0'], audioFileCodecFor(container, facts));
  return argv(
    facts.video ? ['-map', '0:v:0'] : null,
    ['-map', '0:a:0'],
    facts.video ? videoCodecFor(container, facts) : null,
    audioCodecFor(container, facts),
  );
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'remove-silence',
  path: '/remove-silence/',
  summary: 'Cut the pauses out of speech (jump cuts), picture and sound together',
  description:
    "Silences are found with ffmpeg's silencedetect: the sound stays below `threshold` for at least " +
    '`min_silence` seconds. Each is cut out except `padding` seconds next to the sound on either side (a ' +
    'silence at the very start or end goes entirely); picture and sound are cut at the same times, on whole ' +
    'frames, so they stay in sync. The answer says how many seconds were removed. With no silence to ' +
    'remove, the streams are copied as they are and `removed_seconds` is 0; an input silent throughout is ' +
    "a 422. The output keeps the input's container unless `format` names a video container.",
  params: Type.Object({
    media_url: Param.url('media', 'URL of the audio, or of a video with sound'),
    threshold: Param.number({
      minimum: -90,
      maximum: -10,
      default: -40,
      description: 'Level below which the sound counts as silence, dB',
    }),
    min_silence: Param.number({
      minimum: 0.1,
      maximum: 60,
      default: 0.6,
      description: 'Shortest pause removed, seconds',
    }),
    padding: Param.number({
      minimum: 0,
      maximum: 5,
      default: 0.15,
      description: 'Seconds of each pause kept next to the sound on either side',
    }),
    format: keptFormatParam(),
    quality: qualityParam(),
  }),
  answers: Type.Object({
    removed_seconds: Type.Number({ description: 'Seconds of silence removed' }),
  }),
  output: (p, inputs) => ({
    field: 'output_file',
    path: `{id}/no_silence.${keptContainer(p.format, inputs?.media_url?.[0])}`,
  }),
  check: ({ inputs }) => {
    const media = inputs.media_url![0]!;
    if (!media.facts.audio)
      throw mediaError(`Input ${media.source} has no audio stream: there is no sound to find silences in`);
    if (!media.facts.duration)
      throw mediaError(`Input ${media.source} does not say how long it lasts: its silences cannot be cut`);
  },
  build: ({ params, inputs, output, input }) => {
    const media = inputs.media_url![0]!;
    const { facts } = media;
    const container = keptContainer(params.format, facts);
    // Known: `check` refuses an input that does not say.
    const duration = facts.duration!;
    return {
      expectedSeconds: duration,
      commands: [
        argv(
          input(media),
          ['-loglevel', 'info', '-map', '0:a:0', '-vn', '-sn', '-dn'],
          ['-af', `silencedetect=noise=${params.threshold}dB:d=${params.min_silence}`],
          ['-f', 'null', '-'],
        ),
      ],
      next: ([log]): Plan => {
        const picture = facts.video && isVideoContainer(container) ? container : undefined;
        const { kept, removed } = keptParts(silencesIn(log ?? '', duration), {
          duration,
          padding: params.padding,
          // Cut points on the frame grid: each part's picture and sound then last exactly as long.
          step: picture && facts.video!.fps > 0 ? 1 / facts.video!.fps : 0,
        });
        if (kept.length === 0)
          throw mediaError(
            `Input ${media.source} is silent throughout (below ${params.threshold} dB): nothing would be left`,
          );
        const answers = { removed_seconds: Number(removed.toFixed(3)) };
        if (removed === 0) {
          return {
            expectedSeconds: duration,
            commands: [argv(input(media), copyArgs(container, facts), containerMuxer(container), [output])],
            answers,
          };
        }
        const videoArgs = picture ? videoEncoder(picture, { quality: params.quality }) : [];
        return {
          expectedSeconds: duration - removed,
          files: { [GRAPH_FILE]: cutGraph(kept, duration, Boolean(picture), evenPadFilter(videoArgs, facts.video)) },
          commands: [
            argv(
              input(media),
              ['-filter_complex_script', GRAPH_FILE],
              picture ? ['-map', '[v]'] : null,
              ['-map', '[a]'],
              videoArgs,
              soundEncoder(container, facts),
              containerMuxer(container),
              [output],
            ),
          ],
          answers,
        };
      },
    };
  },
  message: () => 'Silence removed successfully',
});
