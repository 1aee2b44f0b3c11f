import { writeFile } from 'node:fs/promises';
import type { LocalInput, Plan } from '../contract/plugin.js';
import { runFfmpeg } from '../exec/ffmpeg.js';
import { coresEach } from '../exec/slots.js';
import type { EngineDeps } from './engine-deps.js';
import type { PartRunner } from './fanout/part-runner.js';
import { keptSeconds, readyEncode, splitEncode } from './fanout/split-encode.js';
import type { JobRun } from './job-run.js';
import { cappedPlan, checkFrameSize, checkOutputLength } from './output-caps.js';
import { runSteps, workspaceFile } from './plan-steps.js';
import { callPlugin, checkedPlan, pluginFailure, PluginHookError } from './plugin-call.js';

/** Stages a plan may chain with `next` before the job fails: more is a plugin going round in circles. */
const MAX_STAGES = 8;

/** What running a plan uses of the engine, with the runner of a split encode's parts made. */
export type PlanDeps = Pick<
  EngineDeps,
  'config' | 'binaries' | 'slots' | 'logger' | 'observer' | 'voices' | 'speech' | 'textWorkers'
> & {
  parts: PartRunner;
};

/** What a job's stages did: everything their commands logged and their answers, merged; the parts of a split. */
export interface StagesRan {
  logged: string;
  answers: Record<string, unknown>;
  parts?: number;
}

/** How a stage tells its progress: its ratio, 0 to 1, and the parts its encode is split into, once planned. */
interface StageProgress {
  onRatio: (ratio: number) => void;
  onSplit: (parts: number) => void;
}

/**
 * A stage as it runs: refused when it expects more than MEDIAFLOW_MAX_DURATION or makes pictures larger than
 * MEDIAFLOW_MAX_PIXELS (422), its final command capped at what it expects (output-caps.ts).
 */
export function stagedPlan(
  deps: Pick<PlanDeps, 'config'>,
  built: Plan | string[],
  inputs: readonly LocalInput[],
): Plan {
  const plan = normalisePlan(built);
  checkOutputLength(plan.expectedSeconds, deps.config.maxDurationMs, 'inputs');
  checkFrameSize(plan.frameSize, deps.config.maxPixels, 'inputs');
  return cappedPlan(plan, inputs, deps.config.maxDurationMs);
}

/**
 * Runs a plan's stages: the first, then each one its `next` makes of what the previous one's
 * commands logged. Returns everything the commands logged and the stages' answers, merged. Each stage
 * takes its `share` of the progress, or an equal part of what is left (half while it has a `next`), and
 * the progress never goes back.
 */
export async function runStages(deps: PlanDeps, job: JobRun, first: Plan): Promise<StagesRan> {
  const { plugin, options } = job;
  const locals = Object.values(job.inputs).flat();
  const answers: Record<string, unknown> = {};
  let logged = '';
  let parts: number | undefined;
  let shown = 0;
  // The part of the progress earlier stages took.
  let before = 0;
  let plan = first;
  for (let index = 0; ; index++) {
    const span = Math.min(plan.share ?? (1 - before) / (plan.next ? 2 : 1), 1 - before);
    // The parts the stage's encode is split into, once planned: the progress says so.
    let split: number | undefined;
    const onRatio = (ratio: number) => {
      shown = Math.max(shown, before + span * ratio);
      options.onProgress?.({ stage: 'process', ratio: shown, ...(split ? { parts: split } : {}) });
    };
    const onSplit = (count: number) => {
      split = count;
      onRatio(0);
    };
    const ran = await runPlan(deps, job, plan, { onRatio, onSplit });
    logged += ran.logs.join('');
    Object.assign(answers, plan.answers, ran.answered);
    parts ??= ran.parts;
    before += span;
    const next = plan.next;
    if (!next) return { logged, answers, ...(parts ? { parts } : {}) };
    if (index + 1 >= MAX_STAGES) {
      throw pluginFailure(
        plugin.name,
        'next',
        new PluginHookError(plugin.name, 'next', `next() chained more than ${MAX_STAGES} stages`),
      );
    }
    plan = stagedPlan(
      deps,
      callPlugin(plugin, 'next', () => checkedPlan(plugin, next(ran.logs), 'next')),
      locals,
    );
    deps.observer?.planned?.(plugin.name, plan, locals);
  }
}

/**
 * Writes the plan's files, runs its steps, then its commands in order; returns what each command
 * logged (see runFfmpeg) and what its steps answered. The stage's progress (`onRatio`) is what its steps report,
 * then the final command's position, or with `parts` each command's position within its part of the output.
 */
