import type { LocalInput, OutputSpec, PluginDefinition } from '../contract/plugin.js';
import type { OutputStore } from '../storage/storage.js';

/** Where a job is, for progress displays. */
export interface JobProgress {
  stage: 'queued' | 'download' | 'probe' | 'process' | 'publish';
  /** 0..1 within the processing stage, when ffmpeg's position and the expected duration are known. */
  ratio?: number;
  /** The parts the processing's encode is split into, when it is (docs/fanout.md). */
  parts?: number;
}

export interface JobOptions {
  /** The output's identifier (`{id}` in its path); a job passes its output id, so a re-run writes to the same place. */
  id?: string;
  /** The job record this run belongs to, when it runs as a job: its split encode's parts are that job's (fanout). */
  owner?: string;
  /** Cancels the job: off the queue if waiting, ffmpeg killed if running. */
  signal?: AbortSignal;
  onProgress?: (progress: JobProgress) => void;
  /**
   * Which inputs are local files rather than URLs: returns the path for a source that names a
   * local file. The CLI accepts any path (`anyLocalPath`); pipelines accept only their own files.
   */
  localFiles?: LocalFilePolicy;
  /** Publishes the output here instead of the engine's store (pipelines keep intermediates apart). */
  store?: OutputStore;
  /**
   * Checks where the output will go once the inputs are probed, before anything runs (the CLI's
   * `--output` name against the output's extension, which may follow the input's container).
   */
  checkOutput?: (output: OutputSpec) => void;
}

/**
 * A job's options as it runs in its slot: its signal also ends it at its whole-job time limit, and `deadline` says
 * when that is (performance.now()'s clock), for work that is told its time left rather than stopped (libvips).
 */
export interface RunningOptions extends JobOptions {
  deadline: number;
}

/**
 * Maps an input the user gave to a local path, or to a published output of the engine's store
 * (`{ stored }`: this server's own result URLs), or undefined when it is to be fetched as a URL.
 */
export type LocalFilePolicy = (source: string) => string | { stored: string } | undefined;

/** Whether a string is an absolute URL (any scheme), as opposed to a path. */
export const isUrl = (source: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(source);

/** The CLI's policy: anything that is not a URL is a path. */
export const anyLocalPath: LocalFilePolicy = (source) => (isUrl(source) ? undefined : source);

/**
 * One operation as it runs in its slot, once its inputs are in: what running its plan's stages, their steps, commands
 * and parts share (run-plan.ts), given as one value rather than threaded through every call.
 */
export interface JobRun {
  /** The output's identifier, unique to the run (JobOptions.id). */
  id: string;
  /** Its workspace. */
  dir: string;
  plugin: PluginDefinition;
  /** Its inputs by parameter, fetched into `dir` and probed. */
  inputs: Record<string, LocalInput[]>;
  options: RunningOptions;
}
