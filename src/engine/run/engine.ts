import { randomUUID } from 'node:crypto';
import { access, constants, link, realpath, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import PQueue from 'p-queue';
import { checkUrl } from '../inputs/address-guard.js';
import type { Binaries } from './binaries.js';
import type { Config } from '../config.js';
import { mediaError, MediaflowError, paramError, tooLargeError } from '../errors.js';
import { ByteBudget, download, inputTooLarge, type FetchLimits } from '../inputs/fetcher.js';
import type { Fetch, InputCache } from '../inputs/input-cache.js';
import { ffmpegCommandLine, runFfmpeg } from './ffmpeg.js';
import { jobDeadline } from './job-deadline.js';
import { setLibvipsSlots } from './libvips.js';
import { setSpeech } from '../speech/recognise.js';
import { codePointName, glyphWarnings, missingGlyphs } from '../subtitles/missing-glyphs.js';
import { checkKind, inputArgs } from '../inputs/input-policy.js';
import { cappedPlan, checkFrameSize, checkOutputLength } from './output-caps.js';
import type { Logger } from '../logger.js';
import { parseParams } from '../plugins/params.js';
import { runSteps, workspaceFile } from './plan-steps.js';
import {
  callPlugin,
  checkedInputs,
  checkedMessage,
  checkedOutput,
  checkedPlan,
  pluginFailure,
  PluginHookError,
} from '../plugins/plugin-call.js';
import {
  inputSpecOf,
  outputPaths,
  VOICE_KEYWORD,
  type BuildContext,
  type FanoutSpec,
  type InputFacts,
  type InputSpec,
  type LocalInput,
  type OutputSpec,
  type Plan,
  type PluginDefinition,
  type PluginSettings,
} from '../plugins/plugin.js';
import { probeFile } from '../probe/probe.js';
import type { Registry } from '../plugins/registry.js';
import type { Slots } from './slots.js';
import { subtitleAsAss } from '../subtitles/subtitle-ass.js';
import { subtitleToUtf8 } from '../subtitles/subtitle-encoding.js';
import { setTextWorkers } from '../subtitles/text-workers.js';
import { publishAll, type OutputStore, type Workspaces } from '../storage/storage.js';
import { LocalPartRunner, PartEncoder, type PartRunner } from './fanout/part-runner.js';
import { keptSeconds, splitEncode } from './fanout/split-encode.js';
import type { Voices } from '../voice/voices.js';

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
interface RunningOptions extends JobOptions {
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

/** Stages a plan may chain with `next` before the job fails: more is a plugin going round in circles. */
const MAX_STAGES = 8;

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

/** An input as the user named it, with the kind its parameter needs. */
interface InputRequest {
  param: string;
  source: string;
  kind: InputSpec['kind'];
  /** The local file behind the source, when it is not fetched. */
  localPath?: string;
  /** The output-store path behind the source (an own output), when it is not fetched. */
  stored?: string;
}

/** Hears what the engine does, for metrics. */
export interface EngineObserver {
  jobEnded(operation: string, seconds: number, outcome: 'ok' | 'failed' | 'cancelled'): void;
  downloaded(bytes: number): void;
  /**
   * The plan a job is about to run, with each workspace input file and the source it came from (benchmarks replay it).
   */
  planned?(operation: string, plan: Plan, inputs: ReadonlyArray<{ file: string; source: string }>): void;
}

export interface EngineDeps {
  config: Config;
  binaries: Binaries;
  registry: Registry;
  store: OutputStore;
  workspaces: Workspaces;
  /** ffmpeg slots shared by every operation of this process. */
  slots: Slots;
  logger: Logger;
  observer?: EngineObserver;
  /** Keeps downloaded inputs for later jobs; none means every input is downloaded every time. */
  cache?: InputCache;
  /** Where a split encode's parts run (docs/fanout.md); none: in this process's slots. */
  parts?: PartRunner;
  /** Text to speech, for a step's `speak` and the voice fields of a request (docs/voice.md). */
  voices: Voices;
}

/** A file extension from a URL or path, if it is short and plain; generated names never carry user text otherwise. */
function safeExtension(source: string): string {
  let pathname = source;
  try {
    pathname = new URL(source).pathname;
  } catch {
    // a local path
  }
  const ext = path.extname(pathname).toLowerCase();
  return /^\.[a-z0-9]{1,5}$/.test(ext) ? ext : '';
}

/** The one way in: every front end (HTTP, CLI, pipelines) runs operations through `run`. */
export class Engine {
  private readonly parts: PartRunner;
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
    };
    this.parts =
      deps.parts ?? new LocalPartRunner(new PartEncoder(deps.binaries.ffmpeg, deps.slots, deps.config.jobTimeoutMs));
    setLibvipsSlots(deps.config.concurrency);
    setSpeech({
      model: deps.config.whisperModel,
      binding: deps.config.whisperBinding,
      concurrency: deps.config.concurrency,
      fetch: deps.config,
    });
    setTextWorkers(deps.config.concurrency);
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
    const add = (param: string, source: string, kind: InputSpec['kind']) => {
      const local = localFiles?.(source);
      if (local === undefined) checkUrl(source, this.fetchLimits());
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
      for (const { name, source, kind } of named) add(name, source, kind);
    }
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
   * `prepare`, then the checks that look at the server itself: a voice field names a voice installed here (a 400
   * naming close ones, a 501 for a neural voice without its runtime). What a job is checked with before it is queued.
   */
  async check(operation: string, raw: Record<string, unknown>, localFiles?: LocalFilePolicy) {
    const prepared = this.prepare(operation, raw, localFiles);
    for (const [key, schema] of Object.entries(prepared.plugin.params.properties)) {
      const value = prepared.params[key];
      if ((schema as Record<string, unknown>)[VOICE_KEYWORD] && typeof value === 'string' && value !== '')
        await this.deps.voices.voice(value);
    }
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
    const time = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
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
      const { logged, answers, parts } = await time('processMs', () =>
        this.execStages(id, dir, plugin, plan, inputs, limited),
      );
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
    time: <T>(name: string, work: () => Promise<T>) => Promise<T>,
  ): Promise<Built> {
    options.signal?.throwIfAborted();
    options.onProgress?.({ stage: 'download' });
    // Each input is probed as soon as it has arrived, while the others still download (four
    // probes at most, so a hundred images do not start a hundred processes); the probe stage is
    // what remains of the probing once the last input is in.
    const probes = new PQueue({ concurrency: 4 });
    const probing: Array<Promise<LocalInput>> = [];
    const stopProbes = new AbortController();
    const probeSignal = options.signal ? AbortSignal.any([options.signal, stopProbes.signal]) : stopProbes.signal;
    try {
      await time('downloadMs', () =>
        this.fetchAll(dir, requests, options.signal, (index, file) => {
          probing[index] = probes.add(() => this.probeInput(dir, file, requests[index]!, probeSignal));
          // Told below, in the inputs' order, once every download has ended.
          probing[index].catch(() => {});
        }),
      );
    } catch (error) {
      // A failed download fails the job: no probe outlives it in its workspace.
      stopProbes.abort(error);
      await Promise.allSettled(probing);
      throw error;
    }
    options.onProgress?.({ stage: 'probe' });
    const settled = await time('probeMs', () => Promise.allSettled(probing));
    const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
    const locals = settled.map((result) => (result as PromiseFulfilledResult<LocalInput>).value);
    const inputs: Record<string, LocalInput[]> = {};
    requests.forEach((request, index) => (inputs[request.param] ??= []).push(locals[index]!));
    const kinds = new Map(requests.map((request, index) => [locals[index]!.file, request.kind]));
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
    const plan = this.stage(
      callPlugin(plugin, 'build', () => checkedPlan(plugin, plugin.build(context))),
      locals,
    );
    this.deps.observer?.planned?.(plugin.name, plan, locals);
    return { plan, inputs, outputSpec, outputNames };
  }

  /**
   * A stage as it runs: refused when it expects more than MEDIAFLOW_MAX_DURATION or makes pictures larger than
   * MEDIAFLOW_MAX_PIXELS (422), its final command capped at what it expects (output-caps.ts).
   */
  private stage(built: Plan | string[], inputs: readonly LocalInput[]): Plan {
    const plan = normalisePlan(built);
    checkOutputLength(plan.expectedSeconds, this.deps.config.maxDurationMs, 'inputs');
    checkFrameSize(plan.frameSize, this.deps.config.maxPixels, 'inputs');
    return cappedPlan(plan, inputs, this.deps.config.maxDurationMs);
  }

  /** The download limits and address policy of the configuration. */
  private fetchLimits(): FetchLimits {
    const { config } = this.deps;
    return {
      allowPrivate: config.allowPrivateUrls,
      allowedHosts: config.allowedHosts,
      maxBytes: config.maxInputBytes,
      timeoutMs: config.downloadTimeoutMs,
      firstByteTimeoutMs: config.firstByteTimeoutMs,
      maxRedirects: 5,
    };
  }

  /** Downloads (or links) every input in parallel, telling `arrived` of each; the first failure cancels the rest. */
  private async fetchAll(
    dir: string,
    requests: InputRequest[],
    signal: AbortSignal | undefined,
    arrived: (index: number, file: string) => void,
  ): Promise<void> {
    const { config } = this.deps;
    const limits = this.fetchLimits();
    const failFast = new AbortController();
    const combined = signal ? AbortSignal.any([signal, failFast.signal]) : failFast.signal;
    const budget = new ByteBudget(config.maxRequestBytes, config.maxRequestBytes);
    // Subtitles are decoded and parsed whole as text: they have a much smaller limit than media.
    const subtitleBytes = Math.min(config.maxSubtitleBytes, limits.maxBytes);
    const subtitleLimits: FetchLimits = {
      ...limits,
      maxBytes: subtitleBytes,
      maxBytesSetting: 'MEDIAFLOW_MAX_SUBTITLE_BYTES',
    };
    const fetchOne = async (request: InputRequest, index: number): Promise<void> => {
      const name = `in${index}${safeExtension(request.source)}`;
      const subtitle = request.kind === 'subtitle';
      if (request.stored !== undefined) await this.deps.store.copyTo(request.stored, path.join(dir, name));
      else if (request.localPath !== undefined)
        await linkLocal(request.source, request.localPath, path.join(dir, name));
      else {
        const fetch: Fetch = (destination, headers) => {
          const options = { signal: combined, budget, headers };
          return download(request.source, destination, subtitle ? subtitleLimits : limits, options);
        };
        const target = path.join(dir, name);
        const result = this.deps.cache
          ? await this.deps.cache.fetch(request.source, target, fetch)
          : { ...(await fetch(target, {})), cache: 'bypass' };
        // Bodies reused from the cache (hits, 304s) were not downloaded again.
        if (result.cache === 'miss' || result.cache === 'bypass') this.deps.observer?.downloaded(result.bytes);
      }
      // Own outputs, local files and cached bodies (a URL once fetched as media) arrive whole: measured here.
      if (subtitle && (await stat(path.join(dir, name))).size > subtitleBytes) {
        throw inputTooLarge(request.source, subtitleBytes, 'MEDIAFLOW_MAX_SUBTITLE_BYTES');
      }
      arrived(index, name);
    };
    const settled = await Promise.allSettled(
      requests.map((request, index) =>
        fetchOne(request, index).catch((error: unknown) => {
          failFast.abort(error);
          throw error;
        }),
      ),
    );
    const failure = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failure) {
      signal?.throwIfAborted();
      throw failFast.signal.reason ?? failure.reason;
    }
  }

  /**
   * Makes one arrived input ready for the builder: subtitles converted to UTF-8 (ffmpeg and libass
   * read no other encoding), probed, checked against its kind, and subtitles given as ASS text too
   * (subtitle-ass.ts). An input no demuxer reads fails with the subtitle decoder's error when there
   * is one: a subtitle input in no encoding that can be told, and no media either, is binary data,
   * and is told as such.
   */
  private async probeInput(
    dir: string,
    file: string,
    request: InputRequest,
    signal: AbortSignal | undefined,
  ): Promise<LocalInput> {
    const { config, binaries } = this.deps;
    signal?.throwIfAborted();
    const undecodable =
      request.kind === 'subtitle' ? await subtitleToUtf8(path.join(dir, file), request.source, signal) : undefined;
    const facts = await probeFile(binaries.ffprobe, file, {
      cwd: dir,
      timeoutMs: 60_000,
      maxPixels: config.maxPixels,
      source: request.source,
      ...(signal ? { signal } : {}),
    }).catch((error: unknown) => {
      throw (!signal?.aborted && undecodable) || error;
    });
    checkKind(request.source, facts, request.kind, config);
    // Subtitles ffprobe reads but whose text is in no encoding that can be told.
    if (undecodable) throw undecodable;
    const local: LocalInput = { file, source: request.source, facts };
    if (request.kind === 'subtitle') {
      local.ass = await subtitleAsAss(binaries.ffmpeg, dir, file, inputArgs(local, 'subtitle'), {
        timeoutMs: 60_000,
        ...(signal ? { signal } : {}),
      });
    }
    return local;
  }

  /**
   * Runs a plan's stages: the first, then each one its `next` makes of what the previous one's
   * commands logged. Returns everything the commands logged and the stages' answers, merged. Each stage
   * takes its `share` of the progress, or an equal part of what is left (half while it has a `next`), and
   * the progress never goes back.
   */
  private async execStages(
    id: string,
    dir: string,
    plugin: PluginDefinition,
    first: Plan,
    inputs: Record<string, LocalInput[]>,
    options: RunningOptions,
  ): Promise<{ logged: string; answers: Record<string, unknown>; parts?: number }> {
    const locals = Object.values(inputs).flat();
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
      const ran = await this.execPlan(id, dir, plugin, plan, inputs, options, onRatio, onSplit);
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
      plan = this.stage(
        callPlugin(plugin, 'next', () => checkedPlan(plugin, next(ran.logs), 'next')),
        locals,
      );
      this.deps.observer?.planned?.(plugin.name, plan, locals);
    }
  }

  /**
   * Writes the plan's files, runs its steps, then its commands in order; returns what each command
   * logged (see runFfmpeg) and what its steps answered. The stage's progress (`onRatio`) is what its steps report,
   * then the final command's position, or with `parts` each command's position within its part of the output.
   */
  private async execPlan(
    id: string,
    dir: string,
    plugin: PluginDefinition,
    plan: Plan,
    inputs: Record<string, LocalInput[]>,
    options: RunningOptions,
    onRatio: (ratio: number) => void,
    onSplit: (parts: number) => void,
  ): Promise<{ logs: string[]; answered: Record<string, unknown>; parts?: number }> {
    for (const [name, content] of Object.entries(plan.files ?? {})) {
      await writeFile(workspaceFile(dir, name), content, 'utf8');
    }
    let answered: Record<string, unknown> = {};
    if (plan.steps?.length) {
      answered = await runSteps(plugin.name, dir, plan.steps, {
        voices: this.deps.voices,
        timeoutMs: this.deps.config.jobTimeoutMs,
        deadline: options.deadline,
        maxPixels: this.deps.config.maxPixels,
        sources: new Map(
          Object.values(inputs)
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
    const parts =
      plan.fanout && (await this.split(id, dir, plan, plan.fanout, inputs, options, onRatio, onSplit, partLogs));
    if (parts) return { logs: partLogs, answered, parts };
    const logs: string[] = [];
    for (const [index, args] of plan.commands.entries()) {
      const share = commandShare(plan, index);
      logs.push(
        await runFfmpeg(this.deps.binaries.ffmpeg, args, {
          cwd: dir,
          timeoutMs: this.deps.config.jobTimeoutMs,
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
   * Runs a stage's encode in parts (docs/fanout.md) when fan-out is on and the input long enough; returns how many,
   * or undefined when the stage is to run its commands instead.
   */
  private async split(
    id: string,
    dir: string,
    plan: Plan,
    spec: FanoutSpec,
    inputs: Record<string, LocalInput[]>,
    options: JobOptions,
    onRatio: (ratio: number) => void,
    onSplit: (parts: number) => void,
    /** Where each part's log goes (PartJob.onLog). */
    logs: string[],
  ): Promise<number | undefined> {
    const { config, binaries, slots, logger } = this.deps;
    if (!config.fanout || keptSeconds(spec) * 1000 <= config.fanoutMinMs) return undefined;
    const reads = Object.values(inputs).flatMap((list) => list.map((input) => input.file));
    reads.push(...Object.keys(plan.files ?? {}), ...(spec.reads ?? []));
    const deps = {
      ffmpeg: binaries.ffmpeg,
      ffprobe: binaries.ffprobe,
      runner: this.parts,
      slots,
      logger,
      timeoutMs: config.jobTimeoutMs,
      partSeconds: config.partMs / 1000,
    };
    return splitEncode(deps, spec, {
      id,
      dir,
      reads,
      ...(options.owner !== undefined ? { owner: options.owner } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { onRatio, onSplit } : {}),
      onLog: (_task, log) => logs.push(log),
    });
  }

  private async ensureOutput(dir: string, name: string): Promise<void> {
    const info = await stat(path.join(dir, name)).catch(() => undefined);
    if (!info || info.size === 0) throw mediaError('Processing produced no output');
  }
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

/**
 * Makes a local input (a CLI path, an own output) visible in the workspace without copying it: a
 * hard link where it can be one, so the job keeps its input even if the original is deleted
 * meanwhile (the retention sweeper), else a symbolic link.
 */
async function linkLocal(source: string, localPath: string, target: string): Promise<void> {
  const absolute = path.resolve(localPath);
  try {
    await access(absolute, constants.R_OK);
  } catch {
    throw paramError(`Input file not found or not readable: ${source}`);
  }
  if (!(await stat(absolute)).isFile()) throw paramError(`Input is not a regular file: ${source}`);
  // The real path: a hard link to a relative symbolic link would point elsewhere from the workspace.
  const real = await realpath(absolute);
  await link(real, target).catch(() => symlink(real, target));
}
