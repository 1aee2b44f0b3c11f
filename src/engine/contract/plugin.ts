import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import type { Sharp } from 'sharp';
import type { MediaFacts } from './media-facts.js';
import type { Speech, SpeechRequest, SpeechSettings } from './speech.js';
import { TIME_FORM, type TimeRange } from './times.js';

/**
 * The plugin contract's version. A plugin states the version it targets; one that targets
 * another major version is refused when it loads.
 */
export const CONTRACT_VERSION = 1;

/** What an input must contain: an audio stream, a video stream, a picture, a subtitle track, or any media. */
export type InputKind = 'audio' | 'video' | 'image' | 'subtitle' | 'media';

/** Marks a parameter as input URLs the engine downloads and probes before the plugin builds. */
export interface InputSpec {
  kind: InputKind;
  /** A comma-separated list rather than one URL. */
  list: boolean;
  /** Fewest URLs a list needs. */
  min?: number;
  /** The message when a list has fewer than `min` (or no) URLs. */
  tooFew?: string;
}

/** The schema keywords mediaflow adds to JSON Schema. */
export const INPUT_KEYWORD = 'x-mediaflow-input';
export const FORMAT_KEYWORD = 'x-mediaflow-format';
/** Marks a parameter whose value must be a font family installed on the server (GET /fonts). */
export const FONT_KEYWORD = 'x-mediaflow-font';
/** Marks a parameter holding a JSON document (Param.document): an object, whose schema the plugin checks itself. */
export const DOCUMENT_KEYWORD = 'x-mediaflow-document';
/** Marks a parameter of named text values (Param.values), which a form's other fields add to. */
export const VALUES_KEYWORD = 'x-mediaflow-values';
/** Marks a parameter whose value, when given, must be a voice installed on the server (GET /voices). */
export const VOICE_KEYWORD = 'x-mediaflow-voice';

/**
 * Marks a parameter read as times (times.ts): `time` one time in seconds, `times` a list of them,
 * `ranges` a list of `{ start, end }`.
 */
export const TIME_KEYWORD = 'x-mediaflow-time';
export type TimeKind = 'time' | 'times' | 'ranges';

/** A time-valued parameter's schema: text on the wire, parsed into `T` (see TIME_KEYWORD). */
const timeSchema = <T>(kind: TimeKind, description: string, extra: Record<string, unknown> = {}) =>
  Type.Unsafe<T>({ type: 'string', description, [TIME_KEYWORD]: kind, ...extra });

