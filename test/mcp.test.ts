import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { useOperation } from './helpers/operation.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { fixtures } from './helpers/fixtures.js';
import { audioOf, durationOf, frameRgb, probe, videoOf } from './helpers/media.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { eventually, ffmpegChildren } from './helpers/serve-process.js';
import { EDIT_SCHEMA } from '../src/plugins/render/schema.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/mediaflow.js');
const PIPELINES = path.join(ROOT, 'pipelines');
const API_KEY = 'mcp-test-key';

/** One transport's client, with what the checks need to know of the process behind it. */
interface Connected {
  client: Client;
  dataDir: string;
  /** The process that runs the jobs (and their ffmpeg). */
  pid: () => number;
  /** The local file behind a result URL. */
  fileOf: (url: string) => string;
  close: () => Promise<void>;
}

const newClient = () => new Client({ name: 'mediaflow-test', version: '1.0.0' });

/** `mediaflow mcp` as a client starts it: the real CLI as a child process, MCP on its stdin and stdout. */
async function overStdio(): Promise<Connected> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-mcp-stdio-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    cwd: dataDir,
    env: {
      ...getDefaultEnvironment(),
      ...(process.env.FFMPEG_PATH ? { FFMPEG_PATH: process.env.FFMPEG_PATH } : {}),
      MEDIAFLOW_ALLOW_PRIVATE_URLS: '1',
      MEDIAFLOW_DATA_DIR: dataDir,
      MEDIAFLOW_PIPELINES_DIR: PIPELINES,
      MEDIAFLOW_LOG_LEVEL: 'warn',
    },
    stderr: 'pipe',
  });
  const client = newClient();
  await client.connect(transport);
  return {
    client,
    dataDir,
    pid: () => transport.pid!,
    // Without MEDIAFLOW_PUBLIC_URL the results are file:// URLs of the data directory's uploads/.
    fileOf: (url) => {
      assert.ok(url.startsWith(`file://${dataDir}/uploads/`), url);
      return fileURLToPath(url);
    },
    close: async () => {
      await client.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** `POST /mcp` of a real server on a loopback socket, with the API key. */
async function overHttp(server: TestServer): Promise<Connected> {
  const client = newClient();
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), {
      requestInit: { headers: { 'x-api-key': API_KEY } },
    }),
  );
  return {
    client,
    dataDir: server.dataDir,
    pid: () => process.pid,
    fileOf: server.pathOf,
    close: () => client.close(),
  };
}

const jobRecords = async (dataDir: string) =>
  Promise.all(
    (await readdir(path.join(dataDir, 'jobs')).catch(() => [] as string[]))
      .filter((name) => name.endsWith('.json'))
      .map(async (name) => JSON.parse(await readFile(path.join(dataDir, 'jobs', name), 'utf8')) as JobFile),
  );

interface JobFile {
  id: string;
  output_id: string;
  name: string;
  status: string;
}

const structured = (result: CallToolResult) => result.structuredContent as Record<string, unknown>;

