import type { Expr } from '../template.js';

/** What a checked pipeline is: its inputs, its steps (in order and in stages) and its results. */

/** The types a pipeline input may declare. */
export const INPUT_TYPES = ['string', 'integer', 'number', 'url', 'urls'] as const;
export type InputType = (typeof INPUT_TYPES)[number];

/** One declared input: its values come from `--input`, a form field or a batch row's column. */
export interface PipelineInput {
  name: string;
  type: InputType;
  description?: string;
  /** Used when the input is not given; an input without one is required. */
  default?: string | number | string[];
}

/** One step: an operation and its parameters, run once, or once per item of `each`. */
export interface PipelineStep {
  name: string;
  /** The operation's registered name. */
  op: string;
  description?: string;
  with: Record<string, Expr>;
  each?: Expr;
  /** The step runs only when this input is given (its value is not empty). */
  when?: string;
  /** The step runs only when this input is not given. */
  unless?: string;
  /** Steps whose outputs this one uses. */
  after: string[];
}

/** A step output the pipeline hands back (published), under a name of its own. */
export interface PipelineResult {
  name: string;
  step: string;
  /** A file the step writes beside its output, by the field it is answered under (else the output itself). */
  field?: string;
}

/** A pipeline checked as a whole: every operation, parameter and reference exists and fits, no cycles. */
export interface PipelineDefinition {
  name: string;
  description: string;
  /** The file it came from, as errors name it. */
  file: string;
  inputs: PipelineInput[];
  /** In an order where each step comes after the steps it uses. */
  steps: PipelineStep[];
  /** Steps grouped by what may run at the same time: each stage uses only earlier stages. */
  stages: string[][];
  results: PipelineResult[];
}
