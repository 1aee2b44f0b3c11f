import {
  argv,
  CONTRACT_VERSION,
  definePlugin,
  isVideoContainer,
  type LocalInput,
  mediaError,
  Param,
  paramError,
  type Plan,
  Type,
  videoCodecFor,
} from '../sdk.js';
import { containerMuxer, keptContainer, soundEncoder } from './shared/kept-container.js';
import { ebur128Summary, type LoudnessMeasure } from './shared/loudness-log.js';

/** The options of a run whose filters' summaries the next stage reads (at `-loglevel error` they log nothing). */
const LOGGED = ['-loglevel', 'info'];

/**
 * The ducking compressor, keyed on the voice. Its threshold sits this many dB under the voice's integrated
 * loudness, so that speech at its usual levels is well over it and a pause (room tone, silence) under it;
 * at a ratio of 6 speech 10 dB over the threshold dips the music by about 8 dB, 20 dB over by about 17.
 * The attack is quick enough to clear the first syllable, the release slow enough not to pump between words.
 */
const DUCK = { belowVoice: 20, ratio: 6, attackMs: 20, releaseMs: 500 };

/** sidechaincompress takes its threshold as an amplitude from 1/1024 to 1. */
const duckThreshold = (voiceLufs: number): number =>
  Math.min(1, Math.max(1 / 1024, 10 ** ((voiceLufs - DUCK.belowVoice) / 20)));

/**
 * ebur128 over the first audio stream alone, into nothing: a pass that only measures. Its summary is read
 * with its peak, the sample peak here, which costs less than the true peak and is not used.
 */
const measuring = (input: string[]): string[] =>
  argv(input, LOGGED, [
    '-map',
    '0:a:0',
    '-vn',
    '-sn',
    '-dn',
    '-af',
    'ebur128=peak=sample:framelog=verbose',
    '-f',
    'null',
    '-',
  ]);

/** A measured loudness, refused when it is silence: a silent voice gives no level to set the music by. */
function measured(log: string | undefined, media: LocalInput, what: string): LoudnessMeasure {
  const measure = ebur128Summary(log ?? '');
  if (!measure) throw new Error('ebur128 logged no summary');
  if (measure.integrated <= -70) throw mediaError(`Input ${media.source} is silent: there is no ${what} to mix`);
  return measure;
}

