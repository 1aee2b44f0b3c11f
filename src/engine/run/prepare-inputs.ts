import { access, constants, link, realpath, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import PQueue from 'p-queue';
import type { Config } from '../config.js';
import type { InputKind, LocalInput, SpeechInput } from '../contract/plugin.js';
import { paramError } from '../errors.js';
import { inputArgs } from '../exec/input-policy.js';
import { ByteBudget, download, inputTooLarge, type FetchLimits } from '../inputs/fetcher.js';
import type { Fetch } from '../inputs/input-cache.js';
import { checkKind } from '../inputs/input-kind.js';
import { probeFile } from '../probe/probe.js';
import { subtitleAsAss } from '../subtitles/subtitle-ass.js';
import type { EngineDeps } from './engine-deps.js';
import type * as SubtitleEncoding from '../subtitles/subtitle-encoding.js';
import type { JobOptions } from './job-run.js';
import { speaker } from './spoken-inputs.js';

/** An input as the user named it, with the kind its parameter needs. */
export interface InputRequest {
  param: string;
  source: string;
  kind: InputKind;
  /** The local file behind the source, when it is not fetched. */
  localPath?: string;
  /** The output-store path behind the source (an own output), when it is not fetched. */
  stored?: string;
  /** Speech the engine makes instead of fetching anything (NamedInput.speak). */
  speak?: SpeechInput;
}

/** What preparing the inputs uses of the engine. */
export type InputDeps = Pick<
  EngineDeps,
  'config' | 'binaries' | 'store' | 'cache' | 'observer' | 'textWorkers' | 'voices'
>;

/** Times `work` under `name` in the job's timings. */
export type Timed = <T>(name: string, work: () => Promise<T>) => Promise<T>;

/** A job's inputs in its workspace, probed and checked: by parameter, in the order requested, and each file's kind. */
export interface PreparedInputs {
  inputs: Record<string, LocalInput[]>;
  locals: LocalInput[];
  kinds: Map<string, InputKind>;
}

/** The download limits and address policy of the configuration. */
export function fetchLimits(config: Config): FetchLimits {
  return {
    allowPrivate: config.allowPrivateUrls,
    allowedHosts: config.allowedHosts,
    maxBytes: config.maxInputBytes,
    timeoutMs: config.downloadTimeoutMs,
    firstByteTimeoutMs: config.firstByteTimeoutMs,
    maxRedirects: 5,
  };
}

/**
 * Fetches (or links) a job's inputs into `dir` and probes and checks each: the download stage, then the probe
 * stage, each timed. Each input is probed as soon as it has arrived, while the others still download (four probes
 * at most, so a hundred images do not start a hundred processes); the probe stage is what remains of the probing
 * once the last input is in.
 */
export async function prepareInputs(
  deps: InputDeps,
  dir: string,
  requests: InputRequest[],
  options: Pick<JobOptions, 'signal' | 'onProgress'>,
  time: Timed,
): Promise<PreparedInputs> {
  options.signal?.throwIfAborted();
  options.onProgress?.({ stage: 'download' });
  const probes = new PQueue({ concurrency: 4 });
  const probing: Array<Promise<LocalInput>> = [];
  const stopProbes = new AbortController();
  const probeSignal = options.signal ? AbortSignal.any([options.signal, stopProbes.signal]) : stopProbes.signal;
  try {
    await time('downloadMs', () =>
      fetchAll(deps, dir, requests, options.signal, (index, file, speech) => {
        probing[index] = probes.add(async () => {
          const local = await probeInput(deps, dir, file, requests[index]!, probeSignal);
          return speech ? { ...local, speech } : local;
        });
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
  return { inputs, locals, kinds };
}

/**
 * Downloads (or links) every input in parallel, and speaks those to speak one after the other meanwhile, telling
 * `arrived` of each (with its speech's timings); the first failure cancels the rest.
 */
async function fetchAll(
  deps: InputDeps,
  dir: string,
  requests: InputRequest[],
  signal: AbortSignal | undefined,
  arrived: (index: number, file: string, speech?: LocalInput['speech']) => void,
): Promise<void> {
  const { config } = deps;
  const limits = fetchLimits(config);
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
  const speak = speaker({ voices: deps.voices, dir, signal: combined, timeoutMs: config.jobTimeoutMs });
  const fetchOne = async (request: InputRequest, index: number): Promise<void> => {
    if (request.speak) {
      const name = `in${index}.wav`;
      arrived(index, name, await speak(request.speak, path.join(dir, name)));
      return;
    }
    const name = `in${index}${safeExtension(request.source)}`;
    const subtitle = request.kind === 'subtitle';
    if (request.stored !== undefined) await deps.store.copyTo(request.stored, path.join(dir, name));
    else if (request.localPath !== undefined) await linkLocal(request.source, request.localPath, path.join(dir, name));
    else {
      const fetch: Fetch = (destination, headers) => {
        const options = { signal: combined, budget, headers };
        return download(request.source, destination, subtitle ? subtitleLimits : limits, options);
      };
      const target = path.join(dir, name);
      const result = deps.cache
        ? await deps.cache.fetch(request.source, target, fetch)
        : { ...(await fetch(target, {})), cache: 'bypass' };
      // Bodies reused from the cache (hits, 304s) were not downloaded again.
      if (result.cache === 'miss' || result.cache === 'bypass') deps.observer?.downloaded(result.bytes);
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
 * A subtitle input rewritten as UTF-8 (subtitles/subtitle-encoding.ts): its encoding detectors, chardet and iconv-lite,
 * load with the first subtitle input, not with every engine.
 */
const subtitleToUtf8: typeof SubtitleEncoding.subtitleToUtf8 = async (...args) =>
  (await import('../subtitles/subtitle-encoding.js')).subtitleToUtf8(...args);

/**
 * Makes one arrived input ready for the builder: subtitles converted to UTF-8 (ffmpeg and libass
 * read no other encoding), probed, checked against its kind, and subtitles given as ASS text too
 * (subtitle-ass.ts). An input no demuxer reads fails with the subtitle decoder's error when there
 * is one: a subtitle input in no encoding that can be told, and no media either, is binary data,
 * and is told as such.
 */
async function probeInput(
  deps: InputDeps,
  dir: string,
  file: string,
  request: InputRequest,
  signal: AbortSignal | undefined,
): Promise<LocalInput> {
  const { config, binaries } = deps;
  signal?.throwIfAborted();
  const undecodable =
    request.kind === 'subtitle'
      ? await subtitleToUtf8(deps.textWorkers, path.join(dir, file), request.source, signal)
      : undefined;
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