async function runPlan(
  deps: PlanDeps,
  job: JobRun,
  plan: Plan,
  progress: StageProgress,
): Promise<{ logs: string[]; answered: Record<string, unknown>; parts?: number }> {
  const { dir, plugin, options } = job;
  const { onRatio } = progress;
  for (const [name, content] of Object.entries(plan.files ?? {})) {
    await writeFile(workspaceFile(dir, name), content, 'utf8');
  }
  let answered: Record<string, unknown> = {};
  if (plan.steps?.length) {
    answered = await runSteps(plugin.name, dir, plan.steps, {
      voices: deps.voices,
      speech: deps.speech,
      textWorkers: deps.textWorkers,
      imageThreads: coresEach(deps.slots.size),
      timeoutMs: deps.config.jobTimeoutMs,
      deadline: options.deadline,
      maxPixels: deps.config.maxPixels,
      sources: new Map(
        Object.values(job.inputs)
          .flat()
          .map((input) => [input.file, input.source]),
      ),
      answers: Object.keys(plugin.answers?.properties ?? {}),
      ...(options.onProgress ? { onProgress: onRatio } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }
  // A split encode's logs are its parts', so that what libass warns of reaches the answer as in one pass.
  const partLogs: string[] = [];
  const parts = await split(deps, job, plan, progress, partLogs);
  if (parts) return { logs: partLogs, answered, parts };
  const logs: string[] = [];
  for (const [index, args] of plan.commands.entries()) {
    const share = commandShare(plan, index);
    logs.push(
      await runFfmpeg(deps.binaries.ffmpeg, args, {
        cwd: dir,
        timeoutMs: deps.config.jobTimeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(share.seconds ? { expectedSeconds: share.seconds } : {}),
        ...(options.onProgress && share.weight > 0
          ? {
              onProgress: (p: { ratio?: number }) =>
                p.ratio !== undefined && onRatio(share.before + share.weight * p.ratio),
            }
          : {}),
      }),
    );
  }
  return { logs, answered };
}

/**
 * Runs a stage's encode in parts (docs/fanout.md) when fan-out is on and the output long enough: the input's, split
 * at its keyframes (Plan.fanout), or the parts the plugin made (Plan.readyParts). Returns how many, or undefined when
 * the stage is to run its commands instead (as it does when it has neither).
 */
async function split(
  deps: PlanDeps,
  job: JobRun,
  plan: Plan,
  progress: StageProgress,
  /** Where each part's log goes (PartJob.onLog). */
  logs: string[],
): Promise<number | undefined> {
  const { config, binaries, slots, logger } = deps;
  const { options } = job;
  const { fanout, readyParts } = plan;
  if (!fanout && !readyParts) return undefined;
  const seconds = fanout ? keptSeconds(fanout) : (readyParts?.parts ?? []).reduce((sum, part) => sum + part.seconds, 0);
  if (!config.fanout || seconds * 1000 <= config.fanoutMinMs) return undefined;
  const reads = Object.values(job.inputs).flatMap((list) => list.map((input) => input.file));
  reads.push(...Object.keys(plan.files ?? {}), ...(fanout?.reads ?? []));
  const splitDeps = {
    ffmpeg: binaries.ffmpeg,
    ffprobe: binaries.ffprobe,
    runner: deps.parts,
    slots,
    logger,
    timeoutMs: config.jobTimeoutMs,
    partSeconds: config.partMs / 1000,
  };
  const splitJob = {
    id: job.id,
    dir: job.dir,
    reads,
    ...(options.owner !== undefined ? { owner: options.owner } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onProgress ? progress : {}),
    onLog: (_task: string, log: string) => logs.push(log),
  };
  if (fanout) return splitEncode(splitDeps, fanout, splitJob);
  return readyParts!.parts.length > 1 ? readyEncode(splitDeps, readyParts!, splitJob) : undefined;
}

/**
 * What command `index` of a plan adds to its progress: the share of the stage done `before` it, its own
 * `weight`, and the `seconds` of output its position is a ratio of. Without `parts` only the final command
 * moves the progress, over the plan's whole expected length.
 */
function commandShare(plan: Plan, index: number): { before: number; weight: number; seconds?: number } {
  const total = plan.parts?.reduce((sum, seconds) => sum + seconds, 0);
  if (!plan.parts || !total) {
    const final = index === plan.commands.length - 1;
    return { before: 0, weight: final ? 1 : 0, ...(plan.expectedSeconds ? { seconds: plan.expectedSeconds } : {}) };
  }
  const before = plan.parts.slice(0, index).reduce((sum, seconds) => sum + seconds, 0);
  return { before: before / total, weight: plan.parts[index]! / total, seconds: plan.parts[index]! };
}

/** A builder may return a bare argv for the common single-command case. */
function normalisePlan(plan: Plan | string[]): Plan {
  return Array.isArray(plan) ? { commands: [plan] } : plan;
}
