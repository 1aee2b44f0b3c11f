import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import {
  inputSpecOf,
  outputPaths,
  VOICE_KEYWORD,
  type BuildContext,
  type InputFacts,
  type LocalInput,
  type OutputSpec,
  type Plan,
  type PluginDefinition,
  type PluginSettings,
  type SpeechInput,
} from '../contract/plugin.js';
import { mediaError, MediaflowError, paramError, tooLargeError } from '../errors.js';
import { ffmpegCommandLine } from '../exec/ffmpeg.js';
import { inputArgs } from '../exec/input-policy.js';
import { checkUrl } from '../inputs/address-guard.js';
import { parseParams } from '../plugins/params.js';
import { publishAll, type Workspaces } from '../storage/storage.js';
import { codePointName, glyphWarnings, missingGlyphs } from '../subtitles/missing-glyphs.js';
import type { EngineDeps } from './engine-deps.js';
import { LocalPartRunner, PartEncoder } from './fanout/part-runner.js';
import { jobDeadline } from './job-deadline.js';
import type { JobOptions, JobRun, LocalFilePolicy, RunningOptions } from './job-run.js';
import { checkFrameSize, checkOutputLength } from './output-caps.js';
import { callPlugin, checkedInputs, checkedMessage, checkedOutput, checkedPlan } from './plugin-call.js';
import { fetchLimits, prepareInputs, type InputRequest, type Timed } from './prepare-inputs.js';
import { checkSpeechBytes, checkVoices } from './spoken-inputs.js';
import { runStages, stagedPlan, type PlanDeps } from './run-plan.js';

/** A finished job: the message, where its outputs were published (relative to the store's root), its answers. */
export interface JobResult {
  id: string;
  operation: string;
  message: string;
  /** The output spec with the job's id in its paths: one file under its field, several, or none. */
  output: OutputSpec;
  /** The plan's answer fields beside the output (PluginDefinition.answers), when it gave some. */
  answers?: Record<string, unknown>;
  timings: Record<string, number>;
  /**
   * What went wrong without failing the job (characters no font could draw), for the user to read;
   * absent when nothing did.
   */
  warnings?: string[];
  /** The number of parts the encode was split into (docs/fanout.md); absent when it ran in one pass. */
  parts?: number;
}

/** What `buildIn` makes ready: the first stage's plan, the inputs and where the outputs go. */
interface Built {
  plan: Plan;
  inputs: Record<string, LocalInput[]>;
  outputSpec: OutputSpec;
  /** The workspace file of each output path, in order. */
  outputNames: string[];
}

/** What a job would run, as `Engine.plan` reports it for `--dry-run`. */
export interface JobPlan {
  operation: string;
  params: Record<string, unknown>;
  output: OutputSpec;
  /** Files the plan writes into the workspace before its commands (lists, subtitles). */
  files: string[];
  /** The labels of the in-process steps that run before the commands (libvips work). */
  steps: string[];
  /** Each ffmpeg command in order, binary first; empty when the plugin writes its output in its steps. */
  commands: string[][];
}

/** The speech among a request's inputs (NamedInput.speak). */
const spoken = (inputs: readonly InputRequest[]): SpeechInput[] =>
  inputs.flatMap((input) => (input.speak ? [input.speak] : []));

/** The one way in: every front end (HTTP, CLI, pipelines) runs operations through `run`. */
export class Engine {
  /** What running a job's plan uses (run-plan.ts): the engine's parts, and where a split encode's parts run. */
  private readonly planDeps: PlanDeps;
  /** What plugins are told of the configuration (PluginDefinition.checkParams, BuildContext.settings). */
  private readonly settings: PluginSettings;

  constructor(private readonly deps: EngineDeps) {
    const { config } = deps;
    this.settings = {
      maxDuration: config.maxDurationMs / 1000,
      maxPixels: config.maxPixels,
      maxInputs: config.maxInputs,
      maxClips: config.maxClips,
      templatesDir: config.templatesDir,
      partSeconds: config.partMs / 1000,
      speech: deps.speech,
    };
    this.planDeps = {
      ...deps,
      parts:
        deps.parts ?? new LocalPartRunner(new PartEncoder(deps.binaries.ffmpeg, deps.slots, deps.config.jobTimeoutMs)),
    };
  }

