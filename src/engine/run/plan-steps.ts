import path from 'node:path';
import { MediaflowError } from '../errors.js';
import { transformImage } from '../exec/libvips.js';
import { pluginFailure, PluginHookError } from './plugin-call.js';
import type { Step, StepContext } from '../contract/plugin.js';
import type { SpeechSettings } from '../contract/speech.js';
import type { TextWorkers } from '../subtitles/text-workers.js';
import { spawnChild } from '../exec/child-process.js';
import type { Voices } from '../voice/voices.js';
import { untilAborted } from '../shared-tasks.js';

/** Names a plan may give workspace files: generated, never a path. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The path of a file a plan names in the workspace `dir`; a 500 for a name that is not a plain file name. */
export function workspaceFile(dir: string, name: string): string {
  if (!SAFE_NAME.test(name)) throw new MediaflowError('MF_ERR_INTERNAL', `Plan names an unsafe file '${name}'`);
  return path.join(dir, name);
}

/** What steps are run with: the engine's own parts and settings, and the job's limits. */
export interface StepLimits {
  /** Text to speech, for `speak`. */
  voices: Voices;
  /** Speech recognition, for `recogniseSpeech`. */
  speech: SpeechSettings;
  /** The threads of `offThread`. */
  textWorkers: TextWorkers;
  /** libvips' threads per picture (libvips.ts, ImageLimits.threads). */
  imageThreads: number;
  /** The job's cancellation. */
  signal?: AbortSignal;
  /** Time the steps together may take (MEDIAFLOW_JOB_TIMEOUT), as one ffmpeg command may. */
  timeoutMs: number;
  /**
   * When the whole job's time is up (performance.now()'s clock), if sooner: `signal` stops the steps then, and
   * libvips is told the time left to it.
   */
  deadline?: number;
  maxPixels: number;
  /** Input file name → the source the user gave, for messages. */
  sources: ReadonlyMap<string, string>;
  /** The answer fields the plugin declares (none when absent): a step answering another name fails the job. */
  answers?: readonly string[];
  /** Hears a step's progress, 0 to 1. */
  onProgress?: (ratio: number) => void;
}

/**
 * Runs a plan's in-process steps in order, in the job's workspace `dir`. A cancelled job stops
 * waiting at once; past the time limit it is a 504, like an ffmpeg command stopped for time.
 * libvips also gets the time left, so its own threads stop rather than work on unobserved.
 */
export async function runSteps(
  plugin: string,
  dir: string,
  steps: readonly Step[],
  limits: StepLimits,
): Promise<Record<string, unknown>> {
  const deadline = Math.min(performance.now() + limits.timeoutMs, limits.deadline ?? Infinity);
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new MediaflowError('MF_ERR_TIMEOUT', 'Processing ran past its time limit and was stopped')),
    limits.timeoutMs,
  );
  const signal = limits.signal ? AbortSignal.any([limits.signal, timeout.signal]) : timeout.signal;
  const workspacePath = (name: string) => workspaceFile(dir, name);
  const answers: Record<string, unknown> = {};
  // Programs the steps started (and syntheses, which run theirs): a cancelled job ends only once they have exited, so
  // none outlives its workspace.
  const children = new Set<Promise<unknown>>();
  const progress = (ratio: number) => limits.onProgress?.(Math.min(1, Math.max(0, ratio)));
  const context: StepContext = {
    signal,
    path: workspacePath,
    image: async (input, transform, output) =>
      transformImage(workspacePath(input), workspacePath(output), transform, {
        maxPixels: limits.maxPixels,
        timeoutSeconds: (deadline - performance.now()) / 1000,
        threads: limits.imageThreads,
        ...(limits.sources.has(input) ? { source: limits.sources.get(input)! } : {}),
      }),
    offThread: (module, name, args) => limits.textWorkers.run(module, name, args, signal),
    spawn: (command, args, options = {}) => {
      const child = spawnChild(command, args, { cwd: dir, signal, ...options });
      children.add(child.catch(() => {}));
      return child;
    },
    progress,
    speech: limits.speech,
    speak: (request, output, options = {}) => {
      const synthesis = limits.voices.synthesise(request, workspacePath(output), {
        dir,
        signal,
        progress: options.progress ?? progress,
      });
      children.add(synthesis.catch(() => {}));
      return synthesis;
    },
    answer: (fields) => {
      const undeclared = Object.keys(fields).find((name) => !(limits.answers ?? []).includes(name));
      if (undeclared !== undefined)
        throw new PluginHookError(plugin, 'step', `a step answered '${undeclared}', which the plugin does not declare`);
      Object.assign(answers, fields);
    },
  };
  try {
    for (const step of steps) {
      signal.throwIfAborted();
      try {
        await untilAborted(
          Promise.resolve().then(() => step.run(context)),
          signal,
        );
      } catch (error) {
        // A cancellation is the job's, not the plugin's failure; everything else is told as the plugin's.
        if (signal.aborted && error === signal.reason) throw error;
        throw pluginFailure(plugin, 'step', error);
      }
    }
    return answers;
  } finally {
    clearTimeout(timer);
    await Promise.all(children);
  }
}
