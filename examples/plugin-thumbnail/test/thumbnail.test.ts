/**
 * The plugin as its users meet it: loaded by mediaflow through MEDIAFLOW_PLUGINS (the package
 * name, resolved from node_modules), over HTTP, from the CLI and inside a pipeline.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { centreRgb, dominant, fileServer, makeVideo, mediaflow, serve, sizeOf } from './harness.js';

const PIPELINES = path.resolve(import.meta.dirname, '../pipelines');

describe('mediaflow-plugin-thumbnail, loaded through MEDIAFLOW_PLUGINS', () => {
  let tmp: string;
  let files: Awaited<ReturnType<typeof fileServer>>;
  let server: Awaited<ReturnType<typeof serve>>;
  /** The local path of an output URL the server answered with. */
  const local = (url: unknown) =>
    path.join(tmp, 'data', 'uploads', decodeURIComponent(String(url).replace(/^https?:\/\/[^/]+\/uploads\//, '')));

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-plugin-thumbnail-'));
    await makeVideo(path.join(tmp, 'rgb.mp4'));
    files = await fileServer(tmp);
    server = await serve(path.join(tmp, 'data'), { MEDIAFLOW_PIPELINES_DIR: PIPELINES });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await files?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('is listed by `mediaflow plugins` with its version and where it came from', async () => {
    const { code, stdout, stderr } = await mediaflow(['plugins', '--json']);
    assert.equal(code, 0, stderr);
    const row = (JSON.parse(stdout) as Array<Record<string, string>>).find((r) => r.name === 'thumbnail');
    assert.deepEqual(row && { version: row.version, source: row.source, route: row.route, command: row.command }, {
      version: '1.0.0',
      source: 'mediaflow-plugin-thumbnail (MEDIAFLOW_PLUGINS)',
      route: '/thumbnail/',
      command: 'thumbnail',
    });
  });

  it('answers POST /thumbnail/ with the frame at the time code, in the format and width asked', async () => {
    const png = await server.post('/thumbnail/', {
      video_url: files.url('rgb.mp4'),
      time: '1.5',
      width: '64',
      format: 'png',
    });
    assert.equal(png.status, 200, JSON.stringify(png.body));
    assert.equal(png.body.message, 'Thumbnail taken at 1.5 successfully');
    assert.match(String(png.body.output_file), /\/uploads\/[0-9a-f-]{36}_thumbnail\.png$/);
    assert.deepEqual(await sizeOf(local(png.body.output_file)), { width: 64, height: 48 });
    assert.equal(dominant(await centreRgb(local(png.body.output_file))), 'green');

    // JSON works as well as forms; defaults fill the rest (jpg, the video's size), and a time code may be HH:MM:SS.
    const res = await fetch(`${server.base}/thumbnail`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ video_url: files.url('rgb.mp4'), time: '00:00:02.5' }),
    });
    const jpg = (await res.json()) as Record<string, string>;
    assert.equal(res.status, 200, JSON.stringify(jpg));
    assert.match(jpg.output_file!, /_thumbnail\.jpg$/);
    assert.deepEqual(await sizeOf(local(jpg.output_file)), { width: 320, height: 240 });
    assert.equal(dominant(await centreRgb(local(jpg.output_file))), 'blue');
  });

  it("refuses bad requests with the contract's statuses and texts", async () => {
    const video_url = files.url('rgb.mp4');
    const cases: Array<[Record<string, string>, number, RegExp]> = [
      [{ time: '1' }, 400, /`video_url`/],
      [{ video_url, time: 'soon' }, 400, /^Expected `time` to be a time code: .*, got `soon`$/],
      [{ video_url, format: 'gif' }, 400, /^Unsupported format 'gif'\. Supported formats: jpg, png, webp\.$/],
      [{ video_url, width: '8' }, 400, /`width`/],
      // Checked by the plugin once the video is probed.
      [{ video_url, time: '7' }, 422, /^Time 7 is past the end of the video \(3\.00 s\)$/],
      [{ video_url: files.url('missing.mp4') }, 502, /^Failed to download .*missing\.mp4: HTTP 404/],
    ];
    for (const [fields, status, message] of cases) {
      const res = await server.post('/thumbnail/', fields);
      assert.equal(res.status, status, `${JSON.stringify(fields)}: ${JSON.stringify(res.body)}`);
      assert.match(String(res.body.error), message);
    }
  });

  it('has its route, fields, defaults and choices in /openapi.json', async () => {
    const doc = (await (await fetch(`${server.base}/openapi.json`)).json()) as {
      paths: Record<
        string,
        {
          post: {
            tags: string[];
            requestBody: {
              content: Record<
                string,
                { schema: { properties: Record<string, Record<string, unknown>>; required?: string[] } }
              >;
            };
          };
        }
      >;
    };
    const post = doc.paths['/thumbnail/']?.post;
    assert.ok(post, Object.keys(doc.paths).join(', '));
    assert.deepEqual(post.tags, ['plugins']);
    const form = post.requestBody.content['multipart/form-data']!.schema;
    assert.deepEqual(Object.keys(form.properties), ['video_url', 'time', 'width', 'format', 'webhook_url', 'metadata']);
    assert.deepEqual(form.required, ['video_url']);
    assert.equal(form.properties.time!.default, '0');
    assert.deepEqual(form.properties.format!.enum, ['jpg', 'png', 'webp']);
    assert.equal(form.properties.width!.maximum, 7680);
  });

  it('runs from the CLI on a local file, with --help made from its schema', async () => {
    const help = await mediaflow(['thumbnail', '--help']);
    assert.equal(help.code, 0, help.stderr);
    const flat = help.stdout.replace(/\s+/g, ' ');
    for (const text of [
      '--video-url <value>',
      '--time <value> A time code',
      '(default: "0")',
      '--width <value>',
      '(16 to 7680)',
      '--format <value> Picture format (choices: jpg, png, webp) (default: "jpg")',
      '--out-dir <dir>',
    ]) {
      assert.ok(flat.includes(text), `${text} in ${help.stdout}`);
    }

    const out = path.join(tmp, 'cli');
    const { code, stdout, stderr } = await mediaflow(
      ['thumbnail', '--video-url', 'rgb.mp4', '--time', '0.5', '--format', 'webp', '--out-dir', out],
      { cwd: tmp },
    );
    assert.equal(code, 0, stderr);
    const result = JSON.parse(stdout) as { message: string; output_file: string };
    assert.equal(result.message, 'Thumbnail taken at 0.5 successfully');
    assert.match(result.output_file, /_thumbnail\.webp$/);
    assert.equal(dominant(await centreRgb(path.resolve(tmp, result.output_file))), 'red');

    const late = await mediaflow(['thumbnail', '--video-url', 'rgb.mp4', '--time', '00:01:00'], { cwd: tmp });
    assert.equal(late.code, 1);
    assert.match(late.stderr, /Time 00:01:00 is past the end of the video/);
  });

  it('runs inside a pipeline, with a built-in after it, from the CLI and over HTTP', async () => {
    const out = path.join(tmp, 'pipeline');
    const run = await mediaflow(
      [
        'run',
        'cover',
        '--pipelines-dir',
        PIPELINES,
        '--input',
        'video=rgb.mp4',
        '--input',
        'time=1.5',
        '--out-dir',
        out,
      ],
      { cwd: tmp },
    );
    assert.equal(run.code, 0, run.stderr);
    const { outputs } = JSON.parse(run.stdout) as { outputs: { cover: string } };
    const cover = path.resolve(tmp, outputs.cover);
    assert.deepEqual(await sizeOf(cover), { width: 720, height: 1280 });
    assert.equal(dominant(await centreRgb(cover)), 'green');

    const res = await server.post('/pipelines/cover/', { video: files.url('rgb.mp4'), time: '2.5' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const url = (res.body.outputs as { cover: string }).cover;
    assert.deepEqual(await sizeOf(local(url)), { width: 720, height: 1280 });
    assert.equal(dominant(await centreRgb(local(url))), 'blue');
  });
});
