import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { submitJob, waitForJob } from './jobs.js';
import { after, before } from './lifecycle.js';
import { useScratch } from './scratch.js';
import { fixtures } from './fixtures.js';
import { contentTypeOf, serveFile, startFileServer, type FileServer, type Route } from './file-server.js';
import { runCli, startMediaflow, type TestServer } from './mediaflow.js';
import type { Registry } from '../../src/engine/plugins/registry.js';

/** A version 4 UUID, as a RegExp source: the job id in an output's URL. */
export const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

/** Writes media with ffmpeg: `args` (inputs and output options) then `file`, quietly, over anything there. */
export async function makeMedia(file: string, args: string[]): Promise<string> {
  await execa('ffmpeg', ['-v', 'error', ...args, '-y', file]);
  return file;
}

/** The made file `source` turned a quarter by its display matrix, as phones write portrait video. */
export const turned =
  (source: string): Recipe =>
  (file, made) =>
    makeMedia(file, ['-i', made[source]!, '-c', 'copy', '-metadata:s:v:0', 'rotate=90']);

/** A file a test makes for itself: ffmpeg's arguments (see makeMedia), or a function that writes it. */
export type Recipe = string[] | ((file: string, made: Readonly<Record<string, string>>) => Promise<unknown>);

/** What the tests of an operation talk to; its fields are set before the first test. */
export interface OperationHarness {
  /** The fixture server: `/f/<fixture>`, `/local/<name>` for each made file, and the routes asked for. */
  files: FileServer;
  server: TestServer;
  /** A folder of the tests' own, removed after them. */
  readonly scratch: string;
  /** The path of each made file, by name. */
  made: Record<string, string>;
  /** The fixture server's URL of a made file. */
  local: (name: string) => string;
  /** Serves `data` as `type` at `/x/<name>` from now on; returns its URL. */
  serve: (name: string, type: string, data: Buffer | string) => string;
  /**
   * POSTs `fields` to `route` and checks the success answer: 200, `message`, and an `output_file` URL under the
   * server's /uploads/ whose rest matches `name` (a RegExp source; UUID is the job id). Returns the output's local
   * path and the answer.
   */
  expectOutput: (
    route: string,
    fields: Record<string, string>,
    expected: { message: string; name: string },
  ) => Promise<{ file: string; body: Record<string, unknown> }>;
  /**
   * POSTs `fields` to `route` as an asynchronous job (Prefer: respond-async), waits for it and checks that it
   * succeeded at 100% with `message`. Returns its output's local path (empty for an operation that writes none) and
   * its result.
   */
  asJob: (
    route: string,
    fields: Record<string, string>,
    message: string,
  ) => Promise<{ file: string; result: Record<string, unknown> }>;
  /**
   * POSTs each case to `route` and checks its status and error (the exact text, or a pattern, and never a server
   * path), then that the refusals wrote nothing under /uploads/ and left no work files.
   */
  expectRefusals: (route: string, cases: Refusal[]) => Promise<void>;
  /**
   * Runs a pipeline with the CLI's `run`, as a user does: `definition`, its YAML (docs/pipelines.md), written to a
   * file in the scratch folder, `inputs` given with --input. Expects exit 0; returns the folder of its results and
   * their names, sorted.
   */
  runPipeline: (definition: string, inputs: Record<string, string>) => Promise<{ out: string; written: string[] }>;
}

/** Numbers out of range: each [field, value, 'low to high'] set in `fields` is a 400 naming the range. */
export const outOfRange = (
  fields: Record<string, string>,
  cases: ReadonlyArray<readonly [field: string, value: string, range: string]>,
): Refusal[] =>
  cases.map(([field, value, range]) => [
    { ...fields, [field]: value },
    400,
    `Expected \`${field}\` to be a number from ${range}, got \`${value}\``,
  ]);

/**
 * A request an operation refuses: its fields, the status and the error (its exact text, or a pattern), and any
 * headers to send (Prefer: respond-async, to be refused before a job exists).
 */
export type Refusal = [
  fields: Record<string, string>,
  status: number,
  error: string | RegExp,
  headers?: Record<string, string>,
];

/**
 * Sets up, before the enclosing describe's tests, what an operation's tests need: the named fixtures, the files of
 * `make` written into a scratch folder (in order, each seeing those before it), a fixture server that also serves
 * them and `routes`, and a mediaflow server with `env`, its `pipelines` and its `registry`. Stops and removes all of
 * it after the tests.
 */
