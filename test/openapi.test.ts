import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { loadConfig } from '../src/engine/config.js';
import { ERRORS } from '../src/engine/errors.js';
import { parseParams } from '../src/engine/plugins/params.js';
import { sampleParams } from '../src/engine/plugins/plugin-check.js';
import { inputSpecOf, outputPaths, type PluginDefinition } from '../src/engine/contract/plugin.js';
import type { Registry } from '../src/engine/plugins/registry.js';
import { builtinPlugins, builtinRegistry, loadRegistry } from '../src/plugins/index.js';
import { buildServer } from '../src/server/app.js';
import { openApiDocument } from '../src/server/api-document.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Validates a document against the OpenAPI schema of its version; returns the errors, if any. */
async function openApiErrors(document: unknown): Promise<unknown> {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document) as Parameters<Validator['validate']>[0]);
  return result.valid ? undefined : result.errors;
}

const ERROR_STATUSES = ['400', '401', '413', '422', '500', '501', '502', '503', '504'];
const JOB_FIELDS = ['webhook_url', 'metadata'];
const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
/** What GET /uploads/... answers for each extension the test registry's plugins write (@fastify/static's types). */
const MEDIA_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  aac: 'audio/x-aac',
  m4a: 'audio/mp4',
  ogg: 'audio/ogg',
  flac: 'audio/x-flac',
  opus: 'audio/ogg',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  mkv: 'video/x-matroska',
  avi: 'video/x-msvideo',
  webm: 'video/webm',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  bmp: 'image/bmp',
  tiff: 'image/tiff',
  gif: 'image/gif',
  srt: 'application/x-subrip',
  vtt: 'text/vtt',
  ass: 'text/x-ssa',
  txt: 'text/plain',
  json: 'application/json',
};

/**
 * Every output path (with `{id}`) a plugin may answer with: each choice of each enum parameter, the
 * others at their sample values.
 */
function outputPathsOf(plugin: PluginDefinition): string[] {
  const sample = sampleParams(plugin.params);
  const paths = new Set(outputPaths(plugin.output(sample as never)));
  for (const [key, property] of Object.entries(plugin.params.properties) as Array<[string, Json]>) {
    for (const value of property.enum ?? [])
      for (const file of outputPaths(plugin.output({ ...sample, [key]: value } as never))) paths.add(file);
  }
  return [...paths];
}

/** Every object of a document (with where it is), depth first. */
function* objectsOf(node: unknown, where = '#'): Generator<[Json, string]> {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) yield* objectsOf(item, `${where}/${i}`);
  } else if (node !== null && typeof node === 'object') {
    yield [node as Json, where];
    for (const [key, value] of Object.entries(node)) yield* objectsOf(value, `${where}/${key}`);
  }
}