/** The checks both transports must pass. */
function transportSuite(name: string, connect: () => Promise<Connected>, files: () => FileServer) {
  describe(`MCP over ${name}`, () => {
    let mcp: Connected;
    before(async () => {
      mcp = await connect();
    });
    after(() => mcp?.close());

    it('lists every operation and pipeline as a tool, with the schema of its plugin', async () => {
      const { tools } = await mcp.client.listTools();
      const byName = new Map(tools.map((tool) => [tool.name, tool]));
      for (const expected of [
        'convert-video',
        'trim-media',
        'merge-audios',
        'images-to-video',
        'podcast-clip',
        'speak',
      ])
        assert.ok(byName.has(expected), `${expected} in ${[...byName.keys()].join(', ')}`);
      const convert = byName.get('convert-video')!;
      assert.match(convert.description ?? '', /Convert a video to another format/);
      assert.deepEqual(convert.inputSchema.required, ['video_url']);
      const properties = convert.inputSchema.properties as Record<string, { enum?: string[]; default?: unknown }>;
      assert.ok(properties.format?.enum?.includes('webm'));
      assert.equal(properties.format?.default, 'mp4');
      assert.ok(!('webhook_url' in properties), 'the job fields of HTTP are no tool arguments');
      assert.deepEqual(byName.get('trim-media')!.inputSchema.required, ['media_url']);
      // A pipeline's inputs: those without a default are required.
      const clip = byName.get('podcast-clip')!;
      assert.deepEqual(clip.inputSchema.required, ['episode', 'start', 'end']);
      assert.match(clip.description ?? '', /trim-media/);
    });

    it('runs a short operation and answers its result URL', async () => {
      const result = (await mcp.client.callTool({
        name: 'trim-media',
        arguments: { media_url: files().url('/f/clip-2s-640x360-25fps.mp4'), start: '0.5' },
      })) as CallToolResult;
      assert.equal(result.isError, undefined, JSON.stringify(result.content));
      const body = structured(result);
      assert.equal(typeof body.message, 'string');
      assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), {
        message: body.message,
        output_file: body.output_file,
      });
      const info = await probe(mcp.fileOf(body.output_file as string));
      assert.ok(Math.abs(durationOf(info) - 1.5) < 0.1, `duration ${durationOf(info)}`);
      assert.ok(videoOf(info) && audioOf(info));
    });

    it('speaks a text, answering the speech and its captions, two files', async () => {
      const result = (await mcp.client.callTool({
        name: 'speak',
        arguments: { text: 'Hello from the tool. Goodbye.', captions: 'vtt', format: 'wav' },
      })) as CallToolResult;
      assert.equal(result.isError, undefined, JSON.stringify(result.content));
      const body = structured(result);
      assert.equal(body.message, 'Speech generated successfully');
      assert.match(String(body.output_file), /\/speech\.wav$/);
      const captions = await readFile(mcp.fileOf(String(body.subtitle_file_url)), 'utf8');
      assert.match(captions, /^WEBVTT\n\n00:00:00\.000 --> .*\nHello from the tool\.\n/);
      const info = await probe(mcp.fileOf(String(body.output_file)));
      assert.ok(Math.abs(durationOf(info) - Number(body.duration)) < 0.01);
    });

    it('sends progress notifications while a long job runs, then its result', async () => {
      const progress: Progress[] = [];
      const result = (await mcp.client.callTool(
        {
          name: 'images-to-video',
          arguments: { image_urls: files().url('/f/small-300x200.png'), seconds_per_image: 120, fps: 30 },
        },
        undefined,
        { onprogress: (report) => progress.push(report), resetTimeoutOnProgress: true },
      )) as CallToolResult;
      assert.equal(result.isError, undefined, JSON.stringify(result.content));
      assert.ok(progress.length >= 1, 'at least one progress notification');
      for (const [i, report] of progress.entries()) {
        assert.equal(report.total, 100);
        assert.ok(report.progress > 0 && report.progress < 100, `progress ${report.progress}`);
        if (i > 0) assert.ok(report.progress > progress[i - 1]!.progress, 'each notification higher than the last');
        assert.equal(typeof report.message, 'string');
      }
      const info = await probe(mcp.fileOf(structured(result).output_file as string));
      assert.ok(Math.abs(durationOf(info) - 120) < 0.5, `duration ${durationOf(info)}`);
    });

    it('cancels the job when the client cancels the call: ffmpeg killed, nothing left behind', async () => {
      const before = new Set((await jobRecords(mcp.dataDir)).map((job) => job.id));
      const controller = new AbortController();
      // A picture shown for an hour at 60 fps: ffmpeg would take minutes.
      const call = mcp.client.callTool(
        {
          name: 'images-to-video',
          arguments: { image_urls: files().url('/f/small-300x200.png'), seconds_per_image: 3600, fps: 60 },
        },
        undefined,
        { signal: controller.signal },
      );
      assert.ok(await eventually(async () => (await ffmpegChildren(mcp.pid())).length === 1, 20_000), 'ffmpeg started');
      controller.abort();
      await assert.rejects(call);
      assert.ok(
        await eventually(async () => (await ffmpegChildren(mcp.pid())).length === 0, 10_000),
        'ffmpeg was killed',
      );
      const job = (await jobRecords(mcp.dataDir)).find((record) => !before.has(record.id))!;
      assert.ok(
        await eventually(async () =>
          (await jobRecords(mcp.dataDir)).some((r) => r.id === job.id && r.status === 'cancelled'),
        ),
        'the job ended cancelled',
      );
      assert.ok(
        await eventually(async () => (await readdir(path.join(mcp.dataDir, 'work')).catch(() => [])).length === 0),
        'its work folder removed',
      );
      const uploads = await readdir(path.join(mcp.dataDir, 'uploads')).catch(() => [] as string[]);
      assert.deepEqual(
        uploads.filter((entry) => entry.startsWith(job.output_id)),
        [],
      );
    });

    it('answers a bad argument with a tool error naming it, and mediaflow code', async () => {
      const result = (await mcp.client.callTool({
        name: 'convert-video',
        arguments: { video_url: files().url('/f/clip-2s-640x360-25fps.mp4'), format: 'gif' },
      })) as CallToolResult;
      assert.equal(result.isError, true);
      assert.match((result.content[0] as { text: string }).text, /^MF_ERR_PARAM: Unsupported format 'gif'/);
      assert.equal(structured(result).code, 'MF_ERR_PARAM');
      const missing = (await mcp.client.callTool({ name: 'trim-media', arguments: {} })) as CallToolResult;
      assert.equal(missing.isError, true);
      assert.match((missing.content[0] as { text: string }).text, /media_url/);
      await assert.rejects(
        mcp.client.callTool({ name: 'convert-vidoe', arguments: {} }),
        /did you mean 'convert-video'/,
      );
    });

    it('answers a job that fails as it runs with a tool error: its code and message', async () => {
      const result = (await mcp.client.callTool({
        name: 'trim-media',
        arguments: { media_url: files().url('/missing.mp4'), start: '0.5' },
      })) as CallToolResult;
      assert.equal(result.isError, true);
      assert.match((result.content[0] as { text: string }).text, /^MF_ERR_DOWNLOAD: Failed to download .*404/);
      assert.equal(structured(result).code, 'MF_ERR_DOWNLOAD');
    });
  });
}

