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
} from '../../sdk.js';
import { containerMuxer, keptContainer, soundEncoder } from '../shared/kept-container.js';
import { ebur128Summary, type LoudnessMeasure } from '../shared/loudness-log.js';
import { measuringPass } from './windowed-loudness.js';

/**
 * The ducking compressor, keyed on the voice. Its threshold sits this many dB under the voice's integrated
 * loudness, so that speech at its usual levels is well over it and a pause (room tone, silence) under it;
 * at a ratio of 6 speech 10 dB over the threshold dips the music by about 8 dB, 20 dB over by about 17.
 * The attack is quick enough to clear the first syllable, the release slow enough not to pump between words.
 * It runs at `keyRate` samples a second, not the music's: the gain it computes (a logarithm and an exponential
 * a sample, most of what ducking cost at 44.1 kHz) moves over tens of milliseconds, so 2,000 values a second
 * follow it, and the gain is then brought up to the music's rate and multiplied in.
 */
const DUCK = { belowVoice: 20, ratio: 6, attackMs: 20, releaseMs: 500, keyRate: 2000 };

/**
 * A looped music shorter than the voice is decoded once and repeated from memory (`aloop`) when its samples, as
 * 32-bit floats at the voice's rate and channels, fit in this many bytes (3 minutes of 48 kHz stereo is 66 MiB);
 * a longer one is read again from its start instead, at the cost of decoding it again.
 */
const LOOP_BYTES = 128 * 1024 * 1024;

/** The samples `aloop` keeps of a music of `seconds`, at the voice's rate and channels, when they fit LOOP_BYTES. */
function loopSamples(seconds: number | undefined, rate: number, channels: number): number | undefined {
  if (seconds === undefined) return undefined;
  // A second over the probed length: a track that ends sooner is repeated from its real end.
  const samples = Math.ceil((seconds + 1) * rate);
  return samples * channels * 4 <= LOOP_BYTES ? samples : undefined;
}

/**
 * ffmpeg reads each input in a thread of its own when there are several, handing every packet over; with its
 * default queue of 8 packets the two threads wake each other for every packet (a quarter of a second of system
 * time for a 10-minute MP3). An audio file of at most `bytes` gets a queue of `packets`, so that it is read
 * ahead in one go: at most its own size in memory.
 */
const READ_AHEAD = { bytes: 64 * 1024 * 1024, packets: 65536 };

/**
 * Samples a frame of the voice is regrouped into before the filters: decoders give small frames (1,152 samples
 * of MP3, 1,024 of AAC), and every filter a frame goes through costs something per frame; in larger ones the
 * mix of a 10-minute MP3 took 0.2 s less CPU.
 */
const VOICE_FRAME = 16384;

/** sidechaincompress takes its threshold as an amplitude from 1/1024 to 1. */
const duckThreshold = (voiceLufs: number): number =>
  Math.min(1, Math.max(1 / 1024, 10 ** ((voiceLufs - DUCK.belowVoice) / 20)));

/** The input options of an input that is read whole, ahead of its decoding when it is a small audio file. */
const wholeInput = (media: LocalInput, input: (media: LocalInput) => string[]): string[] =>
  argv(
    !media.facts.video && (media.facts.size ?? Infinity) <= READ_AHEAD.bytes
      ? ['-thread_queue_size', String(READ_AHEAD.packets)]
      : null,
    input(media),
  );

/** A measured loudness, refused when it is silence: a silent voice gives no level to set the music by. */
function measured(log: string | undefined, media: LocalInput, what: 'voice' | 'music'): LoudnessMeasure {
  const measure = ebur128Summary(log ?? '', what);
  if (!measure) throw new Error(`ebur128 logged no summary of the ${what}`);
  if (measure.integrated <= -70) throw mediaError(`Input ${media.source} is silent: there is no ${what} to mix`);
  return measure;
}

/** A channel layout ffmpeg's aformat takes for a count of channels. */
const layoutOf = (channels: number): string => (channels === 1 ? 'mono' : channels === 2 ? 'stereo' : `${channels}c`);

/**
 * The ducking gain, as a stream at the voice's rate and channels, from the voice (`key`): the compressor keyed on
 * the voice read at `DUCK.keyRate` squeezes a constant 1 of the voice's channels (sidechaincompress would
 * otherwise spread a single one over them, 3 dB down), so that what comes out is its gain alone; each of its
 * values is then held for the samples of the voice's rate it stands for. Both changes of rate are a plain pick
 * and a plain repeat (`filter_size=1:phase_shift=0`): a filter would cost more than the compressor saved, the
 * level detector needs no more than one sample in 20 or so, and the gain moves by at most about half a dB from
 * one value to the next, during the 20 ms attack.
 */
