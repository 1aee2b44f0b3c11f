import {
  argv,
  CONTRACT_VERSION,
  definePlugin,
  isVideoContainer,
  mediaError,
  Param,
  type Plan,
  Type,
  videoCodecFor,
} from '../../sdk.js';
import { containerMuxer, keptContainer, keptFormatParam, soundEncoder } from '../shared/kept-container.js';
import { ebur128Summary, type LoudnessMeasure, loudnormStats } from '../shared/loudness-log.js';
import { losslessGain, type Mp3Reading, readMp3 } from './mp3-normalize.js';

/** What loudnorm is asked for: the integrated loudness (LUFS) and the highest true peak (dBTP). */
interface Target {
  loudness: number;
  truePeak: number;
}

/** The options of a run whose filters' summaries the next stage reads (at `-loglevel error` they log nothing). */
const LOGGED = ['-loglevel', 'info'];

/** The first audio stream alone, into nothing: a pass that only measures. */
const MEASURE_ONLY = ['-map', '0:a:0', '-vn', '-sn', '-dn', '-f', 'null', '-'];

/**
 * Whether one gain brings the input to the target without its true peak passing the limit: then loudnorm
 * runs in its linear mode, at the input's own sample rate, and changes nothing but the level.
 */
const linearFits = (measure: LoudnessMeasure, target: Target): boolean =>
  measure.truePeak + (target.loudness - measure.integrated) <= target.truePeak;

/**
 * loudnorm with the input's measured values, in linear mode where one gain fits (`linearFits`), else in
 * its dynamic mode (a gain that follows the loudness, and a true-peak limiter), which `offset` corrects
 * by what a measuring run of the same filter fell short. Only numbers reach the graph. The loudness
 * range asked for is the input's own (within loudnorm's 1 to 50 LU): the dynamic mode keeps the range
 * as it is rather than compressing it, and the linear mode, which needs the range within the target,
 * takes every input it can.
 */