describe('OpenAPI document and docs', () => {
  let app: Awaited<ReturnType<typeof buildServer>>['app'];
  let registry: Registry;
  let base: string;
  let dataDir: string;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-openapi-'));
    // Built-ins and two third-party plugins: the example package, by name, and a fixture, by path.
    registry = await loadRegistry({
      env: {
        MEDIAFLOW_PLUGINS:
          `mediaflow-plugin-thumbnail,` + `${path.resolve(import.meta.dirname, 'fixtures/plugins/echo.js')}`,
      },
      configFile: false,
    });
    const config = loadConfig({
      MEDIAFLOW_DATA_DIR: dataDir,
      MEDIAFLOW_API_KEY: 'sesame',
      MEDIAFLOW_MAX_EVENT_LOOP_DELAY: '0',
    });
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

  it('GET /openapi.json is a valid OpenAPI 3.1 document', async () => {
    const document = await getDocument();
    assert.equal(document.openapi, '3.1.0');
    assert.equal(await openApiErrors(document), undefined);
    const validator = new Validator();
    await validator.validate(structuredClone(document));
    assert.equal(validator.version, '3.1', 'validated against the 3.1 schema');
    // Without a registry of plugins or a key, the document is valid too.
    assert.equal(await openApiErrors(await openApiDocument(builtinRegistry())), undefined);
    // And the validator does refuse a broken one (a response without its description, a path
    // parameter that is optional).
    const broken = structuredClone(document);
    delete broken.paths['/thumbnail/'].post.responses['200'].description;
    assert.notEqual(await openApiErrors(broken), undefined);
    const optional = structuredClone(document);
    optional.paths['/jobs/{id}'].get.parameters[0].required = false;
    assert.notEqual(await openApiErrors(optional), undefined);
  });

  it('uses only 3.1 schemas (no 3.0 keywords) and declares each path parameter of each route', async () => {
    // The 3.1 meta-schema leaves Schema Objects to JSON Schema 2020-12, so the 3.0 forms are looked for here.
    const document = await getDocument();
    for (const [node, where] of objectsOf(document)) {
      assert.equal(node.nullable, undefined, `${where}: nullable is OpenAPI 3.0; 3.1 lists 'null' among the types`);
      assert.notEqual(node.format, 'binary', `${where}: format binary is OpenAPI 3.0; 3.1 names the media type only`);
      assert.notEqual(typeof node.exclusiveMinimum, 'boolean', `${where}: a boolean exclusiveMinimum is OpenAPI 3.0`);
    }
    const resolve = (parameter: Json): Json =>
      parameter.$ref ? document.components.parameters[parameter.$ref.split('/').pop()] : parameter;
    for (const [route, item] of Object.entries(document.paths as Json)) {
      const inTemplate = [...route.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]).sort();
      for (const method of ['get', 'post', 'put', 'patch', 'delete', 'head']) {
        if (!item[method]) continue;
        const declared = [...(item.parameters ?? []), ...(item[method].parameters ?? [])]
          .map(resolve)
          .filter((parameter) => parameter.in === 'path');
        assert.deepEqual(declared.map((parameter) => parameter.name).sort(), inTemplate, `${method} ${route}`);
      }
    }
  });

  it('lists every route of the registry, built-in and third-party, and only those operations', async () => {
    const document = await getDocument();
    const plugins = registry.list();
    // The built-ins and the two third-party plugins.
    assert.equal(plugins.length, builtinPlugins.length + 2);
    for (const plugin of plugins) assert.ok(document.paths[plugin.path]?.post, `${plugin.name} at ${plugin.path}`);
    const operationPaths = Object.entries(document.paths as Json)
      .filter(([, item]) => item.post?.['x-mediaflow-plugin'])
      .map(([route]) => route);
    assert.deepEqual(operationPaths.sort(), plugins.map((p) => p.path).sort());
    assert.deepEqual(document.paths['/thumbnail/'].post.tags, ['plugins']);
    assert.deepEqual(document.paths['/merge-audios/'].post.tags, ['operations']);
    // A plugin loaded by path is named by its file, without the folders of the server's disk.
    assert.deepEqual(document.paths['/echo/'].post['x-mediaflow-plugin'], {
      name: 'echo',
      source: 'echo.js (MEDIAFLOW_PLUGINS)',
      version: '2.3.4',
      cli: 'mediaflow echo',
    });
    assert.deepEqual(
      document.paths['/thumbnail/'].post['x-mediaflow-plugin'].source,
      'mediaflow-plugin-thumbnail (MEDIAFLOW_PLUGINS)',
    );
    assert.ok(!JSON.stringify(document).includes(import.meta.dirname), 'no server path in the document');
    for (const route of [
      '/health',
      '/pipelines',
      '/pipelines/{name}/',
      '/uploads/{file}',
      '/uploads/{dir}/{file}',
      '/jobs/{id}',
      '/jobs/{id}/events',
    ])
      assert.ok(document.paths[route], route);
  });

  it('documents every route the server registers, but the pages, their files and the 405s', async () => {
    const document = await getDocument();
    const trimmed = (route: string) => route.replace(/(.)\/$/, '$1');
    const documented = new Set(
      Object.entries(document.paths as Json).flatMap(([route, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${trimmed(route)}`),
      ),
    );
    const operations = new Set(registry.list().map((plugin) => trimmed(plugin.path)));
    // Deliberately left out: /docs and its files, the document itself, the outputs' wildcard (described as
    // /uploads/{file} and /uploads/{dir}/{file}), the studio's files, and the 405 of other methods on an operation.
    const hidden = (method: string, route: string) =>
      method === 'HEAD' ||
      /^\/(docs|openapi\.json)(\/|$)/.test(route) ||
      route.includes('*') ||
      route === '/studio/{file}' ||
      (operations.has(route) && method !== 'POST');
    // printRoutes draws a tree: each line one segment below the line it is indented under, with its methods.
    const prefixes: string[] = [];
    const registered: string[] = [];
    for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
      const match = /^([│ ]*)[├└]── (\S+)(?: \(([^)]+)\))?$/.exec(line);
      if (!match) continue;
      const depth = match[1]!.length / 4;
      prefixes.length = depth;
      prefixes.push(match[2]!);
      const route = trimmed(prefixes.join('').replace(/:(\w+)/g, '{$1}'));
      for (const method of match[3]?.split(', ') ?? [])
        if (!hidden(method, route)) registered.push(`${method} ${route}`);
    }
    assert.ok(registered.includes('GET /jobs/{id}/events') && registered.includes('POST /files'), registered.join());
    assert.deepEqual(
      registered.filter((route) => !documented.has(route)),
      [],
      'every route registered is in the document',
    );
  });

  it("refuses a bad path parameter or query in the project's error shape, with the field's own wording", async () => {
    const headers = { 'x-api-key': 'sesame' };
    const answer = async (route: string) => {
      const res = await fetch(`${base}${route}`, { headers });
      return { status: res.status, body: (await res.json()) as Json };
    };
    assert.deepEqual(await answer('/jobs/?limit=ten'), {
      status: 400,
      body: { error: 'Expected `limit` to be a whole number from 1 to 100, got `ten`', code: 'MF_ERR_PARAM' },
    });
    const twice = await answer(`/jobs/?before=${'0'.repeat(8)}&before=x`);
    assert.equal(twice.status, 400);
    assert.equal(twice.body.code, 'MF_ERR_PARAM');
    assert.match(twice.body.error, /^Expected `before` to be one job id/);
    // An id that is no UUID is an unknown job, as any other.
    const unknown = await answer('/jobs/not-a-job');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'MF_ERR_NOT_FOUND');
    assert.equal((await answer('/pipelines/no.such')).body.code, 'MF_ERR_NOT_FOUND');
  });

  it(
    "gives each operation's fields with their types, defaults, enums, bounds and required ones, in the three " +
      'encodings',
    async () => {
      const document = await getDocument();
      for (const plugin of registry.list() as PluginDefinition[]) {
        const content = document.paths[plugin.path].post.requestBody.content;
        assert.deepEqual(
          Object.keys(content),
          ['multipart/form-data', 'application/x-www-form-urlencoded', 'application/json'],
          plugin.name,
        );
        for (const [encoding, media] of Object.entries(content as Json)) {
          const schema = media.schema;
          assert.deepEqual(
            Object.keys(schema.properties),
            [...Object.keys(plugin.params.properties), ...JOB_FIELDS],
            `${plugin.name} ${encoding}`,
          );
          for (const [key, source] of Object.entries(plugin.params.properties) as Array<[string, Json]>) {
            const field = schema.properties[key];
            const spec = inputSpecOf(source as never);
            if (encoding === 'application/json' && spec?.list) {
              assert.deepEqual(
                field.oneOf.map((s: Json) => s.type),
                ['string', 'array'],
                `${plugin.name}.${key}`,
              );
            } else {
              assert.equal(field.type, source.type, `${plugin.name}.${key}`);
            }
            for (const keyword of ['default', 'enum', 'minimum', 'maximum', 'maxLength']) {
              assert.deepEqual(field[keyword], source[keyword], `${plugin.name}.${key}.${keyword}`);
            }
            assert.ok(
              String(field.description).startsWith(String(source.description)),
              `${plugin.name}.${key} description`,
            );
          }
          const required = (plugin.params.required ?? []).filter(
            (key) => (plugin.params.properties[key] as Json).default === undefined,
          );
          assert.deepEqual(schema.required ?? [], required, `${plugin.name} required`);
        }
      }
      const merge = document.paths['/merge-audios/'].post.requestBody.content['multipart/form-data'].schema.properties;
      assert.deepEqual(merge.format.enum, ['mp3', 'wav', 'aac', 'm4a', 'ogg', 'flac', 'opus']);
      assert.equal(merge.format.default, 'mp3');
      assert.deepEqual(merge.audio_urls['x-mediaflow-input'], { kind: 'audio', list: true, min: 2 });
      const resize = document.paths['/resize_image/'].post.requestBody.content['application/json'].schema;
      assert.deepEqual(resize.required, ['image_url', 'width', 'height']);
      assert.deepEqual(
        [resize.properties.width.type, resize.properties.width.minimum, resize.properties.width.maximum],
        ['integer', 1, 8192],
      );
    },
  );

  it('says that URL fields take file parts in a multipart body only, and describes POST /files/', async () => {
    const document = await getDocument();
    const content = document.paths['/merge-audio-video/'].post.requestBody.content;
    const filePart = {
      contentMediaType: 'application/octet-stream',
      description: 'A file sent as a part (docs/files.md)',
    };
    assert.deepEqual(content['multipart/form-data'].schema.properties.video_url.anyOf, [
      { format: 'uri', description: 'A URL' },
      filePart,
    ]);
    assert.equal(content['application/x-www-form-urlencoded'].schema.properties.video_url.anyOf, undefined);
    assert.equal(content['application/json'].schema.properties.video_url.anyOf, undefined);
    const merge = document.paths['/merge-audios/'].post.requestBody.content['multipart/form-data'].schema;
    assert.deepEqual(merge.properties.audio_urls.anyOf, [{ description: 'URLs separated by commas' }, filePart]);
    assert.match(merge.properties.audio_urls.description, /file parts of this name, one per file/);
    // Not a URL field: no file.
    assert.equal(merge.properties.format.anyOf, undefined);

    const files = document.paths['/files/'].post;
    assert.deepEqual(files.security, [{ apiKey: [] }]);
    assert.deepEqual(files.requestBody.content['multipart/form-data'].schema.additionalProperties, {
      contentMediaType: 'application/octet-stream',
    });
    const answer = files.responses['200'].content['application/json'].schema;
    assert.deepEqual(answer.properties.files.items.required, ['field', 'name', 'size', 'content_type', 'url']);
    for (const status of ['400', '401', '413', '415', '422']) assert.ok(files.responses[status], status);
  });

  it(
    'offers example values that work: every example passes validation, no field shown at a bound it does ' + 'not need',
    async () => {
      const document = await getDocument();
      for (const plugin of registry.list() as PluginDefinition[]) {
        const content = document.paths[plugin.path].post.requestBody.content;
        const example = content['application/json'].example as Json;
        assert.deepEqual(content['multipart/form-data'].example, example, plugin.name);
        // The engine takes the example as it is (the URLs aside, which it would download).
        assert.doesNotThrow(() => parseParams(plugin.params, example), plugin.name);
        for (const [key, value] of Object.entries(example)) {
          assert.deepEqual(
            content['multipart/form-data'].schema.properties[key].examples,
            [value],
            `${plugin.name}.${key}`,
          );
          // Nothing at a maximum, such as an 8192x8192 resize.
          const maximum = (plugin.params.properties[key] as Json).maximum;
          if (maximum !== undefined && (plugin.params.properties[key] as Json).default !== maximum)
            assert.ok(value < maximum, `${plugin.name}.${key} = ${value}`);
        }
      }
      assert.deepEqual(document.paths['/resize_image/'].post.requestBody.content['application/json'].example, {
        image_url: 'https://example.com/photo.jpg',
        width: 640,
        height: 480,
      });
      // Optional fields without a default (a frame size that would otherwise come from the images) are left out.
      const slideshow = document.paths['/images-to-video/'].post.requestBody.content['application/json'].example;
      assert.equal(slideshow.width, undefined);
      assert.equal(slideshow.image_urls, 'https://example.com/photo-1.jpg');
    },
  );

  it("keeps text's maxLength within the body limit, and says the limit counts bytes", async () => {
    const text = async (bodyLimit: number) =>
      ((await openApiDocument(builtinRegistry(), { bodyLimit })) as Json).paths['/generate-subtitles/'].post.requestBody
        .content['application/json'].schema.properties.text;
    const small = await text(4096);
    assert.equal(small.maxLength, 4096);
    assert.match(
      small.description,
      /at most 4096 characters; the whole request body is at most 4096 bytes, MEDIAFLOW_BODY_LIMIT/,
    );
    assert.equal((await text(8 * 1024 * 1024)).maxLength, 1_000_000, "the plugin's own bound, when it is the smaller");
  });

  it(
    'says on each operation that the path also answers ' + 'without its trailing slash (and other methods are a 405)',
    async () => {
      const document = await getDocument();
      for (const plugin of registry.list() as PluginDefinition[]) {
        const bare = plugin.path.replace(/\/$/, '');
        assert.ok(
          String(document.paths[plugin.path].post.description).includes(
            `Also answered at \`${bare}\`: the trailing slash is optional.`,
          ),
          plugin.name,
        );
        assert.match(document.paths[plugin.path].post.description, /405 with `Allow: POST`/);
        // And it does.
        const res = await fetch(`${base}${bare}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        assert.equal(res.status, 401, `${bare} is a route (behind the key)`);
        await res.arrayBuffer();
      }
      assert.match(document.info.description, /with or without the trailing slash/);
    },
  );

  it('marks /metrics as needing the API key or the metrics token, as the server does', async () => {
    const document = await getDocument();
    assert.deepEqual(document.paths['/metrics'].get.security, [{ apiKey: [] }, { apiKeyBearer: [] }]);
    const withToken = (await openApiDocument(builtinRegistry(), { metricsToken: 't' })) as Json;
    assert.deepEqual(withToken.paths['/metrics'].get.security, [{ metricsToken: [] }]);
    assert.equal(((await openApiDocument(builtinRegistry())) as Json).paths['/metrics'].get.security, undefined);
    assert.equal(await openApiErrors(withToken), undefined);
    assert.equal((await fetch(`${base}/metrics`)).status, 401);
  });

  it(
    'gives each operation its success shape (message and ' + 'its output field) and the error statuses with {error}',
    async () => {
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
      assert.deepEqual(
        document.paths['/generate-subtitles/'].post.responses['200'].content['application/json'].schema.properties
          .message.examples,
        ['Subtitle file generated successfully'],
      );
      for (const plugin of registry.list()) {
        const responses = document.paths[plugin.path].post.responses;
        for (const status of ERROR_STATUSES) {
          const ref = responses[status]?.$ref as string | undefined;
          assert.ok(ref, `${plugin.name} ${status}`);
          const response = document.components.responses[ref.split('/').pop()!];
          assert.equal(response.content['application/json'].schema.$ref, '#/components/schemas/Error');
        }
      }
      assert.deepEqual(document.components.schemas.Error.required, ['error', 'code']);
      assert.deepEqual(document.components.schemas.Error.properties.code.enum, Object.keys(ERRORS));
      // The responses are made from the registry: each code is described under the response of its status.
      for (const [code, { title }] of Object.entries(ERRORS)) {
        const described = Object.values(document.components.responses as Record<string, Json>).filter((response) =>
          response.description.includes(`\`${code}\` (${title})`),
        );
        assert.equal(described.length, 1, code);
      }
      assert.ok(document.components.responses.ServiceUnavailable.headers['Retry-After']);
      assert.equal(document.paths['/thumbnail/'].post.responses['400'].$ref, '#/components/responses/BadRequest');
      // This server has an API key: the operations say so.
      assert.deepEqual(document.components.securitySchemes.apiKey, {
        type: 'apiKey',
        in: 'header',
        name: 'X-API-Key',
        description: 'Needed when the server has MEDIAFLOW_API_KEY or MEDIAFLOW_API_KEYS set',
      });
      assert.deepEqual(document.paths['/thumbnail/'].post.security, [{ apiKey: [] }]);
    },
  );

  it(
    'gives every operation and pipeline run the job fields, the Prefer and Idempotency-Key headers, and the ' +
      '202 answer',
    async () => {
      const document = await getDocument();
      const runs = [...registry.list().map((plugin) => plugin.path), '/pipelines/{name}/'];
      for (const route of runs) {
        const post = document.paths[route].post;
        for (const encoding of ['multipart/form-data', 'application/x-www-form-urlencoded', 'application/json']) {
          const properties = post.requestBody.content[encoding].schema.properties;
          assert.deepEqual(
            [properties.webhook_url.type, properties.webhook_url.format],
            ['string', 'uri'],
            `${route} ${encoding} webhook_url`,
          );
          const metadata = encoding === 'application/json' ? properties.metadata.oneOf : [properties.metadata];
          assert.deepEqual(
            metadata.map((schema: Json) => schema.type),
            encoding === 'application/json' ? ['string', 'object'] : ['string'],
            `${route} ${encoding} metadata`,
          );
          assert.equal(metadata[0].maxLength, 4096, `${route} ${encoding} metadata`);
          assert.ok(
            !(post.requestBody.content[encoding].schema.required ?? []).some((key: string) => JOB_FIELDS.includes(key)),
            `${route}: the job fields are optional`,
          );
        }
        const headers = post.parameters.filter((parameter: Json) => parameter.in === 'header');
        assert.deepEqual(
          headers.map((parameter: Json) => parameter.name),
          ['Prefer', 'Idempotency-Key'],
          route,
        );
        assert.equal(post.responses['202'].$ref, '#/components/responses/Accepted', route);
        assert.equal(post.responses['422'].$ref, '#/components/responses/UnprocessableEntity', route);
        assert.ok(post.responses['200'], `${route}: still answers synchronously`);
      }
      const [Prefer, IdempotencyKey] = document.paths['/merge-audios/'].post.parameters;
      assert.deepEqual(
        [Prefer.name, Prefer.in, Prefer.required, Prefer.example],
        ['Prefer', 'header', false, 'respond-async'],
      );
      assert.deepEqual(
        [IdempotencyKey.name, IdempotencyKey.in, IdempotencyKey.required],
        ['Idempotency-Key', 'header', false],
      );
      assert.deepEqual([IdempotencyKey.schema.minLength, IdempotencyKey.schema.maxLength], [1, 255]);
      const key = new RegExp(IdempotencyKey.schema.pattern, 'u');
      assert.ok(key.test('order-1234/thumbnail~v2'));
      for (const wrong of ['with space', 'tab\there', 'é', '']) assert.ok(!key.test(wrong), JSON.stringify(wrong));
      // 202: a Location header and {job_id, status, status_url}.
      const accepted = document.components.responses.Accepted;
      assert.equal(accepted.headers.Location.required, true);
      assert.equal(accepted.headers.Location.schema.format, 'uri');
      assert.equal(accepted.content['application/json'].schema.$ref, '#/components/schemas/JobAccepted');
      const jobAccepted = document.components.schemas.JobAccepted;
      assert.deepEqual(jobAccepted.required, ['job_id', 'status', 'status_url']);
      assert.equal(jobAccepted.properties.job_id.format, 'uuid');
      assert.equal(jobAccepted.properties.status_url.format, 'uri');
      assert.ok(jobAccepted.properties.status.enum.includes('queued'));
      // 422 also covers an Idempotency-Key reused with other fields.
      assert.match(document.components.responses.UnprocessableEntity.description, /Idempotency-Key/);
    },
  );

  it('describes GET /jobs/{id}, its events and DELETE, behind the API key, with the Job schema', async () => {
    const document = await getDocument();
    const job = document.components.schemas.Job;
    const fields = [
      'job_id',
      'kind',
      'name',
      'status',
      'stage',
      'progress',
      'created_at',
      'started_at',
      'finished_at',
      'result',
      'error',
      'metadata',
      'webhook',
    ];
    assert.deepEqual(Object.keys(job.properties), fields);
    assert.deepEqual(job.required, fields);
    const p = job.properties;
    assert.equal(p.job_id.format, 'uuid');
    assert.deepEqual(p.kind.enum, ['operation', 'pipeline']);
    assert.deepEqual(p.status.enum, JOB_STATUSES);
    assert.equal(p.stage.type, 'string');
    assert.deepEqual([p.progress.type, p.progress.minimum, p.progress.maximum], ['integer', 0, 100]);
    assert.deepEqual([p.created_at.type, p.created_at.format], ['string', 'date-time']);
    for (const at of ['started_at', 'finished_at'])
      assert.deepEqual([p[at].type, p[at].format], [['string', 'null'], 'date-time'], at);
    assert.deepEqual(p.result.type, ['object', 'null']);
    assert.deepEqual(p.result.required, ['message']);
    assert.deepEqual(p.error.type, ['object', 'null']);
    assert.deepEqual(p.error.required, ['status', 'error', 'code']);
    assert.deepEqual([p.error.properties.status.type, p.error.properties.error.type], ['integer', 'string']);
    assert.deepEqual(p.metadata.type, ['string', 'object', 'null']);
    assert.deepEqual(p.webhook.type, ['object', 'null']);
    assert.deepEqual(p.webhook.required, ['url', 'attempts', 'last_status', 'delivered_at', 'next_attempt_at']);
    assert.deepEqual(p.webhook.properties.last_status.type, ['integer', 'null']);
    assert.deepEqual(
      [p.webhook.properties.delivered_at.type, p.webhook.properties.delivered_at.format],
      [['string', 'null'], 'date-time'],
    );

    const jobRef = '#/components/schemas/Job';
    const item = document.paths['/jobs/{id}'];
    for (const method of ['get', 'delete'])
      assert.deepEqual(item[method].parameters, [
        {
          schema: { type: 'string', format: 'uuid' },
          in: 'path',
          name: 'id',
          required: true,
          description: "The job's id (job_id)",
        },
      ]);
    assert.equal(item.get.responses['200'].content['application/json'].schema.$ref, jobRef);
    assert.equal(item.get.responses['200'].content['application/json'].example.status, 'succeeded');
    assert.equal(item.delete.responses['200'].content['application/json'].schema.$ref, jobRef);
    assert.equal(item.delete.responses['200'].content['application/json'].example.status, 'cancelled');
    assert.deepEqual(item.delete.responses['409'].content['application/json'].schema, {
      $ref: '#/components/schemas/Error',
    });
    const events = document.paths['/jobs/{id}/events'].get;
    assert.deepEqual(Object.keys(events.responses['200'].content), ['text/event-stream']);
    assert.match(events.responses['200'].content['text/event-stream'].example, /^data: \{.*\}\n\n$/);
    for (const operation of [item.get, item.delete, events]) {
      assert.equal(operation.responses['404'].$ref, '#/components/responses/JobNotFound', operation.operationId);
      assert.equal(operation.responses['401'].$ref, '#/components/responses/Unauthorized', operation.operationId);
      // This server has an API key: the job routes need it.
      assert.deepEqual(operation.security, [{ apiKey: [] }], operation.operationId);
      assert.deepEqual(operation.tags, ['jobs'], operation.operationId);
    }
    assert.deepEqual(
      [item.get.operationId, item.delete.operationId, events.operationId],
      ['getJob', 'cancelJob', 'jobEvents'],
    );
    assert.ok(document.tags.some((tag: Json) => tag.name === 'jobs'));
  });

  it('describes the jobFinished webhook: the Job as JSON, with the Standard Webhooks headers', async () => {
    const document = await getDocument();
    const post = document.webhooks?.jobFinished?.post;
    assert.ok(post, 'webhooks.jobFinished.post');
    assert.equal(post.requestBody.required, true);
    assert.equal(post.requestBody.content['application/json'].schema.$ref, '#/components/schemas/Job');
    const headers = Object.fromEntries(post.parameters.map((parameter: Json) => [parameter.name, parameter]));
    assert.deepEqual(Object.keys(headers), ['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    for (const header of Object.values(headers) as Json[]) assert.equal(header.in, 'header', header.name);
    assert.equal(headers['webhook-signature'].required, false, 'signed only with MEDIAFLOW_WEBHOOK_SECRET');
    assert.match(headers['webhook-signature'].description, /MEDIAFLOW_WEBHOOK_SECRET/);
    const signature = new RegExp(headers['webhook-signature'].schema.pattern, 'u');
    assert.ok(signature.test(`v1,${Buffer.alloc(32, 7).toString('base64')}`));
    assert.ok(!signature.test('v1a,abc') && !signature.test(Buffer.alloc(32).toString('hex')));
    assert.ok(post.responses['2XX'], 'a 2xx answer is a delivery');
    // Its example is a Job: every field, in order.
    assert.deepEqual(
      Object.keys(post.requestBody.content['application/json'].example),
      document.components.schemas.Job.required,
    );
  });

  it(
    'describes the outputs at /uploads/{file} and /uploads/{dir}/{file}, with the media types the plugins write ' +
      'and Range requests',
    async () => {
      const document = await getDocument();
      const expected: Record<string, Set<string>> = {
        '/uploads/{file}': new Set(),
        '/uploads/{dir}/{file}': new Set(),
      };
      for (const plugin of registry.list() as PluginDefinition[]) {
        for (const output of outputPathsOf(plugin)) {
          const extension = path.posix.extname(output).slice(1);
          const type = MEDIA_TYPES[extension];
          assert.ok(type, `${plugin.name} writes .${extension}: add it to MEDIA_TYPES`);
          const segments = output.split('/').length;
          assert.ok(segments <= 2, `${plugin.name}: ${output}`);
          expected[segments === 1 ? '/uploads/{file}' : '/uploads/{dir}/{file}']!.add(type);
          // A pipeline publishes any step's output as <run>/<result>.<ext>.
          expected['/uploads/{dir}/{file}']!.add(type);
        }
      }
      assert.ok(expected['/uploads/{dir}/{file}']!.has('audio/mpeg') && expected['/uploads/{file}']!.has('image/jpeg'));
      for (const [route, types] of Object.entries(expected)) {
        const get = document.paths[route].get;
        assert.equal(get.security, undefined, `${route} is open`);
        const names = get.parameters
          .filter((parameter: Json) => parameter.in === 'path')
          .map((parameter: Json) => parameter.name);
        assert.deepEqual(names, route === '/uploads/{file}' ? ['file'] : ['dir', 'file']);
        for (const parameter of get.parameters.filter((p: Json) => p.in === 'path'))
          assert.doesNotMatch(parameter.description, /may hold/);
        assert.ok(
          get.parameters.some((parameter: Json) => parameter.$ref === '#/components/parameters/Range'),
          `${route} Range`,
        );
        for (const status of ['200', '206']) {
          assert.deepEqual(Object.keys(get.responses[status].content).sort(), [...types].sort(), `${route} ${status}`);
          assert.ok(
            !('application/octet-stream' in get.responses[status].content),
            `${route} ${status}: real media types`,
          );
        }
        assert.ok(get.responses['206'].headers['Content-Range'], `${route} Content-Range`);
        assert.deepEqual(get.responses['200'].headers['Accept-Ranges'].schema.enum, ['bytes']);
        for (const status of ['404', '416'])
          assert.equal(
            get.responses[status].content['application/json'].schema.$ref,
            '#/components/schemas/Error',
            `${route} ${status}`,
          );
      }
      const range = document.components.parameters.Range;
      assert.deepEqual(
        [range.name, range.in, range.required, range.schema.pattern],
        ['Range', 'header', false, '^bytes='],
      );
      const single = Object.keys(document.paths['/uploads/{file}'].get.responses['200'].content);
      for (const type of ['image/jpeg', 'video/mp4', 'video/webm', 'video/x-matroska', 'image/png', 'image/webp'])
        assert.ok(single.includes(type), type);
      assert.ok(!single.some((type) => type.startsWith('audio/')), 'no operation writes audio directly under uploads/');
      const nested = Object.keys(document.paths['/uploads/{dir}/{file}'].get.responses['200'].content);
      for (const type of [
        'audio/mpeg',
        'audio/wav',
        'audio/x-aac',
        'audio/mp4',
        'audio/ogg',
        'audio/x-flac',
        'application/x-subrip',
        'video/mp4',
        'text/plain',
      ])
        assert.ok(nested.includes(type), type);
    },
  );

  it('serves a browsable page at /docs, open without the API key, while the operations need it', async () => {
    const page = await fetch(`${base}/docs/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const html = await page.text();
    assert.match(html, /swagger-ui/i);
    // mediaflow's name, not the framework's: the page title and the logo in the top bar.
    assert.match(html, /<title>mediaflow API<\/title>/);
    const initializer = await (await fetch(`${base}/docs/static/swagger-initializer.js`)).text();
    const logo = /img\.src = 'data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)'/.exec(initializer);
    assert.ok(logo, 'the top bar gets a logo of our own');
    const svg = Buffer.from(logo[1]!, 'base64').toString('utf8');
    assert.match(svg, />mediaflow<\/text>/);
    assert.doesNotMatch(svg, /fastify/i);
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
    const post = await fetch(`${base}/thumbnail/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(post.status, 401);
  });
});