/** Schema helpers: each returns a TypeBox schema that HTTP, CLI, pipelines and docs all read. */
export const Param = {
  /** One input URL (or, from the CLI, a local path). */
  url: (kind: InputKind, description: string) =>
    Type.String({ description, [INPUT_KEYWORD]: { kind, list: false } satisfies InputSpec }),
  /** A comma-separated list of input URLs. */
  urlList: (kind: InputKind, description: string, options: { min?: number; tooFew?: string } = {}) =>
    Type.String({ description, [INPUT_KEYWORD]: { kind, list: true, ...options } satisfies InputSpec }),
  /** An output format from an allowlist; anything else is `Unsupported format '<x>'. Supported formats: ...`. */
  format: <const T extends readonly string[]>(values: T, options: { default?: T[number]; description: string }) =>
    Type.Unsafe<T[number]>({ type: 'string', enum: [...values], [FORMAT_KEYWORD]: true, ...options }),
  /** One of a fixed set of strings. */
  choice: <const T extends readonly string[]>(values: T, options: { default?: T[number]; description: string }) =>
    Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options }),
  /** A whole number within bounds; `examples` are values the API docs offer to try. */
  integer: (options: {
    minimum: number;
    maximum: number;
    default?: number;
    examples?: number[];
    description: string;
  }) => Type.Integer(options),
  /** A number (fractions allowed) within bounds. */
  number: (options: { minimum: number; maximum: number; default?: number; examples?: number[]; description: string }) =>
    Type.Number(options),
  /** A yes/no switch: `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off` from forms and flags). */
  boolean: (options: { default?: boolean; description: string }) => Type.Boolean(options),
  /**
   * A time, as seconds or `[HH:]MM:SS[.mmm]`; the plugin gets seconds (a number). A time past the
   * input's end is for the builder to refuse, with `timeWithin`.
   */
  time: (options: { default?: number; description: string }) =>
    timeSchema<number>('time', `${options.description}: ${TIME_FORM}`, {
      ...(options.default !== undefined ? { default: String(options.default) } : {}),
    }),
  /** A comma-separated list of times; the plugin gets seconds, in the order given. */
  times: (description: string) => timeSchema<number[]>('times', `${description}: times, ${TIME_FORM}, comma-separated`),
  /** A comma-separated list of ranges `<time>-<time>` (`10-20.5`); the plugin gets `{ start, end }` in seconds. */
  ranges: (description: string) =>
    timeSchema<TimeRange[]>(
      'ranges',
      `${description}: ranges <start>-<end> of times, ${TIME_FORM}, comma-separated (10-20.5,00:01:00-00:01:30)`,
    ),
  /** A font family installed on the server (GET /fonts lists them); another name is a 400 naming close matches. */
  font: (description: string) => Type.String({ description, maxLength: 200, [FONT_KEYWORD]: true }),
  /**
   * A JSON document: an object in a JSON body, its JSON text in a form field or a flag, and on the CLI also the
   * command's argument (a file, or `-` for standard input). `schema` describes it for the API docs and MCP; mediaflow
   * only reads it as an object, and the plugin checks it against the schema (in `checkParams`), so that it can tell
   * every problem at once, each with its path (`problemsError`). A plugin has at most one.
   */
  document: (schema: TSchema, options: { description: string; examples?: Array<Record<string, unknown>> }) =>
    Type.Unsafe<Record<string, unknown>>({ ...schema, ...options, type: 'object', [DOCUMENT_KEYWORD]: true }),
  /**
   * Named text values (`{ "TITLE": "Episode 12" }`): an object of them in a JSON body, its JSON text in a form
   * field, `--<name> NAME=value` (repeated) on the CLI. In a form, every field that is none of the plugin's
   * parameters (nor `webhook_url` or `metadata`) is one more value, and a file part of such a name is an input
   * whose URL is its value (a JSON body's other fields stay ignored). A plugin has at most one.
   */
  values: (options: { description: string }) =>
    Type.Unsafe<Record<string, string>>({
      type: 'object',
      additionalProperties: { type: 'string' },
      ...options,
      [VALUES_KEYWORD]: true,
    }),
  /**
   * A voice of text to speech installed on the server (GET /voices lists them), as `<engine>:<name>`; another is a 400
   * naming close matches, given before the job is queued. Leave it optional: without it, the best voice speaks.
   */
  voice: (description: string) => Type.String({ description, maxLength: 200, [VOICE_KEYWORD]: true }),
  /**
   * Free text, bounded in length; `pattern` (a regular expression) restricts its form, which
   * `description` should say in words.
   */
  text: (options: {
    description: string;
    maxLength: number;
    minLength?: number;
    default?: string;
    examples?: string[];
    pattern?: string;
  }) => Type.String(options),
};

/** Optional parameter without default (TypeBox's Optional, re-exported so plugins need only this module). */
export const Optional = Type.Optional;
export { Type };
export type { Static, TObject, TSchema, TimeRange };

/** A downloaded, probed input as a builder sees it. */
export interface LocalInput {
  /** File name inside the job's workspace (ffmpeg runs there); never a user string. */
  file: string;
  /** The URL or path the user gave. */
  source: string;
  facts: MediaFacts;
  /**
   * Inputs of kind `subtitle` only: the subtitles as ASS text, as ffmpeg converts them for libass
   * (SRT and WebVTT cues as events of one `Default` style; ASS and SSA with their own styles).
   */
  ass?: string;
  /**
   * Inputs the engine spoke (NamedInput.speak) only: the voice that spoke, and when each sentence and word is said,
   * in seconds of the file.
   */
  speech?: Omit<Speech, 'file'>;
}

/** The probed facts of each input parameter's inputs, in the order given, as `output` sees them. */
export type InputFacts = Record<string, MediaFacts[]>;

/**
 * An input a plugin names from its parameters (`PluginDefinition.inputs`) rather than by a URL parameter: fetched,
 * cached, checked and probed as those are, and given to `check` and `build` as `inputs[name]` (a list of one). With
 * `speak`, nothing is fetched: the engine speaks the text into a WAV (docs/voice.md) and probes that.
 */