function loudnorm(measure: LoudnessMeasure, target: Target, offset: number): string {
  const range = Math.min(50, Math.max(1, measure.range));
  const options = [
    `I=${target.loudness}`,
    `TP=${target.truePeak}`,
    `LRA=${range}`,
    `measured_I=${measure.integrated}`,
    // loudnorm takes a measured range of 0 (a steady tone) for "not measured" and would not go linear.
    `measured_LRA=${Math.max(0.1, measure.range)}`,
    `measured_TP=${measure.truePeak}`,
    `measured_thresh=${measure.threshold}`,
    `offset=${offset}`,
    'linear=true',
    'print_format=json',
  ];
  return `loudnorm=${options.join(':')}`;
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'normalize-audio',
  path: '/normalize-audio/',
  summary: 'Bring the sound to a loudness target (EBU R128), measured in two passes',
  description:
    'The sound is measured (integrated loudness, loudness range, true peak), then brought to `loudness` ' +
    "with ffmpeg's loudnorm given those measures: by one gain where that keeps the true peak at or below " +
    '`true_peak`, else by a gain that follows the loudness with a true-peak limiter. The picture is copied. ' +
    "The output keeps the input's container (MP4 and MOV as mp4, Matroska as mkv or webm, mp3, m4a, wav, " +
    '...) unless `format` names a video container. An MP3 kept as MP3 whose target a whole number of 1.5 dB ' +
    'steps reaches, its peaks well under the limit, takes the gain in its frames without being re-encoded. ' +
    'The answer gives the loudness before and after.',
  params: Type.Object({
    media_url: Param.url('media', 'URL of the audio, or of a video with sound'),
    loudness: Param.number({
      minimum: -40,
      maximum: -5,
      default: -14,
      description: 'Integrated loudness to reach, LUFS: -14 for streaming, -16 podcasts, -23 broadcast',
    }),
    true_peak: Param.number({
      minimum: -9,
      maximum: 0,
      default: -1.5,
      description: 'Highest true peak allowed, dBTP',
    }),
    format: keptFormatParam(),
  }),
  answers: Type.Object({
    loudness: Type.Object(
      {
        input: Type.Number({ description: "The input's integrated loudness, LUFS" }),
        output: Type.Number({ description: "The output's integrated loudness, LUFS" }),
      },
      { description: 'Integrated loudness (EBU R128) measured before and after' },
    ),
  }),
  output: (p, inputs) => ({
    field: 'output_file',
    path: `{id}/normalized.${keptContainer(p.format, inputs?.media_url?.[0])}`,
  }),
  check: ({ inputs }) => {
    const media = inputs.media_url![0]!;
    if (!media.facts.audio)
      throw mediaError(`Input ${media.source} has no audio stream: there is no sound to normalize`);
  },
  build: ({ params, inputs, output, input }) => {
    const media = inputs.media_url![0]!;
    const { facts } = media;
    const target: Target = { loudness: params.loudness, truePeak: params.true_peak };
    const container = keptContainer(params.format, facts);
    // The picture, copied where the container takes its codec.
    const picture = facts.video && isVideoContainer(container) ? container : undefined;
    const seconds = facts.duration ? { expectedSeconds: facts.duration } : {};

    /**
     * The pass that writes the output: loudnorm, then back to the input's rate from the 192 kHz its dynamic
     * mode works at. Its own measure of what it wrote is the answer's output loudness: the encoder after it
     * moves the loudness by less than 0.05 LU (MP3 and AAC at their default rates).
     */
    const apply = (measure: LoudnessMeasure, offset: number): Plan => ({
      ...seconds,
      commands: [
        argv(
          input(media),
          LOGGED,
          picture ? ['-map', '0:v:0'] : null,
          ['-map', '0:a:0', '-sn', '-dn'],
          ['-af', `${loudnorm(measure, target, offset)},aresample=${facts.audio!.sampleRate}`],
          // The input's channels, named: after loudnorm a stream without a layout (a mono WAV) has none to offer.
          ['-ac', String(facts.audio!.channels)],
          picture && videoCodecFor(picture, facts),
          soundEncoder(container, facts),
          containerMuxer(container),
          [output],
        ),
      ],
      next: ([log]) => {
        const stats = loudnormStats(log ?? '');
        if (!stats) throw new Error('loudnorm logged no measure of its output');
        // Nothing left to run: a last stage only to answer what the writing pass logged.
        return { commands: [], answers: { loudness: { input: measure.integrated, output: stats.outputIntegrated } } };
      },
    });

    /**
     * ebur128 at the input's own rate (loudnorm's own measuring run works at 192 kHz), with the true peak
     * (4x oversampled) or only the sample peak, which costs about half as much; then `then` on its measure.
     */
    const measuring = (peak: 'true' | 'sample', then: (measure: LoudnessMeasure) => Plan): Plan => ({
      ...seconds,
      commands: [argv(input(media), LOGGED, ['-af', `ebur128=peak=${peak}:framelog=verbose`], MEASURE_ONLY)],
      next: ([log]) => {
        const measure = ebur128Summary(log ?? '');
        if (!measure) throw new Error('ebur128 logged no summary');
        if (measure.integrated <= -70)
          throw mediaError(`Input ${media.source} is silent: there is no loudness to normalize`);
        return then(measure);
      },
    });

    /** loudnorm given the true-peak measure: in one pass where one gain fits, else after its own measuring run. */
    const normalize = (measure: LoudnessMeasure): Plan => {
      if (linearFits(measure, target)) return apply(measure, 0);
      // The limiter will take some loudness away: a measuring run of the same loudnorm says how much.
      return {
        ...seconds,
        commands: [argv(input(media), LOGGED, ['-af', loudnorm(measure, target, 0)], MEASURE_ONLY)],
        next: ([dynamicLog]) => {
          const stats = loudnormStats(dynamicLog ?? '');
          if (!stats) throw new Error('loudnorm logged no measure');
          return apply(measure, stats.targetOffset);
        },
      };
    };

    // An MP3 written as MP3 may take its gain in whole steps without being decoded (mp3-normalize.ts): a step
    // of the first stage reads its frames, then ebur128 measures with the sample peak; where the steps do not fit,
    // the true peak is measured and loudnorm runs as for any other input.
    if (params.format || container !== 'mp3' || facts.audio!.codec !== 'mp3') return measuring('true', normalize);
    const mp3: Mp3Reading = { file: media.file };
    const first = measuring(
      'sample',
      (measure) => losslessGain(mp3, measure, target, output) ?? measuring('true', normalize),
    );
    return { ...first, steps: [readMp3(mp3)] };
  },
  message: () => 'Audio normalized successfully',
});