  /** The work folders of this engine's jobs; a pipeline run keeps its steps' outputs in one of them. */
  get workspaces(): Workspaces {
    return this.deps.workspaces;
  }

  /** The plugin for an operation name, or a 404-style error. */
  plugin(operation: string): PluginDefinition {
    const plugin = this.deps.registry.get(operation);
    if (!plugin) throw new MediaflowError('MF_ERR_NOT_FOUND', `Unknown operation '${operation}'`);
    return plugin;
  }

  /**
   * Where a plugin says its output goes, given its inputs' facts once they are probed (without them, a
   * likely path: see PluginDefinition.output); a plugin that throws fails only its own job.
   */
  outputOf(plugin: PluginDefinition, params: Record<string, unknown>, inputs?: InputFacts): OutputSpec {
    return callPlugin(plugin, 'output', () => checkedOutput(plugin, plugin.output(params, inputs)));
  }

  /** Validates raw fields into params, and lists the inputs they name, checking each URL before anything is queued. */
  prepare(operation: string, raw: Record<string, unknown>, localFiles?: LocalFilePolicy) {
    const plugin = this.plugin(operation);
    const parsed = parseParams(plugin.params, raw);
    // checkParams may hand back the params the later hooks see (a template read, merge fields filled in).
    const checked: unknown = plugin.checkParams
      ? callPlugin(plugin, 'checkParams', () => plugin.checkParams!(parsed, this.settings))
      : undefined;
    const params = typeof checked === 'object' && checked !== null ? (checked as Record<string, unknown>) : parsed;
    // An output too long is refused from the parameters alone where they say its length: a 400 at once.
    if (plugin.outputSeconds)
      checkOutputLength(
        callPlugin(plugin, 'outputSeconds', () => plugin.outputSeconds!(params)),
        this.deps.config.maxDurationMs,
        'params',
      );
    if (plugin.outputSize)
      checkFrameSize(
        callPlugin(plugin, 'outputSize', () => plugin.outputSize!(params)),
        this.deps.config.maxPixels,
        'params',
      );
    this.checkTextBytes(params);
    const inputs: InputRequest[] = [];
    const add = (param: string, source: string, kind: InputRequest['kind']) => {
      const local = localFiles?.(source);
      if (local === undefined) checkUrl(source, fetchLimits(this.deps.config));
      inputs.push({ param, source, kind, ...(typeof local === 'string' ? { localPath: local } : local) });
    };
    for (const [param, schema] of Object.entries(plugin.params.properties)) {
      const spec = inputSpecOf(schema);
      const value = params[param];
      if (!spec || value === undefined) continue;
      for (const source of Array.isArray(value) ? (value as string[]) : [value as string])
        add(param, source, spec.kind);
    }
    if (plugin.inputs) {
      const named = callPlugin(plugin, 'inputs', () => checkedInputs(plugin, plugin.inputs!(params)));
      for (const { name, source, kind, speak } of named)
        if (speak) inputs.push({ param: name, source, kind, speak });
        else add(name, source, kind);
    }
    checkSpeechBytes(spoken(inputs), this.deps.config.maxTextBytes);
    if (inputs.length > this.deps.config.maxInputs) {
      throw paramError(
        `Too many inputs: ${inputs.length} given, the limit is ${this.deps.config.maxInputs} (MEDIAFLOW_MAX_INPUTS)`,
      );
    }
    return { plugin, params, inputs };
  }

