import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ModelSettings } from '../contract/speech.js';
import { downloadError, MediaflowError, mediaError, paramError } from '../errors.js';
import type { FetchLimits } from '../inputs/fetcher.js';
import { withoutUserinfo } from '../safe-text.js';
import { isAbandonedTemp, tempName } from '../storage/storage.js';
import { checkModelFile } from './ggml-check.js';
import { isEnglishOnly, modelFileName, WHISPER_MODELS, type WhisperModel } from './model-table.js';
import { SharedTasks } from '../shared-tasks.js';

export { WHISPER_MODELS, isEnglishOnly, type WhisperModel } from './model-table.js';

export interface ModelOptions {
  /** Stops this caller's wait; the download itself stops only when no other caller still waits for it. */
  signal?: AbortSignal;
  /** Told before a name is downloaded (the CLI says so on stderr). */
  onFetch?: (model: WhisperModel, url: string) => void;
  /** The known models: WHISPER_MODELS unless a test brings a table of models it generated. */
  models?: readonly WhisperModel[];
}

/** A model ready for whisper.cpp: its file, its name when it is a known one, and whether it knows other languages. */
export interface ResolvedModel {
  path: string;
  name?: string;
  /** False for English-only models (`.en`, n_vocab 51864): another language than English is then a 400 to give. */
  multilingual: boolean;
}

/** `<dataDir>/models`: where names are kept once fetched. */
export const modelsDir = (dataDir: string): string => path.join(dataDir, 'models');

/** Where a known model lives once fetched. */
export const modelPath = (dataDir: string, name: string): string => path.join(modelsDir(dataDir), modelFileName(name));

/**
 * The slowest transfer a model's download is given time for: its time limit is the longer of
 * MEDIAFLOW_DOWNLOAD_TIMEOUT (made for inputs) and its published size at this rate (49 min for large-v3's 2.9 GiB).
 */
const SLOWEST_BYTES_PER_SECOND = 1024 ** 2;

/** The known model `name` stands for, if any. */
export const knownModel = (name: string, models: readonly WhisperModel[] = WHISPER_MODELS) =>
  models.find((model) => model.name === name);

/** SHA-256 of a whole file, streamed. */
export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

const sizeOf = async (file: string): Promise<number | undefined> => {
  try {
    const stats = await stat(file);
    return stats.isFile() ? stats.size : undefined;
  } catch {
    return undefined;
  }
};

/**
 * The model `spec` names, ready to load: a known name (`tiny.en`, `base`, ...) is fetched on first use into
 * `<dataDir>/models/ggml-<name>.bin` from `<MEDIAFLOW_WHISPER_MODEL_URL>/ggml-<name>.bin` and its SHA-256 checked;
 * anything else is a path to a model file, checked to be a whole ggml model (magic, layout, every tensor present).
 * A name is always a name: a file called `tiny.en` is `./tiny.en`.
 */
export async function ensureWhisperModel(
  spec: string,
  settings: ModelSettings,
  options: ModelOptions = {},
): Promise<ResolvedModel> {
  const model = knownModel(spec, options.models);
  if (!model) {
    const file = path.resolve(spec);
    if ((await sizeOf(file)) === undefined) throw unknownSpec(spec, options.models ?? WHISPER_MODELS);
    const { multilingual } = await checkModelFile(file, spec);
    return { path: file, multilingual };
  }
  const file = modelPath(settings.dataDir, model.name);
  const size = await sizeOf(file);
  if (size === undefined) {
    await sharedFetch(model, file, settings, options);
  } else if (size !== model.bytes) {
    throw wrongSize(model, size);
  }
  return { path: file, name: model.name, multilingual: !isEnglishOnly(model.name) };
}

/**
 * The 500 for a known model's file of another size than the published one. Only a whole, checked download is ever
 * renamed into place: another size is a file put there by hand. The message names the setting and the file, not
 * the data directory's path.
 */
const wrongSize = (model: WhisperModel, size: number) =>
  new MediaflowError(
    'MF_ERR_INTERNAL',
    `MEDIAFLOW_WHISPER_MODEL is not usable: the data directory's models/${modelFileName(model.name)} is not the ` +
      `published one (${size} bytes, not ${model.bytes}): delete it, or run \`mediaflow models fetch ${model.name}\` ` +
      'to fetch it again',
  );

/**
 * The request's own check of a known model (synchronous, a stat): a 500 when its file is there with another size than
 * the published one. A file not there yet is fetched when a recognition needs it.
 */
export function checkFetchedModel(name: string, dataDir: string): void {
  const model = knownModel(name);
  if (!model) return;
  let stats;
  try {
    stats = statSync(modelPath(dataDir, model.name));
  } catch {
    return;
  }
  if (stats.isFile() && stats.size !== model.bytes) throw wrongSize(model, stats.size);
}

const unknownSpec = (spec: string, models: readonly WhisperModel[]) =>
  paramError(
    `Model '${spec}' is neither a model file nor a known model name ` +
      `(${models.map((model) => model.name).join(', ')})`,
  );

