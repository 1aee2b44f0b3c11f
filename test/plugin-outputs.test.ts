import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { before, describe, it } from './helpers/lifecycle.js';
import { fixture } from './helpers/fixtures.js';
import { submitJob, waitForJob } from './helpers/jobs.js';
import { durationOf, probe } from './helpers/media.js';
import { runCli } from './helpers/mediaflow.js';
import { useOperation } from './helpers/operation.js';
import { loadRegistry } from '../src/plugins/index.js';
import { answersProblem, outputProblem } from '../src/engine/plugins/plugin-check.js';
import { Type } from '../src/engine/contract/plugin.js';

/**
 * The contract's several outputs, answers and stages (docs/plugins.md), through third-party plugins
 * (test/fixtures/plugins/levels.js and slices.js) on the real server, the CLI and a pipeline.
 */
const PLUGINS = ['levels', 'slices'].map((name) => path.resolve(import.meta.dirname, `fixtures/plugins/${name}.js`));
const env = { MEDIAFLOW_PLUGINS: PLUGINS.join(',') };

/** The loudest sample of a file, in dBFS, as ffmpeg's volumedetect measures it. */
async function maxVolume(file: string): Promise<number> {
  const { stderr } = await execa('ffmpeg', ['-hide_banner', '-i', file, '-af', 'volumedetect', '-f', 'null', '-']);
  return Number(/max_volume: (-?[\d.]+) dB/.exec(stderr)![1]);
}