export interface NamedInput {
  /** Its key in the builder's `inputs`: a generated name, not a parameter's. */
  name: string;
  /** The URL, or from the CLI a local path; for speech, what it is, as messages name it (`the speech of ...`). */
  source: string;
  kind: InputKind;
  /** Speech to make instead of fetching (kind `audio`): the input is its WAV, its timings `LocalInput.speech`. */
  speak?: SpeechInput;
}

/**
 * What a plugin asks the engine to speak as an input (StepContext.speak's request), and where the request says it: its
 * voice is checked before the job is queued (a 400 at `<at>.voice` naming close matches, a 501 for a neural voice
 * without its runtime), and its text counts against MEDIAFLOW_MAX_TEXT_BYTES with the others' (a 413 naming
 * `<at>.text`).
 */
export interface SpeechInput extends SpeechRequest {
  /** The JSON path of the object holding `text` and `voice` in the parameters (`tracks[1].clips[0]`). */
  at: string;
}

/** The server's settings a plugin's checks and builder may read (docs/configuration.md). */
export interface PluginSettings {
  /** MEDIAFLOW_MAX_DURATION, in seconds: the longest an input, or an output, may last. */
  maxDuration: number;
  /** MEDIAFLOW_MAX_PIXELS: the most pixels of one picture or frame. */
  maxPixels: number;
  /** MEDIAFLOW_MAX_INPUTS: the most inputs one request may name. */
  maxInputs: number;
  /** MEDIAFLOW_MAX_CLIPS: the most clips one edit document (a render's timeline) may hold. */
  maxClips: number;
  /** MEDIAFLOW_TEMPLATES: the folder of edit templates, for an operation that takes one by name. */
  templatesDir: string;
  /** MEDIAFLOW_PART_SECONDS: about how long one part of an encode made in parts is (Plan.readyParts). */
  partSeconds: number;
  /** Speech recognition here (MEDIAFLOW_WHISPER_MODEL, MEDIAFLOW_WHISPER_BINDING), for `speechModel`. */
  speech: SpeechSettings;
}

/** Everything a builder gets. Builders are pure: they return a plan, they do not run anything. */
export interface BuildContext<P> {
  params: P;
  /** Inputs by parameter name, in the order given. */
  inputs: Record<string, LocalInput[]>;
  /** File name the plan must produce, inside the workspace: the first of `outputs` (empty when there is none). */
  output: string;
  /**
   * Every file name the plan must produce, one per output path in order: one for `{ field, path }`,
   * one per path for `{ files }`, none for `{ files: [] }`.
   */
  outputs: string[];
  /** ffmpeg options that open one input safely: only local files, only the demuxers its kind needs. */
  input: (input: LocalInput) => string[];
  /** The server's limits and folders (PluginSettings): mediaflow always gives them; a test's own context may not. */
  settings?: PluginSettings;
}

/**
 * What to do: files to write in the workspace (generated names only), then in-process steps, then
 * ffmpeg commands in order (each the arguments after the binary). A plan with no commands writes
 * its output in its steps.
 */