/**
 * Downloads under way in this process, by destination file: concurrent first requests share one, whichever engine
 * asks, as they would share the file.
 */
const downloads = new SharedTasks();

/** Waits for `file`'s download, starting it unless one is under way; a caller's signal ends only its own wait. */
const sharedFetch = (model: WhisperModel, file: string, settings: ModelSettings, options: ModelOptions) =>
  downloads.run(file, (signal) => fetchModel(model, file, settings, signal, options.onFetch), options.signal);

/**
 * Fetches a known model through the inputs' guarded fetcher (the private-address rules of MEDIAFLOW_ALLOW_PRIVATE_URLS,
 * first-byte and total time limits, at most its published size) into a temp file beside its place, checks its size
 * and SHA-256, and only then renames it into place: the file is there whole and checked, or not at all.
 */
async function fetchModel(
  model: WhisperModel,
  file: string,
  settings: ModelSettings,
  signal: AbortSignal,
  onFetch: ModelOptions['onFetch'],
): Promise<void> {
  // The HTTP client loads for a fetch, not with the transcribe plugin's parameter checks (nor `mediaflow --version`).
  const { download, formatBytes } = await import('../inputs/fetcher.js');
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true });
  // What a killed process left half-written.
  for (const name of await readdir(dir)) {
    if (isAbandonedTemp(name)) await rm(path.join(dir, name), { force: true, recursive: true });
  }
  const url = `${settings.whisperModelUrl}/${modelFileName(model.name)}`;
  // The URL as messages and the CLI show it: the operator's credentials in it are for the fetch alone.
  const shown = withoutUserinfo(url);
  const limits: FetchLimits = {
    allowPrivate: settings.allowPrivateUrls,
    // The URL is the operator's, not a request's: MEDIAFLOW_ALLOWED_HOSTS (made for inputs) does not apply, and the
    // model location's redirects to its CDN are followed under the private-address rules.
    allowedHosts: [],
    maxBytes: model.bytes,
    maxBytesSetting: `the published size of ${modelFileName(model.name)}`,
    timeoutMs: Math.max(settings.downloadTimeoutMs, Math.ceil(model.bytes / SLOWEST_BYTES_PER_SECOND) * 1000),
    firstByteTimeoutMs: settings.firstByteTimeoutMs,
    maxRedirects: 5,
  };
  const temp = path.join(dir, tempName());
  onFetch?.(model, shown);
  try {
    const { bytes } = await download(url, temp, limits, { signal });
    if (bytes !== model.bytes)
      throw downloadError(
        shown,
        `it sent ${bytes} bytes, not the ${model.bytes} (${formatBytes(model.bytes)}) published`,
      );
    const sha256 = await sha256Of(temp);
    if (sha256 !== model.sha256)
      throw downloadError(
        shown,
        `its SHA-256 is ${sha256}, not the ${model.sha256} published for ${modelFileName(model.name)}: refused`,
      );
    await rename(temp, file);
  } finally {
    await rm(temp, { force: true });
  }
}

/** One known model as `mediaflow models` lists it. */
export interface ModelListing extends WhisperModel {
  path: string;
  present: boolean;
}

/** The known models, each with its place under `<dataDir>/models` and whether a file is there. */
export async function listWhisperModels(
  dataDir: string,
  models: readonly WhisperModel[] = WHISPER_MODELS,
): Promise<ModelListing[]> {
  return Promise.all(
    models.map(async (model) => {
      const file = modelPath(dataDir, model.name);
      return { ...model, path: file, present: (await sizeOf(file)) !== undefined };
    }),
  );
}

/** What a re-check found: the file, its SHA-256 and the known model it is, if any. */
export interface Verified {
  path: string;
  sha256: string;
  name?: string;
}

/**
 * Re-checks a model in full: a known name's fetched file against its published SHA-256 (a 422 when it differs), or
 * a path's layout, then its SHA-256 looked up among the known models.
 */
export async function verifyWhisperModel(
  spec: string,
  dataDir: string,
  models: readonly WhisperModel[] = WHISPER_MODELS,
): Promise<Verified> {
  const model = knownModel(spec, models);
  if (!model) {
    const file = path.resolve(spec);
    if ((await sizeOf(file)) === undefined) throw unknownSpec(spec, models);
    await checkModelFile(file, spec);
    const sha256 = await sha256Of(file);
    const known = models.find((candidate) => candidate.sha256 === sha256);
    return known ? { path: file, sha256, name: known.name } : { path: file, sha256 };
  }
  const file = modelPath(dataDir, model.name);
  if ((await sizeOf(file)) === undefined)
    throw paramError(`Model ${model.name} is not fetched (no ${file}): run \`mediaflow models fetch ${model.name}\``);
  const sha256 = await sha256Of(file);
  if (sha256 !== model.sha256)
    throw mediaError(
      `${file} is not the published ${modelFileName(model.name)}: its SHA-256 is ${sha256}, not ${model.sha256}`,
    );
  return { path: file, sha256, name: model.name };
}
