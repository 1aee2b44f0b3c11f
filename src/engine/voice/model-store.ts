import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { appendFile, copyFile, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../config.js';
import { downloadError, MediaflowError, paramError } from '../errors.js';
import { download } from '../inputs/fetcher.js';
import { isAbandonedTemp, tempName } from '../storage/storage.js';
import { runProgram } from '../exec/child-process.js';
import { metadataEntries, ModelFileError, onnxMetadata } from './onnx-file.js';
import { readPiperConfig } from './piper-config.js';
import { SharedTasks } from '../shared-tasks.js';
import type { ModelEntry } from './tts-models.js';

/**
 * The neural voices' model files, ready for sherpa-onnx: a model given by path is read where it is (a Piper voice
 * as Piper publishes it, `.onnx` beside its `.onnx.json`, is first given the metadata sherpa-onnx reads, in a copy
 * under `<data-dir>/voices`); a model given by URL is fetched once into `<data-dir>/voices/<engine>/<name>` through
 * the inputs' guarded fetcher, each file checked against its SHA-256, and the folder renamed into place only when
 * whole: it is there complete, or not at all.
 */

/** The settings the store follows: where models are kept, and the download rules of inputs. */
export type ModelStoreSettings = Pick<
  Config,
  'dataDir' | 'allowPrivateUrls' | 'downloadTimeoutMs' | 'firstByteTimeoutMs'
>;

/** sherpa-onnx's model section for one model, with absolute paths (sherpa-child.ts passes it on). */
export interface SherpaModel {
  vits?: {
    model: string;
    tokens: string;
    dataDir: string;
    noiseScale: number;
    noiseScaleW: number;
    lengthScale: number;
  };
  kokoro?: { model: string; voices: string; tokens: string; dataDir: string; lexicon?: string; dictDir?: string };
}

/** A model ready to speak: how sherpa-onnx loads it, its rate, and the voices it has (a speaker each). */
export interface ReadyModel {
  entry: ModelEntry;
  sherpa: SherpaModel;
  sampleRate: number;
  voices: Array<{ name: string; language: string; speaker: number }>;
}

/** What a fetch or a check found of each file: its path, and its SHA-256 as published (for a prepared copy). */
export interface CheckedFile {
  path: string;
  sha256: string;
}

/** The record a prepared or fetched folder keeps of the files it was made from. */
interface Manifest {
  source: string;
  /** A path's size and time of change when it was prepared: another means it changed, and is prepared again. */
  size?: number;
  mtimeMs?: number;
  /** Each file as given, before any metadata was appended. */
  files: Array<{ name: string; bytes: number; sha256: string }>;
}

const MANIFEST = 'mediaflow-voice.json';
/** The largest model file fetched (Kokoro's is 330 MB, Piper's high voices 110 MB); its config files far less. */
const LARGEST_MODEL_BYTES = 2 * 1024 ** 3;
const LARGEST_OTHER_BYTES = 64 * 1024 ** 2;
/** The slowest transfer a model's download is given time for, as for whisper models. */
const SLOWEST_BYTES_PER_SECOND = 1024 ** 2;

/** A model that cannot be used: a 500, since the server's setting is at fault; it names the setting. */
export const unusableModel = (entry: ModelEntry, why: string) =>
  new MediaflowError(
    'MF_ERR_INTERNAL',
    `MEDIAFLOW_TTS_MODELS' ${entry.id} is not a usable ${entry.engine === 'piper' ? 'Piper' : 'Kokoro'} model: ${why}`,
  );

/** SHA-256 of a file's first `bytes` bytes (all of it when not given). */
async function sha256Of(file: string, bytes?: number): Promise<string> {
  const hash = createHash('sha256');
  if (bytes === 0) return hash.digest('hex');
  await pipeline(createReadStream(file, bytes === undefined ? {} : { end: bytes - 1 }), hash);
  return hash.digest('hex');
}

/** A file's bytes after its first `offset` (the metadata appended to a Piper model). */
async function bytesAfter(file: string, offset: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const tail = Buffer.alloc(Math.max(0, size - offset));
    await handle.read(tail, 0, tail.length, offset);
    return tail;
  } finally {
    await handle.close();
  }
}