export interface Plan {
  files?: Record<string, string>;
  /** Work done inside mediaflow's process before the commands (see `Step`); `--dry-run` lists their labels. */
  steps?: Step[];
  commands: string[][];
  /**
   * Seconds of output expected: progress is reported as a ratio of it, a plan expecting more than
   * MEDIAFLOW_MAX_DURATION is refused (422), and the final command is capped at it plus a margin
   * (`-t`, `-frames:v`; the limit itself when absent), so a lying input cannot make it longer.
   */
  expectedSeconds?: number;
  /**
   * The largest picture the plan's commands make, as the probed inputs and the parameters give it: an output frame,
   * or a picture on the way to one (a contact sheet). More pixels than MEDIAFLOW_MAX_PIXELS is refused (422) before
   * anything runs, as an input picture of that size is: a decoder's and an encoder's memory grows with it.
   */
  frameSize?: { width: number; height: number };
  /**
   * Seconds of the output each command writes, one number per command, for commands that write it in
   * consecutive parts (a slideshow's pieces, then a join that only copies them: 0). Progress then follows
   * every command through its own part; without `parts` it follows the final command alone.
   */
  parts?: number[];
  /**
   * Fields the answer carries beside the output (a measured loudness, the seconds removed): plain
   * JSON values under the names the plugin declares in `answers`. Each stage may add some; a later
   * stage's value of a name replaces an earlier one's.
   */
  answers?: Record<string, unknown>;
  /**
   * The next stage, decided from what this stage's commands logged (each command's stderr, in order;
   * a command that wants its filters' figures asks for them with its own `-loglevel info`): a
   * measuring pass first, then the pass that uses its figures. Called after the commands have run,
   * like `build`, synchronously and without side effects; `--dry-run` shows the first stage only.
   */
  next?: (logs: string[]) => Plan | string[];
  /**
   * The part of the job's processing this stage takes, 0 to 1, for its progress: a quick first stage (a decode
   * before a long recognition) says how little it weighs. Without it, a stage takes an equal part of what earlier
   * stages left (half of it while it has a `next`).
   */
  share?: number;
  /**
   * How the stage's encode splits into parts, for an encode that maps the input's frames one to one (a re-encode,
   * burned-in text, an overlay): given, and the input long enough, the engine runs these instead of `commands`
   * (docs/fanout.md). The parts are encoded at once, by this process's slots or by any worker, and joined by
   * stream copy; the audio is encoded once, whole.
   */
  fanout?: FanoutSpec;
  /**
   * The stage's encode as parts the plugin has cut itself (a render's scenes), each a ready command with only its own
   * inputs open: `commands` make them one after another and join them (`joinParts`); given, and the output longer
   * than MEDIAFLOW_FANOUT_MIN, the engine runs these at once instead, by this process's slots or by any worker, the
   * audio once, whole, on the job's own worker, and joins them by stream copy (docs/fanout.md). When the joined file
   * does not hold every part's frames, `commands` run after all.
   */
  readyParts?: ReadyParts;
}

/** An encode in parts that the plugin made itself (Plan.readyParts): the join copies them, so they share a codec. */
export interface ReadyParts {
  /** The parts, in the order of the output. */
  parts: readonly ReadyPart[];
  /**
   * The command writing the output's audio, whole, into `output` (`.m4a` for AAC, `.mka` for others), on the job's own
   * worker; none: no audio.
   */
  audio?: { command: string[]; output: string };
  /** Options of the join's output before its file name: the muxer's (`-f mp4 -movflags +faststart`). */
  muxer: readonly string[];
  /** The file the join writes: the plan's output. */
  output: string;
}

/** One part of ReadyParts: a command writing its picture, video only, and what the join needs to know of it. */
export interface ReadyPart {
  command: string[];
  /** The file `command` writes, in a container the concat demuxer reads (mp4, or webm for VP9). */
  output: string;
  /** Frames it holds: the joined output must hold every part's. */
  frames: number;
  /** Where its first frame is on the output's clock, and how long it lasts, in seconds. */
  start: number;
  seconds: number;
  /** The workspace files its command reads (its inputs, its generated files): a part on another worker gets these. */
  reads: readonly string[];
  /** What it is, as its failure names it: `Scene 2 of 5 (60 to 120 s of the timeline)`. */
  label: string;
}

/**
 * A frame-by-frame encode, as parts: one video-only command per part, one audio command, and the options of the join.
 * Every part must be encoded with the same encoder options, into H.264 or HEVC: the join copies them.
 */
export interface FanoutSpec {
  /** The video input whose frames the output's are, one to one. */
  input: LocalInput;
  /**
   * The spans of the input the output holds, in order, when not the whole input (a trim, a cut): each from `start`
   * to `end` on the input's own clock (its first frame at 0). The output's clock runs through them one after the
   * other, from 0.
   */
  windows?: readonly TimeRange[];
  /**
   * Workspace files the commands read besides the inputs and the plan's `files`: what a step writes (add-subtitles'
   * restyled script). A part on another worker gets only these, the inputs and `files`.
   */
  reads?: readonly string[];
  /** The video-only command of one part (see FanoutPart), writing `part.output`, an mp4. */
  video: (part: FanoutPart) => string[];
  /** The command writing the output's audio, whole, into `output` (named `audio<audioExtension>`); none: no audio. */
  audio?: (output: string) => string[];
  /** The audio file's extension, a container for the audio codec the command writes (`.m4a` for AAC). */
  audioExtension?: string;
  /** Options of the join's output before its file name: the muxer's (`-f mp4 -movflags +faststart`). */
  muxer: readonly string[];
  /** The file the join writes: the plan's output. */
  output: string;
}

