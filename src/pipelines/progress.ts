import { operationShare } from '../engine/run/progress-share.js';
import type { PipelineDefinition } from './definition.js';
import type { StepEvent } from './runner.js';

/**
 * Follows a pipeline run's step events: each step weighs the same, a step over `each` items is
 * as far as the mean of its items, and a finished step counts whole. The stage names the step.
 * Its reports have the shape of a job's progress report (jobs/handler.ts), which it does not import:
 * pipelines sit below jobs.
 */
export class PipelineProgress {
  private readonly shares = new Map<string, number[]>();

  constructor(private readonly definition: PipelineDefinition) {}

  update(event: StepEvent): { stage: string; progress: number } {
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