describe('plugin outputs: several files, none, answers and stages', () => {
  const op = useOperation({
    fixtures: ['tone-3s-44k-stereo.mp3'],
    registry: () => loadRegistry({ env, configFile: false }),
  });
  let tone: string;
  before(async () => {
    tone = await fixture('tone-3s-44k-stereo.mp3');
  });

  it('runs a second stage made from the first one’s log, and answers what it measured', async () => {
    const before = await maxVolume(tone);
    const { status, body } = await op.server.post('/levels/', { media_url: op.files.url('/f/tone-3s-44k-stereo.mp3') });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.message, 'Levels done');
    assert.equal(body.max_volume, before);
    assert.equal(body.gain, Math.round((-1 - before) * 10) / 10);
    // The second stage applied the gain its figures called for: the peak is now -1 dB.
    assert.ok(Math.abs((await maxVolume(op.server.pathOf(body.output_file!))) + 1) <= 0.2);
    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it('answers output_files and output_file for several files, each written', async () => {
    const { status, body } = await op.server.post('/slices/', { media_url: op.files.url('/f/tone-3s-44k-stereo.mp3') });
    assert.equal(status, 200, JSON.stringify(body));
    const urls = body.output_files as unknown as string[];
    assert.equal(urls.length, 3);
    assert.equal(body.output_file, urls[0]);
    urls.forEach((url, i) => assert.match(url, new RegExp(`/uploads/[0-9a-f-]{36}/slice_${i + 1}\\.wav$`)));
    for (const url of urls) assert.ok(Math.abs(durationOf(await probe(op.server.pathOf(url))) - 1) < 0.05, url);
  });

  it('answers only the fields of an operation that writes no file, and publishes nothing', async () => {
    const published = await readdir(path.join(op.server.dataDir, 'uploads')).catch(() => []);
    const { status, body } = await op.server.post('/slices/', {
      media_url: op.files.url('/f/tone-3s-44k-stereo.mp3'),
      slices: '0',
    });
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(Object.keys(body).sort(), ['duration', 'message']);
    assert.ok(Math.abs(Number(body.duration) - 3) < 0.1);
    assert.deepEqual(await readdir(path.join(op.server.dataDir, 'uploads')).catch(() => []), published);
  });

  it('gives an asynchronous job the same answer as the synchronous body', async () => {
    const id = await submitJob(
      op.server.base,
      '/slices/',
      {
        media_url: op.files.url('/f/tone-3s-44k-stereo.mp3'),
        slices: '2',
      },
      { prefer: 'respond-async' },
    );
    const job = await waitForJob(op.server.base, id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    const result = job.result as { output_file: string; output_files: string[] };
    assert.equal(result.output_files.length, 2);
    assert.equal(result.output_file, result.output_files[0]);
    const peak = await submitJob(
      op.server.base,
      '/levels/',
      { media_url: op.files.url('/f/tone-3s-44k-stereo.mp3') },
      {
        prefer: 'respond-async',
      },
    );
    const measured = await waitForJob(op.server.base, peak);
    assert.equal((measured.result as { max_volume: number }).max_volume, await maxVolume(tone));
  });

  it('fails a plugin whose stages never end, or that answers a field it did not declare, with a 500', async () => {
    const circle = await op.server.post('/levels/', {
      media_url: op.files.url('/f/tone-3s-44k-stereo.mp3'),
      mode: 'circle',
    });
    assert.equal(circle.status, 500);
    assert.equal(circle.body.error, "Plugin 'levels' failed: next() chained more than 8 stages");
    const undeclared = await op.server.post('/levels/', {
      media_url: op.files.url('/f/tone-3s-44k-stereo.mp3'),
      mode: 'undeclared',
    });
    assert.equal(undeclared.status, 500);
    assert.match(undeclared.body.error!, /^Plugin 'levels' failed: build\(\) returned a plan answering 'loudness'/);
    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it('documents the answers and several files in the OpenAPI document', async () => {
    const document = (await (await fetch(`${op.server.base}/openapi.json`)).json()) as {
      paths: Record<string, { post: { responses: { '200': { content: Record<string, { schema: unknown }> } } } }>;
    };
    const answer = (route: string) => JSON.stringify(document.paths[route]!.post.responses['200']);
    for (const name of ['output_file', 'max_volume', 'gain']) assert.ok(answer('/levels/').includes(`"${name}"`), name);
    for (const name of ['output_file', 'output_files', 'duration'])
      assert.ok(answer('/slices/').includes(`"${name}"`), name);
  });

  it('prints the files and answers from the CLI, and refuses --output for several files', async () => {
    const out = path.join(op.scratch, 'cli');
    const sliced = await runCli(['slices', '--media-url', tone, '--slices', '2', '--out-dir', out], {
      env,
    });
    assert.equal(sliced.exitCode, 0, sliced.stderr);
    const printed = JSON.parse(sliced.stdout) as { output_file: string; output_files: string[] };
    assert.equal(printed.output_files.length, 2);
    for (const file of printed.output_files) assert.ok(file.startsWith(out), file);
    assert.ok(Math.abs(durationOf(await probe(printed.output_file)) - 1.5) < 0.05);

    const measured = await runCli(['levels', '--media-url', tone, '--out-dir', out], { env });
    assert.equal(measured.exitCode, 0, measured.stderr);
    assert.equal((JSON.parse(measured.stdout) as { max_volume: number }).max_volume, await maxVolume(tone));

    const one = await runCli(['slices', '--media-url', tone, '--output', 'x.wav'], {
      env,
      cwd: op.scratch,
    });
    assert.equal(one.exitCode, 2, one.stderr);
    assert.match(one.stderr, /`--output` names one file, and slices writes 3 here: use `--out-dir`/);
  });

  it('makes a several-file step a list that a later step runs `each` over, and reports step answers', async () => {
    const pipeline = path.join(op.scratch, 'slices.yaml');
    await writeFile(
      pipeline,
      [
        'name: slices',
        'inputs:',
        '  audio: { type: url }',
        'steps:',
        '  slice:',
        '    op: slices',
        '    with: { media_url: "{{ inputs.audio }}", slices: 2 }',
        '  raise:',
        '    op: levels',
        '    each: "{{ steps.slice.output }}"',
        '    with: { media_url: "{{ item }}" }',
        'results:',
        '  raised: "{{ steps.raise.output }}"',
        '',
      ].join('\n'),
    );
    const out = path.join(op.scratch, 'pipeline');
    const run = await runCli(['run', pipeline, '--input', `audio=${tone}`, '--out-dir', out], {
      env,
    });
    assert.equal(run.exitCode, 0, run.stderr);
    const printed = JSON.parse(run.stdout) as { outputs: { raised: string[] }; answers: { raise: unknown[] } };
    assert.equal(printed.outputs.raised.length, 2);
    assert.equal(printed.answers.raise.length, 2);
    for (const file of printed.outputs.raised) assert.ok(Math.abs((await maxVolume(file)) + 1) <= 0.2, file);
  });

  it('refuses output paths and answer names that would clash at registration', () => {
    assert.match(outputProblem({ files: ['{id}/a.wav', '{id}/a.wav'] })!, /same path twice/);
    assert.match(outputProblem({ files: ['../{id}.wav'] })!, /stays under uploads/);
    assert.equal(outputProblem({ files: [] }), undefined);
    assert.match(outputProblem({ field: 'output_files', path: '{id}.wav' })!, /other than message/);
    // Files alongside one output: each a field of its own and a path of the job's.
    const single = { field: 'output_file', path: '{id}/a.wav' };
    assert.equal(outputProblem({ ...single, alongside: [{ field: 'captions_url', path: '{id}/a.srt' }] }), undefined);
    assert.match(
      outputProblem({ ...single, alongside: [{ field: 'output_file', path: '{id}/a.srt' }] })!,
      /of its own/,
    );
    assert.match(outputProblem({ ...single, alongside: [{ field: 'x', path: '{id}/a.wav' }] })!, /twice/);
    assert.match(outputProblem({ ...single, alongside: [{ field: 'x', path: 'a.srt' }] })!, /must contain \{id\}/);
    assert.match(outputProblem({ ...single, alongside: {} })!, /not a list of \{ field, path \}/);
    assert.match(answersProblem(Type.Object({ output_file: Type.String() }))!, /mediaflow answers itself/);
    assert.match(answersProblem(Type.Object({ Loud: Type.Number() }))!, /not a snake_case/);
    assert.equal(answersProblem(Type.Object({ loudness: Type.Number() })), undefined);
  });
});