/**
 * Output options that keep the input's frames and their times: one output frame for each decoded one, on the
 * input's own clock. A split encode's parts have them, and so has the one pass of an encode that could be split, so
 * that both make the same frames (an mp4's default would make the rate constant, repeating or dropping frames).
 */
export const KEEP_FRAME_TIMES: readonly string[] = ['-fps_mode', 'passthrough', '-enc_time_base:v', '-1'];

/** One part of a split encode, as `FanoutSpec.video` gets it. */
export interface FanoutPart {
  /**
   * The seek to the part's first frame, to put before the split input's options (`-ss <time>`): an accurate seek,
   * which decodes from the keyframe at or before it: the part's first frame, a keyframe but for a window's first part.
   */
  seek: string[];
  /** Where the part starts on the input's clock, in seconds. */
  start: number;
  /**
   * The filter that puts the part's frames on the output's clock (the input's, or through the windows), before any
   * filter that depends on time (subtitles, `enable=`, drawtext's `t`): `setpts=PTS+<seconds>/TB`. A chain that
   * starts with it ends with `reset`.
   */
  shift: string;
  /** The filter that ends a shifted chain: `setpts=PTS-STARTPTS`, so that the part's file starts at 0. */
  reset: string;
  /**
   * Output options for the part's frames: one for each decoded frame, and no more (`-frames:v <n>`), each at its own
   * time (KEEP_FRAME_TIMES).
   */
  frames: string[];
  /** The part's file name in the workspace. */
  output: string;
}

/**
 * Work a plan does in process instead of, or before, ffmpeg: a picture through libvips (`imageStep`)
 * costs no process start and no filter graph. It runs in the job's slot, under its cancellation and
 * time limit; what it throws fails only its job, as a plugin hook's throw does.
 */
export interface Step {
  /** What it does, one line: `--dry-run` prints it where it would print an ffmpeg argv. */
  label: string;
  run: (context: StepContext) => Promise<void>;
}

/** What a step gets. Files are named as in the plan: inputs' `file`, the `output`, generated names. */
export interface StepContext {
  /** Aborted when the job is cancelled or passes its time limit (`MEDIAFLOW_JOB_TIMEOUT`). */
  signal: AbortSignal;
  /** The workspace file of a generated name, as an absolute path (another name is refused). */
  path: (name: string) => string;
  /**
   * Reads a picture of the workspace with libvips (sharp) under the server's limits (pixels,
   * accepted formats, EXIF orientation applied, first frame only), lets `transform` describe the
   * work, and writes `output`. libvips' failures are 422s, its time limit a 504.
   */
  image: (input: string, transform: (image: Sharp) => Sharp, output: string) => Promise<void>;
  /**
   * Runs `name`, a function exported by `module` (the plugin's own file URL, `new URL(import.meta.url)`
   * or a sibling's), in a worker thread of the server's small pool, with `args` copied across
   * (plain data and workspace paths), and resolves with what it returns. For CPU work on text of
   * megabytes, which on the main thread would stall every request and /health; ended on cancel.
   */
  offThread: <T>(module: URL, name: string, args: unknown[]) => Promise<T>;
  /**
   * Runs a program in the workspace (an argument array, never a shell) and resolves with how it ended and what it
   * printed, whatever its exit status; `onLine` hears each line of its stdout as it comes. On cancel and at the time
   * limit it gets SIGTERM, then SIGKILL 2 s later, and the job ends once it has exited. For work outside ffmpeg that
   * only a process of its own can stop (a native library that ignores requests to stop).
   */
  spawn: (command: string, args: readonly string[], options?: { onLine?: (line: string) => void }) => Promise<Spawned>;
  /** Reports how far the step is, 0 to 1: the job's progress follows it while the stage has no ffmpeg command. */
  progress: (ratio: number) => void;
  /** Adds fields to the answer, as `Plan.answers` does, for a result known only once the step has run. */
  answer: (fields: Record<string, unknown>) => void;
  /**
   * Speaks `request.text` with the server's voices (docs/voice.md) into `output`, a workspace WAV of a generated name
   * (16-bit mono at the voice's rate), and resolves with its duration and when each sentence and word of it is
   * spoken, in seconds. An unknown voice is a 400, a neural voice without its runtime a 501. The programs it runs
   * are killed on cancel and at the time limit, and the job ends once they have exited. Its progress is the step's,
   * unless `options.progress` hears it instead.
   */
  speak: (request: SpeechRequest, output: string, options?: { progress?: (ratio: number) => void }) => Promise<Speech>;
  /** Speech recognition as the engine running the step has it set up, for `recogniseSpeech`. */
  speech: SpeechSettings;
}

