import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { durationOf, brightPixels, frameRgb, meanLuma, probe, videoOf } from './helpers/media.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { useOperation } from './helpers/operation.js';
import { ALLOW_PRIVATE_HINT, expectRefused, filesUnder, ready } from './security/hostile.js';

/**
 * Own outputs as inputs (issue 9): a URL under the server's own `/uploads/` is read from the
 * output store, never fetched, so results chain with private addresses REFUSED. Anything else
 * under that prefix (traversal, files being written, missing files) is a 400.
 */

type Frame = Awaited<ReturnType<typeof frameRgb>>;

// The black 480x270 clip: libass draws bottom-centred text in rows ~235-265; the top stays black.
const CLIP = 'clip-2s-480x270-black.mp4';
const TEXT_BOX = [100, 225, 280, 42] as const;
const AWAY_BOX = [0, 0, 480, 150] as const;
const SUBTITLE_TEXT = 'HELLO WORLD HELLO WORLD';

/** Puts the black clip into the server's store as a prior result would be, and returns its store name. */
async function publishPriorResult(dataDir: string): Promise<string> {
  const name = `${randomUUID()}_merged.mp4`;
  await mkdir(path.join(dataDir, 'uploads'), { recursive: true });
  await copyFile(await fixture(CLIP), path.join(dataDir, 'uploads', name));
  return name;
}

/** The local file behind an output URL under `base`. */
function storePath(server: TestServer, base: string, url: string): string {
  const prefix = `${base}/uploads/`;
  assert.ok(url.startsWith(prefix), `${url} is not under ${prefix}`);
  return path.join(server.dataDir, 'uploads', decodeURIComponent(url.slice(prefix.length)));
}