describe('the MCP server', () => {
  const op = useOperation({ env: { MEDIAFLOW_API_KEY: API_KEY, MEDIAFLOW_PIPELINES_DIR: PIPELINES } });

  transportSuite('stdio (mediaflow mcp)', overStdio, () => op.files);
  transportSuite(
    'streamable HTTP (POST /mcp)',
    () => overHttp(op.server),
    () => op.files,
  );

  describe('the render tool', () => {
    before(() => fixtures('red-640x360.jpg', 'green-360x640.png', 'tone-2s-44k-stereo.mp3'));

    it("takes the edit document's schema, teaches it by example, and renders that example", async () => {
      const mcp = await overHttp(op.server);
      try {
        const { tools } = await mcp.client.listTools();
        const render = tools.find((tool) => tool.name === 'render')!;
        const properties = render.inputSchema.properties as Record<string, Record<string, unknown>>;
        // `edit` is the document's own schema: every field, type, range and default an agent may give.
        const document = JSON.parse(JSON.stringify(EDIT_SCHEMA)) as Record<string, unknown>;
        assert.deepEqual(properties.edit!.properties, document.properties);
        assert.deepEqual(properties.edit!.required, ['tracks']);
        assert.equal(properties.edit!.additionalProperties, false);
        assert.deepEqual(Object.keys(properties).sort(), [
          'dry_run',
          'edit',
          'fanout',
          'merge',
          'storyboard',
          'template',
        ]);
        // The description holds one complete document, on a line of its own: pictures with a fade, a text, music.
        const description = render.description ?? '';
        const line = description.split('\n').find((text) => text.startsWith('{'))!;
        const example = JSON.parse(line) as {
          output: object;
          tracks: Array<{ clips: Array<Record<string, unknown>> }>;
        };
        assert.deepEqual(
          example.tracks.map((track) => track.clips.map((clip) => clip.type)),
          [['image', 'image'], ['text'], ['audio']],
        );
        assert.ok(example.tracks[0]!.clips[1]!.transition, 'a transition');
        assert.ok(description.length < 3000, `a description of ${description.length} characters`);

        // That example, as an agent would send it, on fixtures and in a smaller frame.
        const sources: Record<string, string> = {
          'https://example.com/a.jpg': op.files.url('/f/red-640x360.jpg'),
          'https://example.com/b.jpg': op.files.url('/f/green-360x640.png'),
          'https://example.com/music.mp3': op.files.url('/f/tone-2s-44k-stereo.mp3'),
        };
        for (const clip of example.tracks.flatMap((track) => track.clips))
          if (typeof clip.src === 'string') clip.src = sources[clip.src] ?? assert.fail(`unexpected src ${clip.src}`);
        example.output = { ...example.output, width: 270, height: 480 };
        const result = (await mcp.client.callTool({ name: 'render', arguments: { edit: example } })) as CallToolResult;
        assert.equal(result.isError, undefined, JSON.stringify(result.content));
        const body = structured(result);
        assert.equal(body.message, 'Video rendered successfully');
        assert.equal(body.duration, 9.5);
        const file = mcp.fileOf(body.output_file as string);
        const info = await probe(file);
        assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height], [270, 480]);
        assert.ok(Math.abs(durationOf(info) - 9.5) < 0.05, String(durationOf(info)));
        assert.ok(Math.abs(Number(audioOf(info)!.duration) - 9.5) < 0.05, 'the music, looped to the end');
        // Red, then the fade (both at once), then green; the title at the top for its first 3 s only.
        const [first, crossing, second] = await Promise.all([2, 4.75, 7].map((seconds) => frameRgb(file, seconds)));
        const [r1, g1] = first!.pixel(135, 400);
        const [r2, g2] = crossing!.pixel(135, 400);
        const [r3, g3] = second!.pixel(135, 400);
        assert.ok(r1 > 200 && g1 < 60, `red at 2 s: ${r1}, ${g1}`);
        assert.ok(r2 > 70 && r2 < 190 && g2 > 70 && g2 < 190, `both halfway through the fade: ${r2}, ${g2}`);
        assert.ok(r3 < 60 && g3 > 200, `green at 7 s: ${r3}, ${g3}`);
        const whiteOnTop = (frame: Awaited<ReturnType<typeof frameRgb>>) => {
          let count = 0;
          for (let y = 0; y < 120; y++)
            for (let x = 0; x < 270; x++) if (frame.pixel(x, y).every((channel) => channel > 200)) count++;
          return count;
        };
        assert.ok(whiteOnTop(first!) > 30, 'the title at 2 s');
        assert.equal(whiteOnTop(second!), 0, 'no title at 7 s');

        // A bad document: every problem, each with its path, in the text and in the structured error.
        const bad = (await mcp.client.callTool({
          name: 'render',
          arguments: {
            edit: { tracks: [{ clips: [{ type: 'image', src: op.files.url('/f/x.jpg') }, { type: 'gif' }] }] },
          },
        })) as CallToolResult;
        assert.equal(bad.isError, true);
        assert.equal(
          (bad.content[0] as { text: string }).text,
          'MF_ERR_PARAM: tracks[0].clips[0].duration: missing: an image clip needs it\n' +
            'tracks[0].clips[0].duration: missing: an image clip needs it\n' +
            "tracks[0].clips[1].type: unknown type 'gif': one of video, image, text, audio, voice, captions, waveform",
        );
        assert.deepEqual(
          (structured(bad).errors as Array<{ path: string }>).map((problem) => problem.path),
          ['tracks[0].clips[0].duration', 'tracks[0].clips[1].type'],
        );
      } finally {
        await mcp.close();
      }
    });
  });

  describe('POST /mcp and the API key', () => {
    it('is a 401 without the key, and the client cannot connect', async () => {
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      };
      for (const headers of [{}, { 'x-api-key': 'wrong' }] as Array<Record<string, string>>) {
        const res = await fetch(`${op.server.base}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          body: JSON.stringify(initialize),
        });
        assert.equal(res.status, 401);
        assert.deepEqual(await res.json(), { error: 'Invalid or missing API key', code: 'MF_ERR_AUTH' });
      }
      await assert.rejects(
        newClient().connect(new StreamableHTTPClientTransport(new URL(`${op.server.base}/mcp`))),
        (error: { code?: unknown }) => error.code === 401,
      );
    });

    it('refuses a session id it did not give, and a request without one that is no initialize', async () => {
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-api-key': API_KEY,
      };
      const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      const unknown = await fetch(`${op.server.base}/mcp`, {
        method: 'POST',
        headers: { ...headers, 'mcp-session-id': '3f0c7a52-8d7e-4c1b-9a55-2b3c4d5e6f70' },
        body: list,
      });
      assert.equal(unknown.status, 404);
      assert.match(((await unknown.json()) as { error: string }).error, /Unknown MCP session/);
      const none = await fetch(`${op.server.base}/mcp`, { method: 'POST', headers, body: list });
      assert.equal(none.status, 400);
      assert.match(((await none.json()) as { error: string }).error, /Mcp-Session-Id/);
    });

    it('answers a tool name of a megabyte as fast as a short one: the closest-name search is capped', async () => {
      const mcp = await overHttp(op.server);
      try {
        const megabyte = 'x'.repeat(1_000_000);
        /** The quickest of three calls (the least disturbed by the rest of the machine), in ms. */
        let message = '';
        const quickest = async (name: string, pad: string) => {
          let best = Infinity;
          for (let i = 0; i < 3; i++) {
            const start = performance.now();
            await assert.rejects(mcp.client.callTool({ name, arguments: { pad } }), (error: Error) => {
              message = error.message;
              return /Unknown tool '/.test(message);
            });
            best = Math.min(best, performance.now() - start);
          }
          return best;
        };
        // The same megabyte on the wire either way: as an argument of a short misspelt name, then as the name.
        const reference = await quickest('convert-vidoe', megabyte);
        const huge = await quickest(megabyte, '');
        assert.ok(
          huge < 5 * reference,
          `a 1 MB name took ${huge.toFixed(0)} ms, a short one ${reference.toFixed(0)} ms`,
        );
        // The name is quoted shortened: a huge name makes no huge answer.
        assert.match(message, /Unknown tool 'x{57}\.\.\.'$/);
      } finally {
        await mcp.close();
      }
    });
  });

  describe('sessions per API key (MEDIAFLOW_MCP_SESSIONS_PER_KEY)', () => {
    let keyed: TestServer;
    before(async () => {
      keyed = await startMediaflow({ MEDIAFLOW_API_KEYS: 'key-a,key-b', MEDIAFLOW_MCP_SESSIONS_PER_KEY: '2' });
    });
    after(() => keyed?.close());

    const connect = async (key: string) => {
      const client = newClient();
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${keyed.base}/mcp`), {
          requestInit: { headers: { 'x-api-key': key } },
        }),
      );
      return client;
    };
    const expired = (error: { code?: unknown }) => error.code === 404;

    it("evicts a key's oldest idle session past its limit; another key still gets one", async () => {
      const clients: Client[] = [];
      try {
        const [a1, a2] = [await connect('key-a'), await connect('key-a')];
        const b = await connect('key-b');
        clients.push(a1, a2, b);
        // A call in flight keeps its session: a download that never gets its first byte.
        const stalled = await startFileServer({ '/stall.mp4': () => new Promise(() => undefined) });
        const controller = new AbortController();
        let a3: Client;
        try {
          const call = a1.callTool(
            { name: 'trim-media', arguments: { media_url: stalled.url('/stall.mp4'), start: '1' } },
            undefined,
            { signal: controller.signal },
          );
          call.catch(() => undefined);
          assert.ok(await eventually(() => stalled.hits.get('/stall.mp4') === 1), 'the call is under way');
          // key-a's third session: a1 is the oldest, but busy, so a2 (idle) goes.
          a3 = await connect('key-a');
          clients.push(a3);
          await assert.rejects(a2.listTools(), expired);
          await a3.listTools();
          controller.abort();
          await assert.rejects(call);
        } finally {
          await stalled.close();
        }
        // The call cancelled, a1 is idle too, but used after a3: a3 goes first, then a1.
        clients.push(await connect('key-a'));
        await assert.rejects(a3.listTools(), expired);
        for (let i = 0; i < 5; i++) clients.push(await connect('key-a'));
        await assert.rejects(a1.listTools(), expired);
        // key-b's session was never touched, and key-b opens another.
        assert.ok((await b.listTools()).tools.length > 0);
        clients.push(await connect('key-b'));
        assert.ok((await b.listTools()).tools.length > 0);
      } finally {
        await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
      }
    });
  });
});