/** How a program run by `StepContext.spawn` ended: its exit code (or the signal that ended it) and its output. */
export interface Spawned {
  exitCode?: number;
  signal?: string;
  stdout: string;
  stderr: string;
}

/** A step that reads `input` with libvips, transforms it and writes `output` (see StepContext.image). */
export function imageStep(label: string, input: string, output: string, transform: (image: Sharp) => Sharp): Step {
  return { label, run: (context) => context.image(input, transform, output) };
}

/**
 * Where the output goes, as paths under uploads with `{id}` for the job's random id: one file, its
 * URL answered under `field` (`{ field, path }`); or several (`{ files }`), answered as
 * `output_files` (every URL, in order) and `output_file` (the first, for tools that read one
 * URL); or none (`{ files: [] }`), for an operation whose answer is its result.
 */
export type OutputSpec = SingleOutput | { files: string[] };

/** One output file: the response field of its URL and its path under uploads. */
export interface SingleOutput {
  field: string;
  path: string;
  /** More answer fields carrying the same URL: a name established clients read (`subtitle_file_url`). */
  alsoAs?: string[];
  /**
   * Files written beside the output, each answered under a field of its own (speak's captions, as
   * `subtitle_file_url`). The output stays the one file a pipeline step hands on; these are named by their field.
   */
  alongside?: AlongsideOutput[];
}

/** A file written beside a single output: the response field of its URL and its path under uploads. */
export interface AlongsideOutput {
  field: string;
  path: string;
}

/** The paths of an output spec, in order: one (and the files alongside it), several or none. */
export const outputPaths = (spec: OutputSpec): string[] =>
  'files' in spec ? spec.files : [spec.path, ...(spec.alongside ?? []).map((file) => file.path)];

/**
 * The answer fields of an output's files, each path shown as `show` makes it (a URL, a local path):
 * `{ <field>: one }` (and each file alongside it under its field), or `{ output_file: first, output_files: every }`
 * for several, `{}` for none.
 */
export function answerFiles<T>(spec: OutputSpec, show: (path: string) => T): Record<string, T | T[]> {
  if (!('files' in spec)) {
    const shown = show(spec.path);
    return Object.fromEntries([
      ...[spec.field, ...(spec.alsoAs ?? [])].map((field) => [field, shown]),
      ...(spec.alongside ?? []).map((file) => [file.field, show(file.path)]),
    ]);
  }
  const shown = spec.files.map(show);
  return shown.length > 0 ? { output_file: shown[0]!, output_files: shown } : {};
}