async function readManifest(dir: string): Promise<Manifest | undefined> {
  try {
    return JSON.parse(await readFile(path.join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
}

const languageOf = (tag: string): string => {
  try {
    return Intl.getCanonicalLocales(tag.replace(/_/g, '-'))[0] ?? tag;
  } catch {
    return tag;
  }
};

/** Kokoro's speakers are named by language and sex (`af_heart`: American English, female): the first letter. */
const KOKORO_LANGUAGES: Record<string, string> = {
  a: 'en-US',
  b: 'en-GB',
  e: 'es',
  f: 'fr',
  h: 'hi',
  i: 'it',
  j: 'ja',
  p: 'pt-BR',
  z: 'zh',
};

export class ModelStore {
  private readonly tasks = new SharedTasks();
  private espeakData?: Promise<string | undefined>;

  constructor(private readonly settings: ModelStoreSettings) {}

  /** Where a model's prepared or fetched files are kept. */
  dirOf(entry: ModelEntry): string {
    return path.join(this.settings.dataDir, 'voices', entry.engine, entry.name);
  }

  /**
   * The model ready to load, without fetching: undefined for a URL's model not fetched yet. A path's Piper voice is
   * prepared (given its metadata) here when it needs it.
   */
  async present(entry: ModelEntry, signal?: AbortSignal): Promise<ReadyModel | undefined> {
    if (entry.files) {
      const dir = this.dirOf(entry);
      return (await readManifest(dir)) ? this.load(entry, dir) : undefined;
    }
    if (entry.engine === 'kokoro') return this.load(entry, entry.source);
    return this.loadPiperPath(entry, signal);
  }

  /** The model ready to load, fetched first when it is a URL's and not fetched yet. */
  async ensure(
    entry: ModelEntry,
    options: { signal?: AbortSignal; onFetch?: (url: string) => void } = {},
  ): Promise<ReadyModel> {
    const ready = await this.present(entry, options.signal);
    if (ready) return ready;
    await this.tasks.run(entry.id, (signal) => this.fetch(entry, signal, options.onFetch), options.signal);
    return this.load(entry, this.dirOf(entry));
  }

  /** espeak-ng's data folder (Debian's espeak-ng-data), which turns text into the phonemes both engines speak. */
  private systemEspeakData(): Promise<string | undefined> {
    this.espeakData ??= runProgram('espeak-ng', ['--version'], { timeoutMs: 10_000 }).then((run) =>
      /Data at: (.+)$/m.exec(run.stdout)?.[1]?.trim(),
    );
    return this.espeakData;
  }

  /** The model's own espeak-ng-data (sherpa-onnx's releases carry one), else the system's. */
  private async dataDirFor(entry: ModelEntry, dir: string): Promise<string> {
    const own = path.join(dir, 'espeak-ng-data');
    if (existsSync(own)) return own;
    const system = await this.systemEspeakData();
    if (!system) throw unusableModel(entry, "espeak-ng's data is not installed (apt-get install espeak-ng-data)");
    return system;
  }

  /** A Piper voice given by path: used in place when it has sherpa-onnx's metadata, else prepared once. */
  private async loadPiperPath(entry: ModelEntry, signal?: AbortSignal): Promise<ReadyModel> {
    const metadata = await this.metadataOf(entry, entry.source);
    const tokens = path.join(path.dirname(entry.source), 'tokens.txt');
    if (metadata.has('sample_rate') && existsSync(tokens)) {
      return {
        entry,
        sherpa: {
          vits: {
            model: entry.source,
            tokens,
            dataDir: await this.dataDirFor(entry, path.dirname(entry.source)),
            noiseScale: 0.667,
            noiseScaleW: 0.8,
            lengthScale: 1,
          },
        },
        sampleRate: Number(metadata.get('sample_rate')),
        voices: [{ name: entry.name, language: languageOf(metadata.get('voice') ?? 'en'), speaker: 0 }],
      };
    }
    const dir = this.dirOf(entry);
    const source = await stat(`${entry.source}.json`).then(
      () => stat(entry.source),
      () => {
        throw unusableModel(
          entry,
          `it has no sherpa-onnx metadata, and no ${path.basename(entry.source)}.json beside it`,
        );
      },
    );
    const manifest = await readManifest(dir);
    if (manifest?.source !== entry.source || manifest.size !== source.size || manifest.mtimeMs !== source.mtimeMs) {
      await this.tasks.run(
        entry.id,
        async () => {
          const copies = [entry.source, `${entry.source}.json`];
          await this.intoPlace(entry, async (temp) => {
            await copyFile(copies[0]!, path.join(temp, 'model.onnx'));
            await copyFile(copies[1]!, path.join(temp, 'model.onnx.json'));
            const files = await Promise.all(
              ['model.onnx', 'model.onnx.json'].map(async (name) => ({
                name,
                bytes: (await stat(path.join(temp, name))).size,
                sha256: await sha256Of(path.join(temp, name)),
              })),
            );
            return { source: entry.source, size: source.size, mtimeMs: source.mtimeMs, files };
          });
        },
        signal,
      );
    }
    return this.load(entry, dir);
  }

  /**
   * Forgets the copy a path's model was prepared into (after sherpa-onnx could not load it): it is made again from
   * the file when next needed. A URL's model stays: it is the file the setting names, checked.
   */
  async discardPrepared(entry: ModelEntry): Promise<void> {
    if (!entry.files) await rm(this.dirOf(entry), { recursive: true, force: true });
  }

  /** A Piper folder's config, or a 500 saying what is wrong with it. */
  private async piperConfig(entry: ModelEntry, dir: string) {
    try {
      return readPiperConfig(await readFile(path.join(dir, 'model.onnx.json'), 'utf8'));
    } catch (error) {
      throw unusableModel(entry, (error as Error).message);
    }
  }

  /** The model's metadata, or a 500 saying why it is no model. */
  private async metadataOf(entry: ModelEntry, file: string): Promise<Map<string, string>> {
    try {
      return await onnxMetadata(file);
    } catch (error) {
      if (error instanceof ModelFileError) throw unusableModel(entry, error.message);
      const code = (error as NodeJS.ErrnoException).code;
      throw unusableModel(
        entry,
        code === 'ENOENT' ? `${path.basename(file)} is not there` : `it cannot be read (${code})`,
      );
    }
  }

  /**
   * Makes a model's folder in a temp folder beside its place (`fill` writes the files and answers the manifest),
   * gives a Piper voice its metadata and tokens, and renames the folder into place: whole, or not at all.
   */
  private async intoPlace(entry: ModelEntry, fill: (temp: string) => Promise<Manifest>): Promise<void> {
    const parent = path.dirname(this.dirOf(entry));
    await mkdir(parent, { recursive: true });
    // What a killed process left half-written.
    for (const name of await readdir(parent)) {
      if (isAbandonedTemp(name)) await rm(path.join(parent, name), { recursive: true, force: true });
    }
    const temp = path.join(parent, tempName());
    await mkdir(temp);
    try {
      const manifest = await fill(temp);
      if (entry.engine === 'piper') {
        const config = await this.piperConfig(entry, temp);
        await this.metadataOf(entry, path.join(temp, 'model.onnx'));
        await appendFile(path.join(temp, 'model.onnx'), metadataEntries(config.metadata));
        await writeFile(path.join(temp, 'tokens.txt'), config.tokens);
      }
      await writeFile(path.join(temp, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
      await rm(this.dirOf(entry), { recursive: true, force: true });
      await rename(temp, this.dirOf(entry));
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }

  /** Fetches a URL's model, each file checked against its SHA-256 before the folder is put in place. */
  private async fetch(entry: ModelEntry, signal: AbortSignal, onFetch?: (url: string) => void): Promise<void> {
    await this.intoPlace(entry, async (temp) => {
      const files: Manifest['files'] = [];
      for (const file of entry.files!) {
        const maxBytes = file.name === 'model.onnx' ? LARGEST_MODEL_BYTES : LARGEST_OTHER_BYTES;
        onFetch?.(file.url);
        const target = path.join(temp, file.name);
        const { bytes } = await download(
          file.url,
          target,
          {
            allowPrivate: this.settings.allowPrivateUrls,
            // The URL is the operator's, not a request's: MEDIAFLOW_ALLOWED_HOSTS (made for inputs) does not apply.
            allowedHosts: [],
            maxBytes,
            maxBytesSetting: `the largest ${file.name} mediaflow fetches`,
            timeoutMs: Math.max(this.settings.downloadTimeoutMs, (maxBytes / SLOWEST_BYTES_PER_SECOND) * 1000),
            firstByteTimeoutMs: this.settings.firstByteTimeoutMs,
            maxRedirects: 5,
          },
          { signal },
        );
        const sha256 = await sha256Of(target);
        if (sha256 !== file.sha256)
          throw downloadError(
            file.url,
            `its SHA-256 is ${sha256}, not the ${file.sha256} MEDIAFLOW_TTS_MODELS gives: refused`,
          );
        files.push({ name: file.name, bytes, sha256 });
      }
      return { source: entry.source, files };
    });
  }

  /** A model's folder (prepared, fetched, or a Kokoro model's own) read into what sherpa-onnx loads. */
  private async load(entry: ModelEntry, dir: string): Promise<ReadyModel> {
    const model = path.join(dir, 'model.onnx');
    const metadata = await this.metadataOf(entry, model);
    const number = (key: string) => {
      const value = Number(metadata.get(key));
      if (!metadata.has(key) || !Number.isFinite(value)) throw unusableModel(entry, `its metadata has no ${key}`);
      return value;
    };
    const sampleRate = number('sample_rate');
    const speakers = Math.max(1, number('n_speakers'));
    const dataDir = await this.dataDirFor(entry, dir);
    if (entry.engine === 'piper') {
      const config = await this.piperConfig(entry, dir);
      return {
        entry,
        sherpa: {
          vits: {
            model,
            tokens: path.join(dir, 'tokens.txt'),
            dataDir,
            noiseScale: config.noiseScale,
            noiseScaleW: config.noiseW,
            lengthScale: config.lengthScale,
          },
        },
        sampleRate,
        voices: [{ name: entry.name, language: config.language, speaker: 0 }],
      };
    }
    return this.loadKokoro(entry, dir, metadata, sampleRate, speakers, dataDir);
  }

  private async loadKokoro(
    entry: ModelEntry,
    dir: string,
    metadata: Map<string, string>,
    sampleRate: number,
    speakers: number,
    dataDir: string,
  ): Promise<ReadyModel> {
    const style = (metadata.get('style_dim') ?? '').split(',').map(Number);
    if (style.length !== 3 || !style.every((n) => Number.isInteger(n) && n > 0))
      throw unusableModel(entry, "its metadata has no style_dim (is it sherpa-onnx's Kokoro model?)");
    const voicesFile = path.join(dir, 'voices.bin');
    const expected = speakers * style[0]! * style[2]! * 4;
    const actual = await stat(voicesFile).then(
      (found) => found.size,
      () => undefined,
    );
    if (actual !== expected)
      throw unusableModel(
        entry,
        actual === undefined
          ? 'it has no voices.bin'
          : `its voices.bin has ${actual} bytes, not the ${expected} its ${speakers} speakers need`,
      );
    const tokens = path.join(dir, 'tokens.txt');
    if (!existsSync(tokens)) throw unusableModel(entry, 'it has no tokens.txt');
    const names = (metadata.get('speaker_names') ?? '').split(',').filter(Boolean);
    const fallback = languageOf(metadata.get('voice') ?? 'en-US');
    const files = await readdir(dir);
    const lexicon = files.filter((name) => /^lexicon.*\.txt$/.test(name)).map((name) => path.join(dir, name));
    return {
      entry,
      sherpa: {
        kokoro: {
          model: path.join(dir, 'model.onnx'),
          voices: voicesFile,
          tokens,
          dataDir,
          ...(lexicon.length > 0 ? { lexicon: lexicon.join(',') } : {}),
          ...(files.includes('dict') ? { dictDir: path.join(dir, 'dict') } : {}),
        },
      },
      sampleRate,
      voices: Array.from({ length: speakers }, (_, speaker) => {
        const name = names[speaker] ?? `${entry.name}-${speaker}`;
        const prefix = /^([a-z])[fm]_/.exec(name)?.[1];
        return { name, language: (prefix && KOKORO_LANGUAGES[prefix]) ?? fallback, speaker };
      }),
    };
  }

  /**
   * Re-checks a model's files in full: a fetched model's against the SHA-256 the setting gives (a Piper model's
   * first bytes, those fetched, and the metadata after them against its config), a path's layout and metadata.
   */
  async verify(entry: ModelEntry): Promise<CheckedFile[]> {
    if (!entry.files) {
      const ready = await this.present(entry);
      const model = ready!.sherpa.vits?.model ?? ready!.sherpa.kokoro!.model;
      return [{ path: model, sha256: await sha256Of(model) }];
    }
    const dir = this.dirOf(entry);
    const manifest = await readManifest(dir);
    if (!manifest)
      throw paramError(`${entry.id} is not fetched (no ${dir}): run \`mediaflow voices fetch ${entry.id}\``);
    const checked: CheckedFile[] = [];
    for (const file of entry.files) {
      const where = path.join(dir, file.name);
      const kept = manifest.files.find((candidate) => candidate.name === file.name);
      const sha256 = kept ? await sha256Of(where, kept.bytes).catch(() => undefined) : undefined;
      if (sha256 !== file.sha256)
        throw new MediaflowError(
          'MF_ERR_MEDIA',
          `${where} is not the file MEDIAFLOW_TTS_MODELS names: its SHA-256 is ${sha256 ?? 'unknown (missing)'}, ` +
            `not ${file.sha256}`,
        );
      checked.push({ path: where, sha256 });
    }
    if (entry.engine === 'piper') {
      const config = await this.piperConfig(entry, dir);
      const kept = manifest.files.find((file) => file.name === 'model.onnx')!;
      const appended = await bytesAfter(path.join(dir, 'model.onnx'), kept.bytes);
      if (!appended.equals(metadataEntries(config.metadata)))
        throw new MediaflowError(
          'MF_ERR_MEDIA',
          `${path.join(dir, 'model.onnx')}'s metadata is not the one its config gives`,
        );
    }
    await this.load(entry, dir);
    return checked;
  }
}
