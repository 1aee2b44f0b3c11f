import type { JobProgress } from '../engine/run/engine.js';
import type { PipelineDefinition } from './definition.js';
import type { StepEvent } from './runner.js';

/** A job's place as the job record shows it: a stage name and a whole percentage. */
export interface ProgressReport {
  stage: string;
  progress: number;
}

/**
 * Where each stage of one operation starts, in percent: fetching and probing are short next to
 * ffmpeg, which fills most of the bar by its position in the output; 100 is left for `succeeded`.
 */
const STAGE_START: Record<JobProgress['stage'], number> = { queued: 0, download: 2, probe: 8, process: 10, publish: 96 };
const PROCESS_SPAN = STAGE_START.publish - STAGE_START.process;

/** The share of one operation done, from 0 to 1. */
const operationShare = (progress: JobProgress): number =>
  (STAGE_START[progress.stage] + (progress.stage === 'process' ? PROCESS_SPAN * Math.min(1, Math.max(0, progress.ratio ?? 0)) : 0)) / 100;

/** An operation's progress as a report. */
export const operationProgress = (progress: JobProgress): ProgressReport => ({
  // The engine's `queued` is the wait for an ffmpeg slot of this process: the job itself has started.
  stage: progress.stage === 'queued' ? 'starting' : progress.stage,
  progress: Math.floor(operationShare(progress) * 100),
});

/**
 * Follows a pipeline run's step events: each step weighs the same, a step over `each` items is
 * as far as the mean of its items, and a finished step counts whole. The stage names the step.
 */
export class PipelineProgress {
  private readonly shares = new Map<string, number[]>();

  constructor(private readonly definition: PipelineDefinition) {}

  update(event: StepEvent): ProgressReport {
    const op = this.definition.steps.find((step) => step.name === event.step)?.op ?? '';
    let stage = `${event.step} (${op})`;
    if (event.type === 'start') this.shares.set(event.step, new Array<number>(event.items ?? 1).fill(0));
    else if (event.type === 'done') this.shares.set(event.step, [1]);
    else {
      const items = this.shares.get(event.step) ?? [0];
      items[event.item ?? 0] = operationShare(event.progress);
      this.shares.set(event.step, items);
      stage = `${stage}: ${event.progress.stage}`;
    }
    let done = 0;
    for (const items of this.shares.values()) done += items.reduce((sum, share) => sum + share, 0) / items.length;
    // The last 1% is publishing the results, after the last step.
    return { stage, progress: Math.floor((done / this.definition.steps.length) * 99) };
  }
}