  /**
   * Refuses a text field over MEDIAFLOW_MAX_TEXT_BYTES (413): a schema's maxLength counts
   * characters, up to four bytes each, and every byte of text is work for a builder.
   */
  private checkTextBytes(params: Record<string, unknown>): void {
    const limit = this.deps.config.maxTextBytes;
    for (const [key, value] of Object.entries(params)) {
      if (typeof value === 'string' && value.length > limit / 4 && Buffer.byteLength(value) > limit) {
        throw tooLargeError(
          `\`${key}\` is larger than the limit of ${limit} bytes of UTF-8 (MEDIAFLOW_MAX_TEXT_BYTES)`,
        );
      }
    }
  }

  /**
   * `prepare`, then the checks that look at the server itself: a voice field, and the voice of each input to speak,
   * names a voice installed here (a 400 naming close ones, a 501 for a neural voice without its runtime). What a job
   * is checked with before it is queued.
   */
  async check(operation: string, raw: Record<string, unknown>, localFiles?: LocalFilePolicy) {
    const prepared = this.prepare(operation, raw, localFiles);
    for (const [key, schema] of Object.entries(prepared.plugin.params.properties)) {
      const value = prepared.params[key];
      if ((schema as Record<string, unknown>)[VOICE_KEYWORD] && typeof value === 'string' && value !== '')
        await this.deps.voices.voice(value);
    }
    await checkVoices(this.deps.voices, spoken(prepared.inputs));
    return prepared;
  }

  /** Runs one operation end to end and publishes its output. */
  async run(operation: string, raw: Record<string, unknown>, options: JobOptions = {}): Promise<JobResult> {
    const { plugin, params, inputs } = await this.check(operation, raw, options.localFiles);
    const id = options.id ?? randomUUID();
    options.onProgress?.({ stage: 'queued' });
    return this.deps.slots.run(() => this.execute(id, plugin, params, inputs, options), options.signal);
  }

  private async execute(
    id: string,
    plugin: PluginDefinition,
    params: Record<string, unknown>,
    requests: InputRequest[],
    options: JobOptions,
  ): Promise<JobResult> {
    const { workspaces, logger, observer } = this.deps;
    const store = options.store ?? this.deps.store;
    const timings: Record<string, number> = {};
    const started = performance.now();
    let outcome: 'ok' | 'failed' | 'cancelled' = 'failed';
    const time: Timed = async (name, work) => {
      const started = performance.now();
      try {
        return await work();
      } finally {
        timings[name] = Math.round(performance.now() - started);
      }
    };
    // From here the job holds its slot: everything it does counts against its whole-job time limit.
    const deadline = jobDeadline(this.deps.config.jobTotalTimeoutMs, options.signal);
    const limited: RunningOptions = { ...options, signal: deadline.signal, deadline: deadline.at };
    const dir = await workspaces.create(id);
    try {
      const { plan, inputs, outputSpec, outputNames } = await this.buildIn(
        dir,
        plugin,
        params,
        requests,
        limited,
        time,
      );
      options.onProgress?.({ stage: 'process' });
      const job: JobRun = { id, dir, plugin, inputs, options: limited };
      const { logged, answers, parts } = await time('processMs', () => runStages(this.planDeps, job, plan));
      for (const name of outputNames) await this.ensureOutput(dir, name);
      const missing = missingGlyphs(logged);
      if (missing.length > 0)
        logger.warn(
          { job: id, operation: plugin.name, codePoints: missing.map(codePointName) },
          'no installed font has glyphs for these characters: they render as empty boxes',
        );
      const warnings = glyphWarnings(missing);
      options.onProgress?.({ stage: 'publish' });
      const withId = (file: string) => file.replaceAll('{id}', id);
      const output: OutputSpec =
        'files' in outputSpec
          ? { files: outputSpec.files.map(withId) }
          : {
              ...outputSpec,
              path: withId(outputSpec.path),
              ...(outputSpec.alongside
                ? { alongside: outputSpec.alongside.map((file) => ({ ...file, path: withId(file.path) })) }
                : {}),
            };
      const paths = outputPaths(output);
      await time('publishMs', () =>
        publishAll(
          store,
          outputNames.map((name, index) => [path.join(dir, name), paths[index]!] as const),
        ),
      );
      logger.info({ job: id, operation: plugin.name, timings, ...(parts ? { parts } : {}) }, 'job done');
      outcome = 'ok';
      const message = callPlugin(plugin, 'message', () => checkedMessage(plugin, plugin.message(params)));
      return {
        id,
        operation: plugin.name,
        message,
        output,
        ...(Object.keys(answers).length > 0 ? { answers } : {}),
        timings,
        ...(warnings.length > 0 ? { warnings } : {}),
        ...(parts ? { parts } : {}),
      };
    } catch (error) {
      if (options.signal?.aborted) outcome = 'cancelled';
      throw error;
    } finally {
      deadline.clear();
      await workspaces.remove(dir);
      observer?.jobEnded(plugin.name, (performance.now() - started) / 1000, outcome);
    }
  }

