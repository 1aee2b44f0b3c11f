import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { loadConfig } from '../src/engine/config.js';
import { inputSpecOf, type PluginDefinition } from '../src/engine/plugin.js';
import type { Registry } from '../src/engine/registry.js';
import { builtinRegistry, loadRegistry } from '../src/plugins/index.js';
import { buildServer } from '../src/server/app.js';
import { openApiDocument } from '../src/server/openapi.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Validates a document against the OpenAPI schema of its version; returns the errors, if any. */
async function openApiErrors(document: unknown): Promise<unknown> {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document) as Parameters<Validator['validate']>[0]);
  return result.valid ? undefined : result.errors;
}

const ERROR_STATUSES = ['400', '401', '413', '422', '500', '502', '503', '504'];

describe('OpenAPI document and docs', () => {
  let app: Awaited<ReturnType<typeof buildServer>>['app'];
  let registry: Registry;
  let base: string;
  let dataDir: string;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-openapi-'));
    // Built-ins and two third-party plugins: the example package, by name, and a fixture, by path.
    registry = await loadRegistry({
      env: { MEDIAFLOW_PLUGINS: `mediaflow-plugin-thumbnail,${path.resolve(import.meta.dirname, 'fixtures/plugins/echo.js')}` },
      configFile: false,
    });
    const config = loadConfig({ MEDIAFLOW_DATA_DIR: dataDir, MEDIAFLOW_API_KEY: 'sesame', MEDIAFLOW_MAX_EVENT_LOOP_DELAY: '0' });
    ({ app } = await buildServer({ config, registry, logger: false }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await app?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const getDocument = async (): Promise<Json> => {
    const res = await fetch(`${base}/openapi.json`);
    assert.equal(res.status, 200, 'open without the API key');
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    return (await res.json()) as Json;
  };

  it('GET /openapi.json is a valid OpenAPI 3 document', async () => {
    const document = await getDocument();
    assert.match(document.openapi, /^3\.0\.\d$/);
    assert.equal(await openApiErrors(document), undefined);
    // Without a registry of plugins or a key, the document is valid too.
    assert.equal(await openApiErrors(openApiDocument(builtinRegistry())), undefined);
    // And the validator does refuse a broken one (an operation without responses).
    const broken = structuredClone(document);
    delete broken.paths['/thumbnail/'].post.responses;
    assert.notEqual(await openApiErrors(broken), undefined);
  });

  it('lists every route of the registry, built-in and third-party, and only those operations', async () => {
    const document = await getDocument();
    const plugins = registry.list();
    assert.equal(plugins.length, 12);
    for (const plugin of plugins) assert.ok(document.paths[plugin.path]?.post, `${plugin.name} at ${plugin.path}`);
    const operationPaths = Object.entries(document.paths as Json)
      .filter(([, item]) => item.post?.['x-mediaflow-plugin'])
      .map(([route]) => route);
    assert.deepEqual(operationPaths.sort(), plugins.map((p) => p.path).sort());
    assert.deepEqual(document.paths['/thumbnail/'].post.tags, ['plugins']);
    assert.deepEqual(document.paths['/merge-audios/'].post.tags, ['operations']);
    // A plugin loaded by path is named by its file, without the folders of the server's disk.
    assert.deepEqual(document.paths['/echo/'].post['x-mediaflow-plugin'], { name: 'echo', source: 'echo.js (MEDIAFLOW_PLUGINS)', version: '2.3.4', cli: 'mediaflow echo' });
    assert.deepEqual(document.paths['/thumbnail/'].post['x-mediaflow-plugin'].source, 'mediaflow-plugin-thumbnail (MEDIAFLOW_PLUGINS)');
    assert.ok(!JSON.stringify(document).includes(import.meta.dirname), 'no server path in the document');
    for (const route of ['/health', '/pipelines', '/pipelines/{name}/', '/uploads/{file}']) assert.ok(document.paths[route], route);
  });

  it("gives each operation's fields with their types, defaults, enums, bounds and required ones, in the three encodings", async () => {
    const document = await getDocument();
    for (const plugin of registry.list() as PluginDefinition[]) {
      const content = document.paths[plugin.path].post.requestBody.content;
      assert.deepEqual(Object.keys(content), ['multipart/form-data', 'application/x-www-form-urlencoded', 'application/json'], plugin.name);
      for (const [encoding, media] of Object.entries(content as Json)) {
        const schema = media.schema;
        assert.deepEqual(Object.keys(schema.properties), Object.keys(plugin.params.properties), `${plugin.name} ${encoding}`);
        for (const [key, source] of Object.entries(plugin.params.properties) as Array<[string, Json]>) {
          const field = schema.properties[key];
          const spec = inputSpecOf(source as never);
          if (encoding === 'application/json' && spec?.list) {
            assert.deepEqual(field.oneOf.map((s: Json) => s.type), ['string', 'array'], `${plugin.name}.${key}`);
          } else {
            assert.equal(field.type, source.type, `${plugin.name}.${key}`);
          }
          for (const keyword of ['default', 'enum', 'minimum', 'maximum', 'maxLength']) {
            assert.deepEqual(field[keyword], source[keyword], `${plugin.name}.${key}.${keyword}`);
          }
          assert.ok(String(field.description).startsWith(String(source.description)), `${plugin.name}.${key} description`);
        }
        const required = (plugin.params.required ?? []).filter((key) => (plugin.params.properties[key] as Json).default === undefined);
        assert.deepEqual(schema.required ?? [], required, `${plugin.name} required`);
      }
    }
    const merge = document.paths['/merge-audios/'].post.requestBody.content['multipart/form-data'].schema.properties;
    assert.deepEqual(merge.format.enum, ['mp3', 'wav', 'aac', 'm4a', 'ogg', 'flac', 'opus']);
    assert.equal(merge.format.default, 'mp3');
    assert.deepEqual(merge.audio_urls['x-mediaflow-input'], { kind: 'audio', list: true, min: 2 });
    const resize = document.paths['/resize_image/'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(resize.required, ['image_url', 'width', 'height']);
    assert.deepEqual([resize.properties.width.type, resize.properties.width.minimum, resize.properties.width.maximum], ['integer', 1, 8192]);
  });

  it('gives each operation its success shape (message and its output field) and the error statuses with {error}', async () => {
    const document = await getDocument();
    const fields: Record<string, string> = {
      '/merge-audios/': 'output_file',
      '/generate-subtitles/': 'subtitle_file_url',
      '/add-subtitles/': 'output_video',
      '/thumbnail/': 'output_file',
      '/echo/': 'text_file',
    };
    for (const [route, field] of Object.entries(fields)) {
      const ok = document.paths[route].post.responses['200'].content['application/json'];
      assert.deepEqual(ok.schema.required, ['message', field], route);
      assert.equal(ok.schema.properties[field].format, 'uri', route);
    }
    assert.equal(document.paths['/generate-subtitles/'].post.responses['200'].content['application/json'].schema.properties.message.example, 'Subtitle file generated successfully');
    for (const plugin of registry.list()) {
      const responses = document.paths[plugin.path].post.responses;
      for (const status of ERROR_STATUSES) {
        const ref = responses[status]?.$ref as string | undefined;
        assert.ok(ref, `${plugin.name} ${status}`);
        const response = document.components.responses[ref.split('/').pop()!];
        assert.equal(response.content['application/json'].schema.$ref, '#/components/schemas/Error');
      }
    }
    assert.deepEqual(document.components.schemas.Error.required, ['error']);
    assert.ok(document.components.responses.Busy.headers['Retry-After']);
    // This server has an API key: the operations say so.
    assert.deepEqual(document.components.securitySchemes.apiKey, { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Needed when the server has MEDIAFLOW_API_KEY set' });
    assert.deepEqual(document.paths['/thumbnail/'].post.security, [{ apiKey: [] }]);
  });

  it('serves a browsable page at /docs, open without the API key, while the operations need it', async () => {
    const page = await fetch(`${base}/docs/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await page.text(), /swagger-ui/i);
    // Its scripts are served by mediaflow itself (no CDN), open too.
    const bundle = await fetch(`${base}/docs/static/swagger-ui-bundle.js`);
    assert.equal(bundle.status, 200);
    assert.match(bundle.headers.get('content-type') ?? '', /javascript/);
    await bundle.arrayBuffer();
    const bare = await fetch(`${base}/docs`, { redirect: 'manual' });
    assert.ok([200, 302].includes(bare.status), String(bare.status));
    const json = await fetch(`${base}/docs/json`);
    assert.equal(json.status, 200);
    assert.deepEqual(await json.json(), await getDocument());
    const post = await fetch(`${base}/thumbnail/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(post.status, 401);
  });
});
