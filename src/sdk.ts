/**
 * The plugin SDK: everything a plugin may use, built-in or third-party. Plugins import only from
 * here (or, outside this repository, from the `mediaflow` package, which re-exports it).
 */
export {
  CONTRACT_VERSION,
  Param,
  Optional,
  Type,
  argv,
  definePlugin,
  escapeFilterValue,
  imageStep,
  outputPaths,
  type BuildContext,
  type FanoutPart,
  type FanoutSpec,
  type InputFacts,
  type InputKind,
  type InputSpec,
  type LocalInput,
  type NamedInput,
  type OutputSpec,
  type Plan,
  type PluginDefinition,
  type PluginSettings,
  type SingleOutput,
  type Static,
  type Step,
  type StepContext,
  type Spawned,
  type TObject,
  type TimeRange,
} from './engine/plugins/plugin.js';
export { parseTime, TIME_PATTERN, timeWithin } from './engine/plugins/times.js';
export { libvipsReads } from './engine/run/libvips.js';
export {
  recogniseSpeech,
  recognitionLanguage,
  speechModel,
  type HeardWord,
  type Recognised,
} from './engine/speech/recognise.js';
export { WHISPER_LANGUAGES } from './engine/speech/languages.js';
export { SPEED_RANGE as SPEECH_SPEED_RANGE, type SpeechRequest } from './engine/voice/voices.js';
export type { Speech, TimedSentence, TimedWord, Voice } from './engine/voice/voice-types.js';
/** The sharp (libvips) pipeline an `imageStep` transform receives and returns. */
export type { Sharp } from 'sharp';
export { concatList, concatListArgs } from './engine/inputs/input-policy.js';
export type { AudioFacts, MediaFacts, VideoFacts } from './engine/probe/media-facts.js';
export {
  mediaError,
  paramError,
  problemsError,
  unsupportedFormat,
  MediaflowError,
  type Problem,
} from './engine/errors.js';
export {
  VIDEO_CONTAINERS,
  QUALITIES,
  qualityParam,
  type Quality,
  audioCodecFor,
  audioEncoder,
  containerOf,
  even,
  isVideoContainer,
  evenPadFilter,
  evenSizeArgs,
  isLargeFrame,
  muxerFor,
  videoCodecFor,
  videoEncoder,
  type VideoContainer,
  type VideoEncodeOptions,
} from './sdk/encoding.js';
export {
  AUDIO_CONTAINERS,
  audioFileCodecFor,
  audioFileEncoder,
  audioFileSampleRate,
  audioMuxerFor,
  isAudioFileOf,
  type AudioContainer,
} from './sdk/audio-encoding.js';
export { keyframeListing, keyframesIn } from './sdk/keyframes.js';
export { fanoutParam, frameByFrame, keptFrameTimes, splitsInParts, type FrameByFrame } from './sdk/fanout.js';