function duckingGain(key: string, voiceLufs: number, rate: number, layout: string, seconds: number): string {
  const keyRate = Math.min(DUCK.keyRate, rate);
  const pick = 'filter_size=1:phase_shift=0';
  return [
    `[${key}]aresample=${keyRate}:${pick}[slowkey]`,
    // A second longer than the voice, so that the gain never ends before it.
    `aevalsrc=1:c=${layout}:s=${keyRate}:d=${(seconds + 1).toFixed(3)}[one]`,
    `[one][slowkey]sidechaincompress=threshold=${duckThreshold(voiceLufs).toFixed(6)}` +
      `:ratio=${DUCK.ratio}:attack=${DUCK.attackMs}:release=${DUCK.releaseMs},aresample=${rate}:${pick}[gain]`,
  ].join(';');
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'mix-audio',
  path: '/mix-audio/',
  summary: 'Mix music under a voice or a video’s sound, looped, faded and ducked under speech',
  description:
    'Both sounds are measured first (integrated loudness, EBU R128; past a minute, on six 5-second windows); the ' +
    "music is then set by one gain so that its loudness is `music_volume` LU from the voice's (-18: the music 18 LU " +
    'under the voice), looped to cover the voice when `loop` is on, faded in and out, and, with `ducking` on, ' +
    'compressed while the voice speaks (a compressor keyed on the voice) so that it dips under speech and comes ' +
    "back in the pauses. The voice's own level is never changed. The output lasts as long as the voice and keeps " +
    'its channels, sample rate and container (MP4 and MOV as mp4, Matroska as mkv or webm, mp3, m4a, wav, ...); ' +
    "a video's picture is copied.",
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
    const { sampleRate, channels } = facts.audio!;
    const layout = layoutOf(channels);
    const format = `aformat=sample_rates=${sampleRate}:channel_layouts=${layout}`;
    const voiceChain = `${format},asetnsamples=n=${VOICE_FRAME}:p=0`;
    // Looped, the music is repeated from memory when it fits there (decoded once), else read again from its start.
    const looped = params.loop && (music.facts.duration === undefined || music.facts.duration < duration);
    const inMemory = looped ? loopSamples(music.facts.duration, sampleRate, channels) : undefined;

    /** The pass that mixes, given both loudnesses: only numbers computed here reach the graph. */
    const mix = (voiceLevel: LoudnessMeasure, musicLevel: LoudnessMeasure): Plan => {
      const gain = voiceLevel.integrated + params.music_volume - musicLevel.integrated;
      const fadeOutStart = Math.max(0, musicEnd - params.fade_out);
      const musicChain = [
        format,
        inMemory ? `aloop=loop=-1:size=${inMemory}` : null,
        params.fade_in > 0 ? `afade=t=in:st=0:d=${params.fade_in}` : null,
        params.fade_out > 0 ? `afade=t=out:st=${fadeOutStart.toFixed(3)}:d=${params.fade_out}` : null,
      ].filter(Boolean);
      // The music's gain is amix's weight for it; normalize=0: amix would otherwise divide both by two, the voice too.
      const mixing = `amix=inputs=2:duration=first:normalize=0:weights=1 ${(10 ** (gain / 20)).toPrecision(6)}[mixed]`;
      const graph = params.ducking
        ? [
            `[0:a:0]${voiceChain},asplit=2[voice][key]`,
            duckingGain('key', voiceLevel.integrated, sampleRate, layout, duration),
            `[1:a:0]${musicChain.join(',')}[music]`,
            '[music][gain]amultiply[ducked]',
            `[voice][ducked]${mixing}`,
          ]
        : [`[0:a:0]${voiceChain}[voice]`, `[1:a:0]${musicChain.join(',')}[music]`, `[voice][music]${mixing}`];
      return {
        expectedSeconds: duration,
        commands: [
          argv(
            wholeInput(voice, input),
            looped && !inMemory ? ['-stream_loop', '-1'] : null,
            wholeInput(music, input),
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
      ...measuringPass({ voice, music }, input),
      next: ([log]) => mix(measured(log, voice, 'voice'), measured(log, music, 'music')),
    };
  },
  message: () => 'Audio mixed successfully',
});
