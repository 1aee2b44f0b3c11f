import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { eventually } from './helpers/serve-process.js';
import { loadConfig } from '../src/engine/config.js';
import { ERRORS, errorOfJob } from '../src/engine/errors.js';
import { jobView, type JobRecord } from '../src/jobs/job.js';
import { builtinRegistry } from '../src/plugins/index.js';
import { buildServer } from '../src/server/app.js';

const ROOT = path.resolve(import.meta.dirname, '..');

describe('the error registry', () => {
  it('is documented in docs/errors.md: each code with its status, title and description', async () => {
    const page = await readFile(path.join(ROOT, 'docs/errors.md'), 'utf8');
    const rows = new Map(
      page
        .split('\n')
        .filter((line) => line.startsWith('| `MF_ERR_'))
        .map((line) => [/^\| `(\w+)`/.exec(line)![1], line]),
    );
    for (const [code, { status, title, description }] of Object.entries(ERRORS)) {
      assert.equal(
        rows.get(code),
        `| \`${code}\` | ${status} | ${title} | ${description.replaceAll('|', '\\|')} |`,
        `${code}'s row`,
      );
    }
    assert.deepEqual([...rows.keys()], Object.keys(ERRORS), 'no code documented that the registry does not have');
  });

  it("answers a job record written before errors kept their code with its status's code", async () => {
    const old = { status: 502, error: 'Failed to download http://example.com/a.mp4: HTTP 404 Not Found' };
    assert.equal(errorOfJob(old).code, 'MF_ERR_DOWNLOAD');
    const record = {
      id: 'x',
      kind: 'operation',
      name: 'convert-video',
      status: 'failed',
      stage: 'failed',
      progress: 0,
      error: old,
    } as unknown as JobRecord;
    assert.deepEqual((await jobView(record, async (file) => file)).error, { ...old, code: 'MF_ERR_DOWNLOAD' });
  });
});

describe('error answers carry the code', () => {
  let app: Awaited<ReturnType<typeof buildServer>>['app'];
  let base: string;
  let dataDir: string;
  let files: FileServer;
  const log: string[] = [];

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-errors-'));
    // A loopback URL that redirects to ftp: refused when the job downloads it, not at submission.
    files = await startFileServer({
      '/to-ftp': (_req, res) => void res.writeHead(302, { location: 'ftp://ftp.example.com/a.mp4' }).end(),
    });
    const config = loadConfig({
      MEDIAFLOW_DATA_DIR: dataDir,
      MEDIAFLOW_ALLOW_PRIVATE_URLS: '1',
      MEDIAFLOW_MAX_EVENT_LOOP_DELAY: '0',
    });
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        log.push(chunk.toString());
        done();
      },
    });
    ({ app } = await buildServer({ config, registry: builtinRegistry(), logger: { level: 'info', stream } as never }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await app?.close();
    await files?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const post = async (route: string, fields: Record<string, string>, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(fields),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  /** The log lines (JSON) that name `text`. */
  const logged = (text: string) =>
    log
      .join('')
      .split('\n')
      .filter((line) => line.includes(text))
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it(
    'answers an invalid URL with MF_ERR_URL, ' + 'at submission and from a synchronous job, and logs that code',
    async () => {
      const ftp = await post('/convert-video/', { video_url: 'ftp://ftp.example.com/a.mp4' });
      assert.deepEqual(ftp, {
        status: 400,
        body: {
          error: "Invalid URL 'ftp://ftp.example.com/a.mp4': only http and https are allowed, not ftp",
          code: 'MF_ERR_URL',
        },
      });

      const url = files.url('/to-ftp');
      const refused = await post('/convert-video/', { video_url: url });
      const text =
        `URL '${url}' is not allowed: it redirects to 'ftp://ftp.example.com/a.mp4': only http and https are ` +
        `allowed, not ftp`;
      assert.deepEqual(refused, { status: 400, body: { error: text, code: 'MF_ERR_URL' } });
      assert.equal(files.hits.get('/to-ftp'), 1, 'the job downloaded it');
      // The line of the answered error names the job's own code, not one rebuilt from its status (MF_ERR_PARAM).
      const lines = logged(text).filter((line) => line.code);
      assert.deepEqual(
        lines.map((line) => line.code),
        ['MF_ERR_URL'],
      );
    },
  );

  it("keeps the code in an asynchronous job's error", async () => {
    const url = files.url('/to-ftp');
    const accepted = await post('/convert-video/', { video_url: url }, { prefer: 'respond-async' });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    const statusUrl = accepted.body.status_url as string;
    let job: Record<string, unknown> = {};
    assert.ok(
      await eventually(
        async () => (job = (await (await fetch(statusUrl)).json()) as Record<string, unknown>).status === 'failed',
      ),
    );
    assert.deepEqual(job.error, {
      status: 400,
      error:
        `URL '${url}' is not allowed: it redirects to 'ftp://ftp.example.com/a.mp4': only http and https are ` +
        `allowed, not ftp`,
      code: 'MF_ERR_URL',
    });
  });

  it("gives the framework's own errors a code: unknown route, Content-Type, body too large, bad JSON", async () => {
    const missing = await fetch(`${base}/nowhere`);
    assert.deepEqual(
      [missing.status, await missing.json()],
      [404, { error: 'Not found: GET /nowhere', code: 'MF_ERR_NOT_FOUND' }],
    );
    const xml = await fetch(`${base}/convert-video/`, {
      method: 'POST',
      headers: { 'content-type': 'text/xml' },
      body: '<a/>',
    });
    assert.equal(xml.status, 415);
    assert.equal(((await xml.json()) as { code: string }).code, 'MF_ERR_MEDIA_TYPE');
    const broken = await fetch(`${base}/convert-video/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"video_url":',
    });
    assert.equal(broken.status, 400);
    assert.equal(((await broken.json()) as { code: string }).code, 'MF_ERR_BAD_REQUEST');
    const method = await fetch(`${base}/convert-video/`);
    assert.deepEqual([method.status, ((await method.json()) as { code: string }).code], [405, 'MF_ERR_METHOD']);
  });

  it('gives a Range outside an output its code (416, from @fastify/static)', async () => {
    await writeFile(path.join(dataDir, 'uploads', 'ten.txt'), '0123456789');
    const res = await fetch(`${base}/uploads/ten.txt`, { headers: { range: 'bytes=100-200' } });
    assert.equal(res.status, 416);
    assert.equal(((await res.json()) as { code: string }).code, 'MF_ERR_RANGE');
  });

  it('answers headers larger than Node reads with {error, code} (431), written before any request exists', async () => {
    const socket = net.connect((app.server.address() as AddressInfo).port, '127.0.0.1');
    socket.end(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    let answer = '';
    for await (const chunk of socket) answer += String(chunk);
    assert.match(answer, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
    assert.deepEqual(JSON.parse(body), {
      error: 'The request headers are too large',
      code: 'MF_ERR_HEADERS_TOO_LARGE',
    });
  });
});