/** A channel layout ffmpeg's aformat takes for a count of channels. */
const layoutOf = (channels: number): string => (channels === 1 ? 'mono' : channels === 2 ? 'stereo' : `${channels}c`);

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'mix-audio',
  path: '/mix-audio/',
  summary: 'Mix music under a voice or a video’s sound, looped, faded and ducked under speech',
  description:
    'Both sounds are measured first (integrated loudness, EBU R128); the music is then set by one gain so that ' +
    "its loudness is `music_volume` LU from the voice's (-18: the music 18 LU under the voice), looped to cover " +
    'the voice when `loop` is on, faded in and out, and, with `ducking` on, compressed while the voice speaks ' +
    "(a compressor keyed on the voice) so that it dips under speech and comes back in the pauses. The voice's own " +
    'level is never changed. The output lasts as long as the voice and keeps its channels, sample rate and ' +
    "container (MP4 and MOV as mp4, Matroska as mkv or webm, mp3, m4a, wav, ...); a video's picture is copied.",
  params: Type.Object({
    media_url: Param.url('media', 'URL of the voice: an audio, or a video with sound'),
    music_url: Param.url('media', 'URL of the music: an audio (or the sound of a video)'),
    music_volume: Param.number({
      minimum: -60,
      maximum: 0,
      default: -18,
      description: "Loudness of the music relative to the voice's, LU (dB): -18 sits well under speech",
    }),
    ducking: Param.boolean({ default: true, description: 'Dip the music while the voice speaks' }),
    loop: Param.boolean({ default: true, description: 'Repeat the music to cover the whole voice' }),
    fade_in: Param.number({ minimum: 0, maximum: 60, default: 0, description: 'Fade-in of the music, seconds' }),
    fade_out: Param.number({
      minimum: 0,
      maximum: 60,
      default: 2,
      description: "Fade-out of the music, seconds, ending where the music ends (the voice's end when looped)",
    }),
  }),
  output: (_p, inputs) => ({
    field: 'output_file',
    path: `{id}/mixed.${keptContainer(undefined, inputs?.media_url?.[0])}`,
  }),
  check: ({ params, inputs }) => {
    const voice = inputs.media_url![0]!;
    const music = inputs.music_url![0]!;
    if (!voice.facts.audio)
      throw mediaError(`Input ${voice.source} has no audio stream: there is no voice to mix the music under`);
    if (!music.facts.audio) throw mediaError(`Input ${music.source} has no audio stream: there is no music to mix`);
    if (voice.facts.duration === undefined) throw mediaError(`Input ${voice.source} has no known duration`);
    const duration = voice.facts.duration;
    if (params.fade_in + params.fade_out > duration)
      throw paramError(
        `\`fade_in\` and \`fade_out\` together are ${params.fade_in + params.fade_out} s, longer than the voice, ` +
          `which lasts ${Math.round(duration * 1000) / 1000} s`,
      );
  },
  build: ({ params, inputs, output, input }) => {
    const voice = inputs.media_url![0]!;
    const music = inputs.music_url![0]!;
    const { facts } = voice;
    const duration = facts.duration!;
    const container = keptContainer(undefined, facts);
    const picture = facts.video && isVideoContainer(container) ? container : undefined;
    // Without the loop the music stops at its own end when that comes first, and fades out there.
    const musicEnd =
      params.loop || music.facts.duration === undefined ? duration : Math.min(duration, music.facts.duration);
    const format = `aformat=sample_rates=${facts.audio!.sampleRate}:channel_layouts=${layoutOf(facts.audio!.channels)}`;

    /** The pass that mixes, given both loudnesses: only numbers computed here reach the graph. */
    const mix = (voiceLevel: LoudnessMeasure, musicLevel: LoudnessMeasure): Plan => {
      const gain = voiceLevel.integrated + params.music_volume - musicLevel.integrated;
      const fadeOutStart = Math.max(0, musicEnd - params.fade_out);
      const musicChain = [
        `volume=${gain.toFixed(2)}dB`,
        params.fade_in > 0 ? `afade=t=in:st=0:d=${params.fade_in}` : null,
        params.fade_out > 0 ? `afade=t=out:st=${fadeOutStart.toFixed(3)}:d=${params.fade_out}` : null,
        format,
      ].filter(Boolean);
      const graph = params.ducking
        ? [
            `[0:a:0]${format},asplit=2[voice][key]`,
            `[1:a:0]${musicChain.join(',')}[music]`,
            `[music][key]sidechaincompress=threshold=${duckThreshold(voiceLevel.integrated).toFixed(6)}` +
              `:ratio=${DUCK.ratio}:attack=${DUCK.attackMs}:release=${DUCK.releaseMs}[ducked]`,
            // normalize=0: amix would otherwise divide both by two, the voice included.
            '[voice][ducked]amix=inputs=2:duration=first:normalize=0[mixed]',
          ]
        : [
            `[0:a:0]${format}[voice]`,
            `[1:a:0]${musicChain.join(',')}[music]`,
            '[voice][music]amix=inputs=2:duration=first:normalize=0[mixed]',
          ];
      return {
        expectedSeconds: duration,
        commands: [
          argv(
            input(voice),
            // The music's input read again from its start at its end, for as long as the voice needs it.
            params.loop ? ['-stream_loop', '-1'] : null,
            input(music),
            ['-filter_complex', graph.join(';')],
            picture ? ['-map', '0:v:0'] : null,
            ['-map', '[mixed]', '-sn', '-dn'],
            picture && videoCodecFor(picture, facts),
            soundEncoder(container, facts),
            // The voice's length exactly, whatever a copied picture or the encoder's padding would add.
            ['-t', duration.toFixed(3)],
            containerMuxer(container),
            [output],
          ),
        ],
      };
    };

    return {
      expectedSeconds: duration,
      commands: [measuring(input(voice)), measuring(input(music))],
      next: ([voiceLog, musicLog]) => mix(measured(voiceLog, voice, 'voice'), measured(musicLog, music, 'music')),
    };
  },
  message: () => 'Audio mixed successfully',
});