export function useOperation(
  spec: {
    fixtures?: string[];
    make?: Record<string, Recipe>;
    routes?: Record<string, Route>;
    env?: Record<string, string>;
    /** Pipeline definitions (YAML) by name, served from a folder of their own (MEDIAFLOW_PIPELINES_DIR). */
    pipelines?: Record<string, string>;
    /** The server's operations, when not the built-ins. */
    registry?: () => Promise<Registry>;
  } = {},
): OperationHarness {
  const scratch = useScratch('mediaflow-operation-');
  // One object for the fixture server's whole life: a route added to it later is served too.
  const routes = spec.routes ?? {};
  const harness = {
    get scratch() {
      return scratch.dir;
    },
    made: {},
    local: (name: string) => harness.files.url(`/local/${name}`),
    serve: (name, type, data) => {
      routes[`/x/${name}`] = (_req, res) => void res.writeHead(200, { 'content-type': type }).end(data);
      return harness.files.url(`/x/${name}`);
    },
    expectOutput: async (route, fields, expected) => {
      const { server } = harness;
      const res = await server.post(route, fields);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.message, expected.message);
      assert.match(res.body.output_file!, new RegExp(`^${server.base}/uploads/${expected.name}$`));
      return { file: server.pathOf(res.body.output_file!), body: res.body };
    },
    asJob: async (route, fields, message) => {
      const { base, pathOf } = harness.server;
      const job = await waitForJob(base, await submitJob(base, route, fields, { Prefer: 'respond-async' }));
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.equal(job.progress, 100);
      const result = job.result as Record<string, unknown>;
      assert.equal(result.message, message);
      return { file: typeof result.output_file === 'string' ? pathOf(result.output_file) : '', result };
    },
    expectRefusals: async (route, cases) => {
      const { server } = harness;
      const uploads = () => readdir(path.join(server.dataDir, 'uploads'), { recursive: true }).catch(() => []);
      const before = await uploads();
      for (const [fields, status, error, headers] of cases) {
        const res = await server.post(route, fields, headers ? { headers } : {});
        assert.equal(res.status, status, JSON.stringify({ fields, body: res.body }));
        if (typeof error === 'string') assert.equal(res.body.error, error);
        else assert.match(res.body.error!, error);
        assert.ok(!res.body.error!.includes(server.dataDir), `${res.body.error} names no server path`);
      }
      assert.deepEqual(await uploads(), before, 'a refusal writes nothing');
      assert.deepEqual(await server.workLeftovers(), []);
    },
    runPipeline: async (definition, inputs) => {
      const dir = await mkdtemp(path.join(harness.scratch, 'pipeline-'));
      const [file, out] = [path.join(dir, 'pipeline.yaml'), path.join(dir, 'out')];
      await writeFile(file, definition);
      const values = Object.entries(inputs).flatMap(([name, value]) => ['--input', `${name}=${value}`]);
      const result = await runCli(['run', file, ...values, '--out-dir', out]);
      assert.equal(result.exitCode, 0, result.stderr);
      return { out, written: (await readdir(out)).sort() };
    },
  } as OperationHarness;
  before(async () => {
    await fixtures(...(spec.fixtures ?? []));
    for (const [name, recipe] of Object.entries(spec.make ?? {})) {
      const file = path.join(harness.scratch, name);
      await (Array.isArray(recipe) ? makeMedia(file, recipe) : recipe(file, harness.made));
      harness.made[name] = file;
    }
    for (const [name, file] of Object.entries(harness.made))
      routes[`/local/${name}`] ??= serveFile(file, contentTypeOf(name));
    harness.files = await startFileServer(routes);
    const env = { ...spec.env };
    if (spec.pipelines) {
      env.MEDIAFLOW_PIPELINES_DIR = scratch.path('pipelines');
      await mkdir(env.MEDIAFLOW_PIPELINES_DIR);
      for (const [name, yaml] of Object.entries(spec.pipelines))
        await writeFile(path.join(env.MEDIAFLOW_PIPELINES_DIR, `${name}.yaml`), yaml);
    }
    harness.server = await startMediaflow(env, spec.registry ? await spec.registry() : undefined);
  });
  after(async () => {
    await harness.server?.close();
    await harness.files?.close();
  });
  return harness;
}
