import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MediaflowError } from '../../../src/engine/errors.js';
import {
  ensureWhisperModel,
  isEnglishOnly,
  verifyWhisperModel,
  WHISPER_MODELS,
  type WhisperModel,
} from '../../../src/engine/speech/models.js';
import type { ModelSettings } from '../../../src/engine/contract/speech.js';
import { startFileServer, type FileServer, type Route } from '../../helpers/file-server.js';
import { after, before, beforeEach, describe, it } from '../../helpers/lifecycle.js';
import { writeScriptedModel } from '../../helpers/whisper-model.js';

/**
 * Names fetched from a server on 127.0.0.1 serving a generated model (8 MB), against a table of known models that
 * the tests make from it: the published table's files cannot be downloaded here.
 */
let root: string;
let source: string;
let bytes: Buffer;
let server: FileServer;
/** What the server does with `/models/ggml-scripted.en.bin`; each case sets it. */
let serve: Route;
let table: WhisperModel[];

const FILE = '/models/ggml-scripted.en.bin';

before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-models-'));
  source = path.join(root, 'scripted.bin');
  await writeScriptedModel(source, { segments: [{ start: 0, end: 2, text: 'Hello world.' }] });
  bytes = await readFile(source);
  table = [{ name: 'scripted.en', bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }];
  server = await startFileServer({ [FILE]: (req, res, url) => serve(req, res, url) });
});

after(async () => {
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

let dataDir: string;
let settings: ModelSettings;

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(root, 'data-'));
  settings = {
    dataDir,
    whisperModelUrl: server.url('/models'),
    allowPrivateUrls: true,
    downloadTimeoutMs: 30_000,
    firstByteTimeoutMs: 10_000,
  };
  server.hits.clear();
  serve = (_req, res) => {
    res.writeHead(200, { 'content-length': bytes.length });
    res.end(bytes);
  };
});

const modelsDirFiles = async () => readdir(path.join(dataDir, 'models')).catch(() => []);

/** Rejects with a MediaflowError of this status whose message matches. */
async function refused(promise: Promise<unknown>, status: number, message: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof MediaflowError, String(error));
    assert.equal(error.status, status, error.message);
    assert.match(error.message, message);
    return true;
  });
}

describe('whisper model names', () => {
  it('are fetched once into <data-dir>/models, whole, when the SHA-256 is the published one', async () => {
    const model = await ensureWhisperModel('scripted.en', settings, { models: table });
    const expected = path.join(dataDir, 'models', 'ggml-scripted.en.bin');
    assert.deepEqual(model, { path: expected, name: 'scripted.en', multilingual: false });
    assert.ok((await readFile(expected)).equals(bytes));
    assert.deepEqual(await modelsDirFiles(), ['ggml-scripted.en.bin']);
    // Present: used as it is, nothing downloaded again.
    assert.deepEqual(await ensureWhisperModel('scripted.en', settings, { models: table }), model);
    assert.equal(server.hits.get(FILE), 1);
    assert.deepEqual(await verifyWhisperModel('scripted.en', dataDir, table), {
      path: expected,
      sha256: table[0]!.sha256,
      name: 'scripted.en',
    });
  });

  it('are refused when the SHA-256 differs, and nothing is left behind', async () => {
    const wrong = [{ ...table[0]!, sha256: 'ab'.repeat(32) }];
    await refused(
      ensureWhisperModel('scripted.en', settings, { models: wrong }),
      502,
      new RegExp(`^Failed to download .*ggml-scripted\\.en\\.bin: its SHA-256 is ${table[0]!.sha256}, not the a`),
    );
    assert.deepEqual(await modelsDirFiles(), []);
  });

  it('are downloaded once for two concurrent first requests, which both get the file', async () => {
    const [first, second] = await Promise.all([
      ensureWhisperModel('scripted.en', settings, { models: table }),
      ensureWhisperModel('scripted.en', settings, { models: table }),
    ]);
    assert.equal(server.hits.get(FILE), 1);
    assert.deepEqual(first, second);
    assert.ok((await readFile(first.path)).equals(bytes));
  });

  it('are refused when the connection is cut half way, leaving nothing, and fetched again next time', async () => {
    const whole = serve;
    serve = (_req, res) => {
      res.writeHead(200, { 'content-length': bytes.length });
      res.write(bytes.subarray(0, bytes.length >> 1), () => res.destroy());
    };
    await refused(ensureWhisperModel('scripted.en', settings, { models: table }), 502, /^Failed to download /);
    assert.deepEqual(await modelsDirFiles(), []);
    serve = whole;
    const model = await ensureWhisperModel('scripted.en', settings, { models: table });
    assert.ok((await readFile(model.path)).equals(bytes));
    assert.equal(server.hits.get(FILE), 2);
  });

  it('are refused past their published size, and when the server has them shorter', async () => {
    const smaller = [{ ...table[0]!, bytes: bytes.length - 1 }];
    await refused(
      ensureWhisperModel('scripted.en', settings, { models: smaller }),
      413,
      /larger than the limit of .* \(the published size of ggml-scripted\.en\.bin\)$/,
    );
    const larger = [{ ...table[0]!, bytes: bytes.length + 1 }];
    await refused(
      ensureWhisperModel('scripted.en', settings, { models: larger }),
      502,
      new RegExp(`: it sent ${bytes.length} bytes, not the ${bytes.length + 1} `),
    );
    assert.deepEqual(await modelsDirFiles(), []);
  });

  it('follow the private-address rules of inputs', async () => {
    await refused(
      ensureWhisperModel('scripted.en', { ...settings, allowPrivateUrls: false }, { models: table }),
      400,
      /is not allowed: .*loopback/,
    );
    assert.equal(server.hits.get(FILE), undefined);
  });

  it('stop downloading when the one caller waiting stops, leaving nothing behind', async () => {
    let sent!: () => void;
    const halfSent = new Promise<void>((resolve) => (sent = resolve));
    serve = (_req, res) => {
      res.writeHead(200, { 'content-length': bytes.length });
      res.write(bytes.subarray(0, bytes.length >> 1), () => sent());
      // and the rest never comes
    };
    const controller = new AbortController();
    const waiting = ensureWhisperModel('scripted.en', settings, { models: table, signal: controller.signal });
    await halfSent;
    controller.abort(new Error('job cancelled'));
    await assert.rejects(waiting, /job cancelled/);
    // The download's temp file goes once the fetcher has stopped.
    for (let i = 0; i < 100 && (await modelsDirFiles()).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(await modelsDirFiles(), []);
  });

  it('go on downloading for the others when one of two callers stops waiting', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let sent!: () => void;
    const started = new Promise<void>((resolve) => (sent = resolve));
    serve = (_req, res) => {
      res.writeHead(200, { 'content-length': bytes.length });
      res.write(bytes.subarray(0, 1000), () => {
        sent();
        void held.then(() => res.end(bytes.subarray(1000)));
      });
    };
    const controller = new AbortController();
    const leaving = ensureWhisperModel('scripted.en', settings, { models: table, signal: controller.signal });
    const staying = ensureWhisperModel('scripted.en', settings, { models: table });
    await started;
    controller.abort(new Error('job cancelled'));
    await assert.rejects(leaving, /job cancelled/);
    release();
    assert.ok((await readFile((await staying).path)).equals(bytes));
    assert.equal(server.hits.get(FILE), 1);
  });

  it('refuse a file of another size put in their place by hand (a 500, no path), saying what to do', async () => {
    await mkdir(path.join(dataDir, 'models'));
    await writeFile(path.join(dataDir, 'models', 'ggml-scripted.en.bin'), 'not a model');
    await refused(
      ensureWhisperModel('scripted.en', settings, { models: table }),
      500,
      new RegExp(
        "^MEDIAFLOW_WHISPER_MODEL is not usable: the data directory's models/ggml-scripted\\.en\\.bin is not the " +
          'published one \\(11 bytes, not \\d+\\): delete it, or run `mediaflow models fetch scripted\\.en` to fetch ' +
          'it again$',
      ),
    );
    assert.equal(server.hits.get(FILE), undefined);
  });
});

