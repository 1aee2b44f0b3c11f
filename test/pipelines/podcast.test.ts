import assert from 'node:assert/strict';
import { copyFile, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from '../helpers/lifecycle.js';
import { useOperation } from '../helpers/operation.js';
import { audioOf, durationOf, probe } from '../helpers/media.js';
import { runCli, startMediaflow } from '../helpers/mediaflow.js';

const PIPELINES = path.resolve(import.meta.dirname, '../../pipelines');

const BROKEN = `name: broken
description: A definition with a mistake
inputs:
  clip: url
steps:
  convert:
    op: convert-video
    with:
      video_url: "{{ inputs.clip }}"
      formt: webm
results:
  video: "{{ steps.convert.output }}"
`;

describe('pipeline podcast', () => {
  const op = useOperation({
    fixtures: ['tone-1s-22k-mono.wav', 'tone-2s-44k-stereo.mp3', 'tone-1s-48k-stereo.m4a', 'tone-2s-48k-stereo.aac'],
    env: { MEDIAFLOW_PIPELINES_DIR: PIPELINES },
  });
  let fields: Record<string, string>;

  before(async () => {
    fields = {
      intro: op.files.url('/f/tone-1s-22k-mono.wav'),
      segments: `${op.files.url('/f/tone-2s-44k-stereo.mp3')}, ${op.files.url('/f/tone-1s-48k-stereo.m4a')}`,
      outro: op.files.url('/f/tone-2s-48k-stereo.aac'),
    };
  });

  it('runs from the CLI with URLs, converting to the format asked for', async () => {
    const out = path.join(op.scratch, 'cli');
    const inputs = Object.entries({ ...fields, format: 'ogg' }).flatMap(([key, value]) => [
      '--input',
      `${key}=${value}`,
    ]);
    const result = await runCli(['run', 'podcast', ...inputs, '--out-dir', out], {
      env: { MEDIAFLOW_PIPELINES_DIR: PIPELINES },
    });
    assert.equal(result.exitCode, 0, result.stderr);
    const body = JSON.parse(result.stdout) as { outputs: Record<string, string> };
    assert.deepEqual(body.outputs, { episode: path.join(out, 'episode.ogg') });
    assert.deepEqual(await readdir(out), ['episode.ogg']);
    const info = await probe(body.outputs.episode!);
    assert.equal(audioOf(info)?.codec_name, 'vorbis');
    assert.ok(Math.abs(durationOf(info) - 6) < 0.2, `duration ${durationOf(info)}`);
  });

  it('runs over HTTP (multipart form) and lists the pipelines with their inputs', async () => {
    const res = await op.server.post('/pipelines/podcast', fields);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const outputs = res.body.outputs as unknown as Record<string, string>;
    assert.match(outputs.episode!, new RegExp(`^${op.server.base}/uploads/[0-9a-f-]{36}/episode\\.mp3$`));
    const info = await probe(op.server.pathOf(outputs.episode!));
    assert.equal(audioOf(info)?.codec_name, 'mp3');
    assert.ok(Math.abs(durationOf(info) - 6) < 0.2, `duration ${durationOf(info)}`);
    assert.deepEqual(await op.server.workLeftovers(), []);

    const list = (await (await fetch(`${op.server.base}/pipelines`)).json()) as {
      pipelines: Array<{ name: string; path: string; inputs: Array<Record<string, unknown>>; results: string[] }>;
    };
    assert.deepEqual(
      list.pipelines.map((p) => p.name),
      [
        'audiogram',
        'auto-captions',
        'auto-captions-short',
        'captioned-short',
        'narrated-short',
        'podcast',
        'podcast-clip',
        'text-to-short',
      ],
    );
    // A description is whole: YAML reads an unquoted ` #` as the start of a comment (`as #RRGGBB` was lost so).
    const colour = list.pipelines
      .find((p) => p.name === 'auto-captions')!
      .inputs.find((i) => i.name === 'highlight_color');
    assert.equal(colour?.description, 'Colour of the word being said, as #RRGGBB');
    const podcast = list.pipelines.find((p) => p.name === 'podcast')!;
    assert.equal(podcast.path, '/pipelines/podcast/');
    assert.deepEqual(podcast.results, ['episode']);
    assert.deepEqual(
      podcast.inputs.map((i) => [i.name, i.type, i.required]),
      [
        ['intro', 'url', true],
        ['segments', 'urls', true],
        ['outro', 'url', true],
        ['format', 'string', false],
      ],
    );
    assert.equal(podcast.inputs[3]!.default, 'mp3');
    const one = (await (await fetch(`${op.server.base}/pipelines/podcast/`)).json()) as {
      name: string;
      steps: unknown;
    };
    assert.equal(one.name, 'podcast');
    assert.deepEqual(one.steps, [
      { name: 'body', op: 'merge-audios' },
      { name: 'episode', op: 'merge-audios' },
    ]);
  });

  it('answers the contract statuses, naming the failing step', async () => {
    let res = await op.server.post('/pipelines/podcast/', { ...fields, intro: '' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "Missing required input `intro` of pipeline 'podcast'");

    // An undeclared field is a typo to report, as on the CLI; a job's own fields (metadata) are not inputs.
    res = await op.server.post('/pipelines/podcast/', { ...fields, fromat: 'ogg', metadata: 'batch 7' });
    assert.equal(res.status, 400);
    assert.equal(
      res.body.error,
      "Unknown input `fromat` of pipeline 'podcast' (inputs: intro, segments, outro, format)",
    );

    // Checked before anything runs: the step's own validation, prefixed with the step.
    res = await op.server.post('/pipelines/podcast/', { ...fields, format: 'xyz' });
    assert.equal(res.status, 400);
    assert.equal(
      res.body.error,
      "Step 'episode' (merge-audios) failed: Unsupported format 'xyz'. Supported formats: mp3, wav, aac, m4a, " +
        'ogg, flac, opus.',
    );

    // Over HTTP an input is a URL, never a file of the server.
    res = await op.server.post('/pipelines/podcast/', { ...fields, outro: '/etc/hostname' });
    assert.equal(res.status, 400);
    // The answer names the path by its last name only: no answer carries a path of the server's disk.
    assert.match(res.body.error!, /^Step 'episode' \(merge-audios\) failed: Invalid URL 'hostname'/);

    const missing = op.files.url('/f/missing.mp3');
    res = await op.server.post('/pipelines/podcast/', { ...fields, segments: `${fields.intro},${missing}` });
    assert.equal(res.status, 502);
    assert.equal(
      res.body.error,
      `Step 'body' (merge-audios) failed: Failed to download ${missing}: HTTP 404 Not Found`,
    );

    res = await op.server.post('/pipelines/podcast/', {
      ...fields,
      segments: `${fields.intro},${op.files.url('/f/not-media.txt')}`,
    });
    assert.equal(res.status, 422);
    assert.match(res.body.error!, /^Step 'body' \(merge-audios\) failed: /);

    res = await op.server.post('/pipelines/nope/', fields);
    assert.equal(res.status, 404);
    assert.equal(res.body.error, "Unknown pipeline 'nope'");
    res = await op.server.post('/pipelines/..%2Fpipelines%2Fpodcast/', fields);
    assert.equal(res.status, 404);

    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it('refuses a broken definition with a 400 (CLI: exit 2) naming file, line, step and field', async () => {
    const dir = path.join(op.scratch, 'pipelines');
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir);
    await writeFile(path.join(dir, 'broken.yaml'), BROKEN);
    await copyFile(path.join(PIPELINES, 'podcast.yaml'), path.join(dir, 'podcast.yaml'));
    const expected =
      "broken.yaml:10: step 'convert', field 'with.formt': unknown parameter 'formt' of operation " +
      "'convert-video' (parameters: video_url, format, quality, fanout)";
    const other = await startMediaflow({ MEDIAFLOW_PIPELINES_DIR: dir, MEDIAFLOW_API_KEY: 'sesame' });
    try {
      const key = { headers: { 'x-api-key': 'sesame' } };
      let res = await other.post('/pipelines/broken/', { clip: 'https://example.com/a.mp4' }, key);
      assert.equal(res.status, 400);
      assert.equal(res.body.error, expected);
      assert.ok(!res.body.error!.includes(dir), 'no server path in the message');
      const list = (await (await fetch(`${other.base}/pipelines`, key)).json()) as {
        pipelines: Array<{ name: string; error?: string }>;
      };
      assert.deepEqual(list.pipelines, [{ name: 'broken', error: expected }, list.pipelines[1]]);
      assert.equal(list.pipelines[1]!.name, 'podcast');
      // The pipeline routes are behind the API key like the operations.
      res = await other.post('/pipelines/podcast/', fields);
      assert.equal(res.status, 401);
      assert.equal((await fetch(`${other.base}/pipelines`)).status, 401);
    } finally {
      await other.close();
    }

    const cli = await runCli(['run', path.join(dir, 'broken.yaml'), '--input', 'clip=a.mp4']);
    assert.equal(cli.exitCode, 2);
    assert.equal(cli.stderr.trim(), `mediaflow: ${path.join(dir, expected)}`);
  });
});