/** A plugin: a plain object describing one operation. */
export interface PluginDefinition<S extends TObject = TObject> {
  /** The contract version this plugin targets. */
  contract: number;
  /** Id, CLI subcommand and pipeline operation name. */
  name: string;
  /** HTTP route, e.g. `/merge-audios/`. */
  path: string;
  summary: string;
  description?: string;
  /** Plugin's own version, shown by `mediaflow plugins`. */
  version?: string;
  params: S;
  /**
   * The fields the answer carries beside the output, as a schema (the API docs show it); a plan
   * answers them in `Plan.answers`, and a name not declared here fails the job.
   */
  answers?: TObject;
  /**
   * Where the output goes. `inputs`, the probed facts of each input parameter, is given once the
   * inputs are probed (a run, a dry run), so that an output can take the input's own container
   * (`containerOf`); it is absent when mediaflow asks before any input exists (registration, the
   * API docs, a pipeline's check), and the answer then is a likely path of the same form.
   */
  output: (params: Static<S>, inputs?: InputFacts) => OutputSpec;
  /**
   * Checks a combination of parameters the schema cannot express, before anything is queued or
   * downloaded: throw `paramError` (400), and an asynchronous request is refused at once, not
   * accepted and failed. It may return the params every later hook sees instead (a template read,
   * a document's merge fields filled in and checked); returning nothing keeps them.
   */
  checkParams?: (params: Static<S>, settings: PluginSettings) => Static<S> | void;
  /**
   * Inputs the parameters name other than by URL parameters (the media of a document's clips): each is fetched,
   * cached, checked against its kind and probed like a URL parameter's, counted against MEDIAFLOW_MAX_INPUTS, and
   * handed to `check` and `build` under its `name`. List each source once, however often the parameters use it. An
   * input with `speak` is speech the engine makes from text instead (NamedInput.speak).
   */
  inputs?: (params: Static<S>) => NamedInput[];
  /**
   * Seconds of output the parameters alone ask for (a slideshow: images x seconds each), when they
   * say; more than MEDIAFLOW_MAX_DURATION is refused with a 400 before anything is queued. Once
   * inputs are probed, the plan's `expectedSeconds` is checked against the limit too (422).
   */
  outputSeconds?: (params: Static<S>) => number | undefined;
  /**
   * The size of the output's pictures the parameters alone set (a frame of width x height), when they do; more
   * pixels than MEDIAFLOW_MAX_PIXELS is refused with a 400 before anything is queued. Sizes known only once the
   * inputs are probed go in the plan's `frameSize` (422).
   */
  outputSize?: (params: Static<S>) => { width: number; height: number } | undefined;
  /** Checks probed inputs beyond their kind; throw `mediaError` for unusable ones. */
  check?: (context: BuildContext<Static<S>>) => void;
  build: (context: BuildContext<Static<S>>) => Plan | string[];
  message: (params: Static<S>) => string;
}

/**
 * Where `definePlugin` was called: a hidden, non-enumerable mark (shared by every copy of
 * mediaflow through the global symbol registry). A plugin object listed in a config file carries
 * no package name, and this file is how its package, and so its version, is found.
 */
export const DEFINED_IN = Symbol.for('mediaflow.plugin.definedIn');

/** The file of the function that called `callee`, from V8's structured stack trace. */
function callerFile(callee: (...args: never[]) => unknown): string | undefined {
  const original = Error.prepareStackTrace;
  try {
    Error.prepareStackTrace = (_error, frames) => frames;
    const holder: { stack?: NodeJS.CallSite[] } = {};
    Error.captureStackTrace(holder, callee);
    return holder.stack?.[0]?.getFileName() ?? undefined;
  } finally {
    Error.prepareStackTrace = original;
  }
}

/**
 * Declares a plugin: adds types, like Vite's `defineConfig`, and marks the module it is written in (see DEFINED_IN).
 */
export function definePlugin<S extends TObject>(plugin: PluginDefinition<S>): PluginDefinition<S> {
  const file = callerFile(definePlugin);
  if (file && typeof plugin === 'object' && plugin !== null && Object.isExtensible(plugin) && !(DEFINED_IN in plugin)) {
    Object.defineProperty(plugin, DEFINED_IN, { value: file, enumerable: false });
  }
  return plugin;
}

/** The name of the parameter of a schema that is marked with `keyword` (DOCUMENT_KEYWORD, VALUES_KEYWORD), if any. */
export const paramMarked = (params: TObject, keyword: string): string | undefined =>
  Object.keys(params.properties).find((key) => (params.properties[key] as Record<string, unknown>)[keyword]);

/** The input spec of a parameter schema, if it is an input. */
export const inputSpecOf = (schema: TSchema): InputSpec | undefined =>
  (schema as Record<string, unknown>)[INPUT_KEYWORD] as InputSpec | undefined;

/** Builds an argv from groups that may be null, flattened (docs/architecture.md, "Code style"). */
export function argv(...groups: Array<readonly string[] | null | undefined | false>): string[] {
  return groups.filter((group): group is readonly string[] => Array.isArray(group)).flat();
}

/**
 * Escapes a value for use inside an ffmpeg filter graph option (`filter=key=VALUE`): first for the
 * option level, then for the graph level. Only generated names should reach filters; this is for
 * the rare value that must.
 */
export function escapeFilterValue(value: string): string {
  const optionLevel = value.replace(/[\\':]/g, (c) => `\\${c}`);
  return optionLevel.replace(/[\\'[\],;]/g, (c) => `\\${c}`);
}