describe('whisper model paths', () => {
  it('are used as they are when they hold a whole ggml model', async () => {
    assert.deepEqual(await ensureWhisperModel(source, settings, { models: table }), {
      path: source,
      multilingual: false,
    });
    // Multilingual or not, from the vocabulary's size (51865 and up: multilingual).
    const multilingual = path.join(dataDir, 'multilingual.bin');
    await writeScriptedModel(multilingual, {
      segments: [{ start: 0, end: 2, text: 'Hallo Welt.' }],
      multilingual: true,
    });
    assert.deepEqual(await ensureWhisperModel(multilingual, settings), { path: multilingual, multilingual: true });
    assert.equal(server.hits.size, 0);
  });

  it('are refused when the file is cut short, or is not a model, or is not there', async () => {
    const cut = path.join(dataDir, 'cut.bin');
    await copyFile(source, cut);
    await truncate(cut, bytes.length - 100);
    await refused(
      ensureWhisperModel(cut, settings, { models: table }),
      422,
      /cut\.bin is cut short: it ends at byte \d+, inside its tensor 50 of 50$/,
    );
    // Cut before the first tensor: whisper.cpp would load it as an empty model and recognise nothing.
    await truncate(cut, 400_000);
    await refused(ensureWhisperModel(cut, settings, { models: table }), 422, /cut short: .* inside its vocabulary$/);
    const text = path.join(dataDir, 'notes.txt');
    await writeFile(text, 'hello, this is text');
    await refused(
      ensureWhisperModel(text, settings, { models: table }),
      422,
      /notes\.txt is not a whisper\.cpp ggml model: it does not start with the ggml magic number 0x67676d6c$/,
    );
    await refused(
      ensureWhisperModel(path.join(dataDir, 'nothing.bin'), settings, { models: table }),
      400,
      /nothing\.bin' is neither a model file nor a known model name \(scripted\.en\)$/,
    );
  });

  it('are verified by their SHA-256 against the known models', async () => {
    assert.deepEqual(await verifyWhisperModel(source, dataDir, table), {
      path: source,
      sha256: table[0]!.sha256,
      name: 'scripted.en',
    });
    assert.deepEqual(await verifyWhisperModel(source, dataDir), { path: source, sha256: table[0]!.sha256 });
  });
});

describe('the table of published models', () => {
  it('holds the sizes of each family, once each, with a SHA-256 and a size', () => {
    const names = WHISPER_MODELS.map((model) => model.name);
    assert.equal(new Set(names).size, names.length);
    for (const name of ['tiny', 'tiny.en', 'base', 'base.en', 'small', 'small.en', 'medium', 'medium.en'])
      assert.ok(names.includes(name), name);
    assert.ok(names.includes('large-v3') && names.includes('large-v3-turbo'));
    for (const model of WHISPER_MODELS) {
      assert.match(model.sha256, /^[0-9a-f]{64}$/, model.name);
      assert.ok(model.bytes > 30 * 1024 ** 2 && model.bytes < 3.5 * 1024 ** 3, model.name);
    }
    assert.deepEqual(
      names.filter((name) => isEnglishOnly(name)),
      names.filter((name) => name.includes('.en')),
    );
  });
});