  /**
   * What `run` would do, without running ffmpeg: inputs fetched (or linked) and probed, the plan
   * built and its commands returned as full argv (file names relative to the job's workspace).
   * Nothing is queued or published; the workspace is removed. Behind `--dry-run`.
   */
  async plan(
    operation: string,
    raw: Record<string, unknown>,
    options: Pick<JobOptions, 'signal' | 'localFiles'> = {},
  ): Promise<JobPlan> {
    const { plugin, params, inputs } = await this.check(operation, raw, options.localFiles);
    const dir = await this.deps.workspaces.create(randomUUID());
    try {
      const { plan, outputSpec } = await this.buildIn(dir, plugin, params, inputs, options, (_name, work) => work());
      return {
        operation: plugin.name,
        params,
        output: outputSpec,
        files: Object.keys(plan.files ?? {}),
        steps: (plan.steps ?? []).map((step) => step.label),
        commands: plan.commands.map((args) => ffmpegCommandLine(this.deps.binaries.ffmpeg, args)),
      };
    } finally {
      await this.deps.workspaces.remove(dir);
    }
  }

  /**
   * Fetches and probes a job's inputs into `dir`, checks them, and asks the plugin for its plan:
   * all of a job but ffmpeg.
   */
  private async buildIn(
    dir: string,
    plugin: PluginDefinition,
    params: Record<string, unknown>,
    requests: InputRequest[],
    options: Pick<JobOptions, 'signal' | 'onProgress' | 'checkOutput'>,
    time: Timed,
  ): Promise<Built> {
    const { inputs, locals, kinds } = await prepareInputs(this.deps, dir, requests, options, time);
    // A plugin's own code runs inside callPlugin: what it throws fails this job only, named after it.
    const facts = Object.fromEntries(Object.entries(inputs).map(([param, list]) => [param, list.map((i) => i.facts)]));
    const outputSpec = this.outputOf(plugin, params, facts);
    options.checkOutput?.(outputSpec);
    // Generated names only: one output is `output.<ext>` (files alongside it `output-<n>.<ext>`), several
    // `output-<n>.<ext>`.
    const outputNames = outputPaths(outputSpec).map((file, index) =>
      'files' in outputSpec || index > 0 ? `output-${index + 1}${path.extname(file)}` : `output${path.extname(file)}`,
    );
    const context: BuildContext<Record<string, unknown>> = {
      params,
      inputs,
      output: outputNames[0] ?? '',
      outputs: outputNames,
      input: (input) => inputArgs(input, kinds.get(input.file)),
      settings: this.settings,
    };
    if (plugin.check) callPlugin(plugin, 'check', () => plugin.check!(context));
    const plan = stagedPlan(
      this.deps,
      callPlugin(plugin, 'build', () => checkedPlan(plugin, plugin.build(context))),
      locals,
    );
    this.deps.observer?.planned?.(plugin.name, plan, locals);
    return { plan, inputs, outputSpec, outputNames };
  }

  private async ensureOutput(dir: string, name: string): Promise<void> {
    const info = await stat(path.join(dir, name)).catch(() => undefined);
    if (!info || info.size === 0) throw mediaError('Processing produced no output');
  }
}