/** Polls GET /jobs/<id> until the job is finished; returns the job object. */
async function finished(server: TestServer, id: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(`${server.base}/jobs/${id}`);
    assert.equal(res.status, 200);
    const job = (await res.json()) as Record<string, unknown>;
    if (['succeeded', 'failed', 'cancelled'].includes(job.status as string)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${String(job.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Submits with Prefer: respond-async, waits for the job and returns its result body. */
async function viaJob(
  server: TestServer,
  route: string,
  fields: Record<string, string>,
): Promise<Record<string, string>> {
  const res = await server.post(route, fields, { headers: { prefer: 'respond-async' } });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  assert.equal(res.body.status, 'queued');
  const job = await finished(server, res.body.job_id!);
  assert.equal(job.status, 'succeeded', JSON.stringify(job));
  assert.equal(job.error, null);
  return job.result as Record<string, string>;
}

/** The subtitles are in the picture: the text area of the black clip lit up at 1 s, the top still black. */
async function assertBurnedIn(file: string, source: Frame): Promise<void> {
  const out = await probe(file);
  assert.equal(out.format.format_name.split(',')[0], 'mov');
  assert.equal(videoOf(out)?.codec_name, 'h264');
  assert.equal(videoOf(out)?.width, 480);
  assert.equal(videoOf(out)?.height, 270);
  assert.ok(Math.abs(durationOf(out) - 2) < 0.15, `duration ${durationOf(out)}`);
  const frame = await frameRgb(file, 1);
  const before = meanLuma(source, ...TEXT_BOX);
  const afterLuma = meanLuma(frame, ...TEXT_BOX);
  assert.ok(before < 2, `source text area is black (${before})`);
  assert.ok(afterLuma > before + 4, `text area brighter: ${afterLuma} vs ${before}`);
  assert.ok(brightPixels(frame, ...TEXT_BOX) > 150, `white glyph pixels: ${brightPixels(frame, ...TEXT_BOX)}`);
  assert.equal(brightPixels(frame, ...AWAY_BOX), 0, 'the top of the picture stays black');
}

describe('own outputs as inputs, with private addresses refused', () => {
  const op = useOperation({
    fixtures: [CLIP, 'hello.srt', 'small-300x200.png'],
    env: { MEDIAFLOW_ALLOW_PRIVATE_URLS: '0' },
  });
  let sourceFrame: Frame;
  let video: string;

  before(async () => {
    await ready(op.server);
    sourceFrame = await frameRgb(await fixture(CLIP), 1);
    video = await publishPriorResult(op.server.dataDir);
  });

  /** generate-subtitles' SRT: one cue of two seconds. */
  async function checkSrt(url: string): Promise<void> {
    assert.match(url, new RegExp(`^${op.server.base}/uploads/[0-9a-f-]{36}/generated_subtitles\\.srt$`));
    assert.equal(await readFile(op.server.pathOf(url), 'utf8'), `1\n00:00:00,000 --> 00:00:02,000\n${SUBTITLE_TEXT}\n`);
  }

  it('chains generate-subtitles into add-subtitles synchronously, reading both inputs from the store', async () => {
    const subs = await op.server.post('/generate-subtitles/', { text: SUBTITLE_TEXT, seconds_per_line: '2' });
    assert.equal(subs.status, 200, JSON.stringify(subs.body));
    const subtitleUrl = subs.body.subtitle_file_url!;
    await checkSrt(subtitleUrl);

    const res = await op.server.post('/add-subtitles/', {
      video_url: `${op.server.base}/uploads/${video}`,
      subtitle_url: subtitleUrl,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Subtitles added successfully');
    assert.match(
      res.body.output_video!,
      new RegExp(`^${op.server.base}/uploads/[0-9a-f-]{36}/video_with_subtitles\\.mp4$`),
    );
    await assertBurnedIn(op.server.pathOf(res.body.output_video!), sourceFrame);
    // The inputs were read, not moved or consumed: they are still published.
    assert.ok((await readdir(path.join(op.server.dataDir, 'uploads'))).includes(video));
    assert.equal(
      await readFile(op.server.pathOf(subtitleUrl), 'utf8'),
      `1\n00:00:00,000 --> 00:00:02,000\n${SUBTITLE_TEXT}\n`,
    );
    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it('chains the same two steps as asynchronous jobs (Prefer: respond-async)', async () => {
    const subs = await viaJob(op.server, '/generate-subtitles/', { text: SUBTITLE_TEXT, seconds_per_line: '2' });
    assert.equal(subs.message, 'Subtitle file generated successfully');
    await checkSrt(subs.subtitle_file_url!);

    const result = await viaJob(op.server, '/add-subtitles/', {
      video_url: `${op.server.base}/uploads/${video}`,
      subtitle_url: subs.subtitle_file_url!,
    });
    assert.deepEqual(Object.keys(result).sort(), ['message', 'output_video']);
    assert.equal(result.message, 'Subtitles added successfully');
    await assertBurnedIn(op.server.pathOf(result.output_video!), sourceFrame);
    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it('control: the fixture server on 127.0.0.1 (another port) is still refused as a private address', async () => {
    for (const [route, fields, url] of [
      [
        '/add-subtitles/',
        { video_url: op.files.url(`/f/${CLIP}`), subtitle_url: op.files.url('/f/hello.srt') },
        op.files.url(`/f/${CLIP}`),
      ],
      // An /uploads/ path on another port is not this server's.
      [
        '/add-subtitles/',
        { video_url: `${op.server.base}/uploads/${video}`, subtitle_url: op.files.url('/uploads/x.srt') },
        op.files.url('/uploads/x.srt'),
      ],
    ] as const) {
      await expectRefused(op.server, route, fields, {
        status: 400,
        error: `URL '${url}' is not allowed: it resolves to a loopback address (127.0.0.1)${ALLOW_PRIVATE_HINT}`,
      });
    }
    assert.equal(op.files.hits.size, 0, 'the fixture server was reached');
  });

  describe('refuses what is not a published output, with 400, reading and fetching nothing', () => {
    const SECRET = `SECRET-${randomUUID()}`;
    const srt = `1\n00:00:00,000 --> 00:00:02,000\n${SECRET}\n`;
    let id: string;
    let published: string[];
    let jobsBefore: string[];

    before(async () => {
      // Real files at every place the hostile URLs name: refusing them is the guard's doing, not a missing file's.
      id = randomUUID();
      const uploads = path.join(op.server.dataDir, 'uploads');
      await writeFile(path.join(op.server.dataDir, 'secret.srt'), srt);
      await writeFile(path.join(uploads, `.partial-${id}`), srt);
      await writeFile(path.join(uploads, '.hidden.srt'), srt);
      await mkdir(path.join(uploads, id, 'x'), { recursive: true });
      await writeFile(path.join(uploads, id, 'x', 'sub.srt'), srt);
      await writeFile(path.join(uploads, id, 'sub.srt'), srt);
      published = (await filesUnder(uploads)).sort();
      jobsBefore = await readdir(path.join(op.server.dataDir, 'jobs')).catch(() => []);
    });

    const invalid = (url: string) =>
      `Invalid URL '${url}': not a published output of this server (dot segments or encoded separators)`;
    const notOutput = (url: string) => `Invalid URL '${url}': not a published output of this server`;

    const cases: Array<[string, (base: string, id: string) => string, (url: string, id: string) => string]> = [
      ['../', (base) => `${base}/uploads/../secret.srt`, invalid],
      ['../ past a folder', (base, id) => `${base}/uploads/${id}/../../secret.srt`, invalid],
      ['%2e%2e/', (base) => `${base}/uploads/%2e%2e/secret.srt`, invalid],
      ['%2e%2e%2f', (base) => `${base}/uploads/%2e%2e%2fsecret.srt`, invalid],
      ['%2E%2E%2F', (base) => `${base}/uploads/%2E%2E%2Fsecret.srt`, invalid],
      ['..%2f', (base) => `${base}/uploads/..%2fsecret.srt`, invalid],
      ['%5c', (base) => `${base}/uploads/..%5csecret.srt`, invalid],
      ['a .partial- file being written', (base, id) => `${base}/uploads/.partial-${id}`, notOutput],
      ['a dotfile', (base) => `${base}/uploads/.hidden.srt`, notOutput],
      ['three segments', (base, id) => `${base}/uploads/${id}/x/sub.srt`, notOutput],
      [
        'a query',
        (base, id) => `${base}/uploads/${id}/sub.srt?x=1`,
        (url) => `Invalid URL '${url}': an output URL of this server takes no query or fragment`,
      ],
      [
        'a name that is not published',
        (base, id) => `${base}/uploads/${id}_missing.srt`,
        (_url, id) => `Input ${id}_missing.srt is not a published output of this server (it may have expired)`,
      ],
    ];
    for (const [name, make, message] of cases) {
      it(`refuses ${name}`, async () => {
        const url = make(op.server.base, id);
        const fields = { video_url: `${op.server.base}/uploads/${video}`, subtitle_url: url };
        await expectRefused(op.server, '/add-subtitles/', fields, { status: 400, error: message(url, id) });
      });
    }

    it('refuses them at submission for an asynchronous job too (no 202)', async () => {
      const url = `${op.server.base}/uploads/%2e%2e/secret.srt`;
      const res = await op.server.post(
        '/add-subtitles/',
        { video_url: `${op.server.base}/uploads/${video}`, subtitle_url: url },
        { headers: { prefer: 'respond-async' } },
      );
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.deepEqual(res.body, { error: invalid(url), code: 'MF_ERR_URL' });
    });

    it('left no output, no job record, and no file holding the secret', async () => {
      const uploads = path.join(op.server.dataDir, 'uploads');
      assert.deepEqual((await filesUnder(uploads)).sort(), published, 'a new output appeared');
      assert.deepEqual(
        await readdir(path.join(op.server.dataDir, 'jobs')).catch(() => []),
        jobsBefore,
        'a refused request left a job record',
      );
      assert.equal(op.files.hits.size, 0);
      assert.deepEqual(await op.server.workLeftovers(), []);
    });
  });
});

describe('own outputs under MEDIAFLOW_PUBLIC_URL', () => {
  let files: FileServer;

  before(async () => {
    await fixtures(CLIP, 'small-300x200.png');
    files = await startFileServer();
  });
  after(async () => {
    await files?.close();
  });

  // A loopback literal nothing listens on: were own URLs ever fetched, the address rule would
  // refuse it before any packet.
  it('reads MEDIAFLOW_PUBLIC_URL/uploads/... from the store (never fetched)', async () => {
    const PUBLIC = 'http://127.0.0.77:9';
    const server = await startMediaflow({ MEDIAFLOW_ALLOW_PRIVATE_URLS: '0', MEDIAFLOW_PUBLIC_URL: PUBLIC });
    try {
      await ready(server);
      const video = await publishPriorResult(server.dataDir);
      const subs = await server.post('/generate-subtitles/', { text: SUBTITLE_TEXT, seconds_per_line: '2' });
      assert.equal(subs.status, 200, JSON.stringify(subs.body));
      assert.match(
        subs.body.subtitle_file_url!,
        /^http:\/\/127\.0\.0\.77:9\/uploads\/[0-9a-f-]{36}\/generated_subtitles\.srt$/,
      );

      const res = await server.post('/add-subtitles/', {
        video_url: `${PUBLIC}/uploads/${video}`,
        subtitle_url: subs.body.subtitle_file_url!,
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.match(
        res.body.output_video!,
        /^http:\/\/127\.0\.0\.77:9\/uploads\/[0-9a-f-]{36}\/video_with_subtitles\.mp4$/,
      );
      await assertBurnedIn(storePath(server, PUBLIC, res.body.output_video!), await frameRgb(await fixture(CLIP), 1));

      // Under the public URL, a traversal is refused the same way.
      const bad = `${PUBLIC}/uploads/%2e%2e/secret.srt`;
      await expectRefused(
        server,
        '/add-subtitles/',
        { video_url: `${PUBLIC}/uploads/${video}`, subtitle_url: bad },
        {
          status: 400,
          error: `Invalid URL '${bad}': not a published output of this server (dot segments or encoded separators)`,
        },
      );
    } finally {
      await server.close();
    }
  });

  it(
    'with a public URL that has a path prefix on a loopback origin, ' + 'reads the store and sends nothing there',
    async () => {
      // The public URL names the fixture server, which counts every request: a fetch would show.
      const PUBLIC = `${files.url('/mf')}`;
      const server = await startMediaflow({ MEDIAFLOW_ALLOW_PRIVATE_URLS: '0', MEDIAFLOW_PUBLIC_URL: PUBLIC });
      try {
        await ready(server);
        const name = `${randomUUID()}_cropped.png`;
        await mkdir(path.join(server.dataDir, 'uploads'), { recursive: true });
        await copyFile(await fixture('small-300x200.png'), path.join(server.dataDir, 'uploads', name));
        const res = await server.post('/convert_image_from_url/', {
          image_url: `${PUBLIC}/uploads/${name}`,
          target_format: 'jpg',
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const out = await probe(storePath(server, PUBLIC, res.body.output_file!));
        assert.equal(videoOf(out)?.codec_name, 'mjpeg');
        assert.equal(videoOf(out)?.width, 300);
        assert.equal(videoOf(out)?.height, 200);
        assert.equal(files.hits.size, 0, `the public origin was requested: ${[...files.hits.keys()].join(', ')}`);
        // Without the prefix, the same origin is an ordinary (loopback, so refused) URL.
        const other = files.url(`/uploads/${name}`);
        await expectRefused(
          server,
          '/convert_image_from_url/',
          { image_url: other, target_format: 'jpg' },
          {
            status: 400,
            error: `URL '${other}' is not allowed: it resolves to a loopback address (127.0.0.1)${ALLOW_PRIVATE_HINT}`,
          },
        );
        assert.equal(files.hits.size, 0);
      } finally {
        await server.close();
      }
    },
  );
});
