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
  type SpeechInput,
  type OutputSpec,
  type Plan,
  type PluginDefinition,
  type PluginSettings,
  type ReadyPart,
  type ReadyParts,
  type SingleOutput,
  type Static,
  type Step,
  type StepContext,
  type Spawned,
  type TObject,
  type TimeRange,
} from './engine/contract/plugin.js';
export { parseTime, TIME_PATTERN, timeWithin } from './engine/contract/times.js';
export { libvipsReads } from './engine/exec/libvips.js';
export {
  recogniseSpeech,
  recognitionLanguage,
  speechModel,
  type HeardWord,
  type Recognised,
} from './engine/speech/recognise.js';
export { WHISPER_LANGUAGES } from './engine/speech/languages.js';
export {
  SPEED_RANGE as SPEECH_SPEED_RANGE,
  type Speech,
  type SpeechRequest,
  type SpeechSettings,
  type TimedSentence,
  type TimedWord,
  type Voice,
} from './engine/contract/speech.js';
/** The sharp (libvips) pipeline an `imageStep` transform receives and returns. */
export type { Sharp } from 'sharp';
export { concatList, concatListArgs } from './engine/exec/input-policy.js';
export type { AudioFacts, MediaFacts, VideoFacts } from './engine/contract/media-facts.js';
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
export {
  fanoutParam,
  frameByFrame,
  joinParts,
  keptFrameTimes,
  splitsInParts,
  type FrameByFrame,
  type Join,
  type PlacedPart,
} from './sdk/fanout.js';
