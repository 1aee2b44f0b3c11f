import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { fixture, fixtures } from '../helpers/fixtures.js';
import { startFileServer, type FileServer } from '../helpers/file-server.js';
import { audioOf, durationOf, probe } from '../helpers/media.js';
import { runCli } from '../helpers/mediaflow.js';

const PIPELINES = path.resolve(import.meta.dirname, '../../pipelines');
const BIN = path.resolve(import.meta.dirname, '../../bin/mediaflow.js');
const env = { MEDIAFLOW_PIPELINES_DIR: PIPELINES };

interface Line {
  row: number;
  status: 'done' | 'failed';
  outputs: Record<string, string>;
  error: string | null;
  timings: { ms: number; steps: Record<string, number> };
}

/** The results file's lines, each of which must be a whole JSON record. */
async function resultLines(file: string): Promise<Line[]> {
  const text = await readFile(file, 'utf8');
  assert.ok(text === '' || text.endsWith('\n'), 'the file ends with a whole line');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);
}

const csvField = (value: string) => `"${value.replace(/"/g, '""')}"`;

/** A pipeline without ffmpeg (generate-subtitles writes its file itself), so that 50 rows take a second. */
const SUBS = `name: subs
inputs:
  text: string
  pace:
    type: number
    default: 1.5
steps:
  srt:
    op: generate-subtitles
    with:
      text: "{{ inputs.text }} at {{ inputs.pace }}"
results:
  subtitles: "{{ steps.srt.output }}"
`;

describe('pipeline batches', () => {
  let files: FileServer;
  let work: string;
  const u = (name: string) => files.url(`/f/${name}`);

  before(async () => {
    await fixtures(
      'tone-1s-22k-mono.wav',
      'tone-2s-44k-stereo.mp3',
      'tone-3s-44k-stereo.mp3',
      'tone-1s-48k-stereo.m4a',
      'tone-2s-48k-stereo.aac',
    );
    files = await startFileServer({
      // Answers after a pause, so a batch is surely still running when the test interrupts it.
      '/slow/intro.wav': async (_req, res) => {
        await sleep(1000);
        res.writeHead(200, { 'content-type': 'audio/wav' });
        createReadStream(await fixture('tone-1s-22k-mono.wav')).pipe(res);
      },
    });
    work = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-batch-'));
  });
  after(async () => {
    await files?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('records a failed row and goes on; a rerun retries only that row; fixed, the batch completes', async () => {
    const dir = path.join(work, 'csv');
    const out = path.join(dir, 'out');
    const rowsFile = path.join(dir, 'episodes.csv');
    const rows = (bad: string) =>
      [
        'intro,segments,outro,format',
        [
          u('tone-1s-22k-mono.wav'),
          csvField(`${u('tone-2s-44k-stereo.mp3')},${u('tone-1s-48k-stereo.m4a')}`),
          u('tone-2s-48k-stereo.aac'),
          'mp3',
        ].join(','),
        [
          u('tone-1s-22k-mono.wav'),
          csvField(`${u('tone-1s-48k-stereo.m4a')},${bad}`),
          u('tone-2s-48k-stereo.aac'),
          'ogg',
        ].join(','),
        [
          u('tone-1s-22k-mono.wav'),
          csvField(`${u('tone-3s-44k-stereo.mp3')}, ${u('tone-1s-48k-stereo.m4a')}`),
          u('tone-2s-48k-stereo.aac'),
          '',
        ].join(','),
      ].join('\r\n') + '\r\n';
    await mkdir(dir, { recursive: true });
    await writeFile(rowsFile, rows(u('missing.mp3')));
    const results = path.join(out, 'episodes.results.jsonl');

    const first = await runCli(['run', 'podcast', '--batch', rowsFile, '--out-dir', out], { env });
    assert.equal(first.exitCode, 1, first.stderr);
    const summary = JSON.parse(first.stdout) as Record<string, unknown>;
    assert.deepEqual(
      {
        rows: summary.rows,
        done: summary.done,
        failed: summary.failed,
        skipped: summary.skipped,
        interrupted: summary.interrupted,
        resultsFile: summary.resultsFile,
      },
      { rows: 3, done: 2, failed: 1, skipped: 0, interrupted: false, resultsFile: results },
    );
    const failure = `Step 'body' (merge-audios) failed: Failed to download ${u('missing.mp3')}: HTTP 404 Not Found`;
    assert.deepEqual(summary.failures, [{ row: 2, error: failure }]);
    // Plain log lines off a terminal: each row as it ends, with the counts; then the summary.
    assert.match(first.stderr, /^podcast: 3 rows, 0 already done, 3 to run$/m);
    assert.match(
      first.stderr,
      /^podcast: row 2 failed: Step 'body' .* \[\d\/3 done, \d failed, \d running, [^\]]+\]$/m,
    );
    assert.match(first.stderr, /^podcast: row 1 done in \S+ \[/m);
    assert.match(first.stderr, /^podcast: 3 rows: 2 done, 1 failed in /m);
    assert.ok(first.stderr.includes(`  row 2: ${failure}`));

    let lines = await resultLines(results);
    assert.deepEqual(lines.map((l) => [l.row, l.status]).sort(), [
      [1, 'done'],
      [2, 'failed'],
      [3, 'done'],
    ]);
    const byRow = new Map(lines.map((l) => [l.row, l]));
    assert.equal(byRow.get(2)!.error, failure);
    assert.deepEqual(byRow.get(1)!.outputs, { episode: path.join(out, 'row-1', 'episode.mp3') });
    assert.deepEqual(Object.keys(byRow.get(1)!.timings.steps).sort(), ['body', 'episode']);
    const episode1 = await probe(byRow.get(1)!.outputs.episode!);
    assert.ok(Math.abs(durationOf(episode1) - 6) < 0.2, `row 1 lasts ${durationOf(episode1)}`);
    const episode3 = await probe(byRow.get(3)!.outputs.episode!);
    assert.equal(audioOf(episode3)?.codec_name, 'mp3', 'an empty cell takes the default');
    assert.ok(Math.abs(durationOf(episode3) - 7) < 0.2, `row 3 lasts ${durationOf(episode3)}`);
    const row1Written = (await stat(byRow.get(1)!.outputs.episode!)).mtimeMs;

    // The same command again: rows 1 and 3 are skipped, row 2 alone is retried (and fails again).
    const fetched = (name: string) => files.hits.get(`/f/${name}`) ?? 0;
    const before = {
      missing: fetched('missing.mp3'),
      row1: fetched('tone-2s-44k-stereo.mp3'),
      row3: fetched('tone-3s-44k-stereo.mp3'),
    };
    const second = await runCli(['run', 'podcast', '--batch', rowsFile, '--out-dir', out], { env });
    assert.equal(second.exitCode, 1, second.stderr);
    assert.match(second.stderr, /^podcast: 3 rows, 2 already done, 1 to run$/m);
    assert.match(second.stderr, /^podcast: 3 rows: 2 done \(2 by an earlier run\), 1 failed in /m);
    assert.deepEqual(
      {
        missing: fetched('missing.mp3'),
        row1: fetched('tone-2s-44k-stereo.mp3'),
        row3: fetched('tone-3s-44k-stereo.mp3'),
      },
      { ...before, missing: before.missing + 1 },
    );
    assert.equal((await stat(byRow.get(1)!.outputs.episode!)).mtimeMs, row1Written);
    lines = await resultLines(results);
    assert.deepEqual(
      lines.map((l) => [l.row, l.status]).sort(),
      [
        [1, 'done'],
        [2, 'failed'],
        [3, 'done'],
      ],
      'one line per row',
    );

    // Row 2 fixed: it alone runs, and the batch ends well.
    await writeFile(rowsFile, rows(u('tone-2s-48k-stereo.aac')));
    const third = await runCli(['run', 'podcast', '--batch', rowsFile, '--out-dir', out], { env });
    assert.equal(third.exitCode, 0, third.stderr);
    assert.match(third.stderr, /^podcast: 3 rows, 2 already done, 1 to run$/m);
    lines = await resultLines(results);
    assert.deepEqual(lines.map((l) => [l.row, l.status]).sort(), [
      [1, 'done'],
      [2, 'done'],
      [3, 'done'],
    ]);
    const episode2 = await probe(path.join(out, 'row-2', 'episode.ogg'));
    assert.equal(audioOf(episode2)?.codec_name, 'vorbis');
    assert.ok(Math.abs(durationOf(episode2) - 6) < 0.2, `row 2 lasts ${durationOf(episode2)}`);
  });

  it(
    'resumes by key: a row inserted at the top of 50 runs alone, reordered rows run nothing, a failed row keeps ' +
      'no old file',
    async () => {
      const dir = path.join(work, 'keys');
      const out = path.join(dir, 'out');
      const pipeline = path.join(dir, 'subs.yaml');
      const rowsFile = path.join(dir, 'rows.csv');
      await mkdir(dir, { recursive: true });
      await writeFile(pipeline, SUBS);
      const texts = Array.from({ length: 50 }, (_, i) => `Row ${i + 1}`);
      const write = (rows: string[]) => writeFile(rowsFile, `text,pace\n${rows.join('\n')}\n`);
      const run = () => runCli(['run', pipeline, '--batch', rowsFile, '--out-dir', out]);
      const fileOf = (row: number) => path.join(out, `row-${row}`, 'subtitles.srt');
      /** Each row's subtitle text, by row folder. */
      const contents = async (count: number) =>
        Promise.all(
          Array.from({ length: count }, async (_, i) => (await readFile(fileOf(i + 1), 'utf8')).split('\n')[2]),
        );

      await write(texts.map((text) => `${text},`));
      const first = await run();
      assert.equal(first.exitCode, 0, first.stderr);
      assert.deepEqual(
        await contents(50),
        texts.map((text) => `${text} at 1.5`),
        'a number input, its default',
      );
      const inodes = new Map(
        await Promise.all(texts.map(async (text, i) => [text, (await stat(fileOf(i + 1))).ino] as const)),
      );

      // A row inserted at the top: it alone runs; the other 50 keep their files (the same ones),
      // moved to their new numbers.
      await write(['New row,2.25', ...texts.map((text) => `${text},`)]);
      const second = await run();
      assert.equal(second.exitCode, 0, second.stderr);
      assert.match(second.stderr, /^subs: 51 rows, 50 already done, 1 to run$/m);
      assert.deepEqual(await contents(51), ['New row at 2.25', ...texts.map((text) => `${text} at 1.5`)]);
      for (const [i, text] of texts.entries())
        assert.equal((await stat(fileOf(i + 2))).ino, inodes.get(text), `${text} was not run again`);
      let lines = await resultLines(path.join(out, 'rows.results.jsonl'));
      assert.equal(lines.length, 51);
      for (const line of lines) assert.deepEqual(line.outputs, { subtitles: fileOf(line.row) });

      // Reordered: nothing runs, and each row's folder holds its own file.
      const reversed = ['New row,2.25', ...texts.map((text) => `${text},`)].reverse();
      await write(reversed);
      const third = await run();
      assert.equal(third.exitCode, 0, third.stderr);
      assert.match(third.stderr, /^subs: 51 rows, 51 already done, 0 to run$/m);
      assert.deepEqual(await contents(51), [...texts.map((text) => `${text} at 1.5`).reverse(), 'New row at 2.25']);
      assert.deepEqual(
        (await readdir(out)).filter((name) => !name.startsWith('row-')),
        ['rows.results.jsonl'],
        'no staging folder left',
      );

      // The top row now fails (not a number): its folder no longer holds the old result.
      await write(['Row 50,fast', ...reversed.slice(1)]);
      const fourth = await run();
      assert.equal(fourth.exitCode, 1, fourth.stderr);
      assert.match(fourth.stderr, /row 1: Expected input `pace` to be a number, got `fast`/);
      assert.equal(
        await stat(path.join(out, 'row-1')).catch(() => undefined),
        undefined,
        'the failed row has no folder',
      );
      lines = await resultLines(path.join(out, 'rows.results.jsonl'));
      assert.deepEqual(
        lines.filter((line) => line.status === 'failed').map((line) => line.row),
        [1],
      );
    },
  );

  it(
    'resolves relative paths against the batch file; a changed row replaces its old files; --dry-run --batch ' +
      'checks every row',
    async () => {
      const dir = path.join(work, 'relative');
      const out = path.join(dir, 'out');
      await mkdir(path.join(dir, 'media'), { recursive: true });
      for (const name of ['tone-1s-22k-mono.wav', 'tone-1s-48k-stereo.m4a', 'tone-2s-48k-stereo.aac'])
        await copyFile(await fixture(name), path.join(dir, 'media', name));
      const rowsFile = path.join(dir, 'rows.csv');
      const row = (format: string, segment = 'media/tone-1s-48k-stereo.m4a') =>
        `media/tone-1s-22k-mono.wav,"media/tone-1s-48k-stereo.m4a,${segment}",media/tone-2s-48k-stereo.aac,${format}`;
      const hits = () => files.hits.get('/f/tone-3s-44k-stereo.mp3') ?? 0;

      // A dry run of good and bad rows: every row checked, nothing fetched, run or written; exit 2 naming the bad rows.
      await writeFile(
        rowsFile,
        [
          'intro,segments,outro,format',
          row('mp3'),
          row('mp3', 'media/missing.wav'),
          row('xyz'),
          row('mp3', u('tone-3s-44k-stereo.mp3')),
        ].join('\n'),
      );
      const before = hits();
      const dry = await runCli(['run', 'podcast', '--batch', rowsFile, '--out-dir', out, '--dry-run'], {
        env,
        cwd: work,
      });
      assert.equal(dry.exitCode, 2, dry.stderr);
      assert.match(dry.stdout, /^Pipeline podcast, 4 rows: 2 to run, 0 done by an earlier run, 2 invalid$/m);
      assert.match(dry.stdout, /^Row 1 \(line 2\): runs$/m);
      assert.ok(
        dry.stdout.includes(
          `  segments = ${path.join(dir, 'media', 'tone-1s-48k-stereo.m4a')}, ` +
            `${path.join(dir, 'media', 'tone-1s-48k-stereo.m4a')}\n`,
        ),
        dry.stdout,
      );
      assert.ok(dry.stdout.includes(`  writes ${path.join(out, 'row-1', 'episode.mp3')}\n`), dry.stdout);
      assert.ok(
        dry.stdout.includes(
          `Row 2 (line 3): invalid: Step 'body' (merge-audios) failed: Input file not found or not ` +
            `readable: ${path.join(dir, 'media', 'missing.wav')}`,
        ),
        dry.stdout,
      );
      assert.match(dry.stderr, /^mediaflow: 2 of 4 rows are invalid:$/m);
      assert.match(
        dry.stderr,
        /^ {2}row 3 \(line 4\): Step 'episode' \(merge-audios\) failed: Unsupported format 'xyz'/m,
      );
      assert.match(dry.stdout, /^Row 4 \(line 5\): runs$/m);
      assert.equal(hits(), before, 'nothing downloaded');
      assert.equal(await stat(out).catch(() => undefined), undefined, 'nothing written');

      // Run from another working directory: the paths are the batch file's.
      await writeFile(rowsFile, ['intro,segments,outro,format', row('mp3')].join('\n'));
      const first = await runCli(['run', 'podcast', '--batch', rowsFile, '--out-dir', out], { env, cwd: work });
      assert.equal(first.exitCode, 0, first.stderr);
      assert.ok(Math.abs(durationOf(await probe(path.join(out, 'row-1', 'episode.mp3'))) - 5) < 0.2);
      const again = await runCli(['run', 'podcast', '--batch', rowsFile, '--out-dir', out, '--dry-run'], {
        env,
        cwd: work,
      });
      assert.equal(again.exitCode, 0, again.stderr);
      assert.match(again.stdout, /^Row 1 \(line 2\): done by an earlier run, skipped$/m);

      // The row changed: its new result replaces the old one, which is gone.
      await writeFile(rowsFile, ['intro,segments,outro,format', row('ogg')].join('\n'));
      const second = await runCli(['run', 'podcast', '--batch', rowsFile, '--out-dir', out], { env, cwd: work });
      assert.equal(second.exitCode, 0, second.stderr);
      assert.deepEqual(await readdir(path.join(out, 'row-1')), ['episode.ogg']);
      assert.equal(audioOf(await probe(path.join(out, 'row-1', 'episode.ogg')))?.codec_name, 'vorbis');
    },
  );

  it('reads JSONL rows, with --input values shared by every row', async () => {
    const dir = path.join(work, 'jsonl');
    const rowsFile = path.join(dir, 'rows.jsonl');
    await mkdir(dir, { recursive: true });
    const segments = [await fixture('tone-2s-44k-stereo.mp3'), await fixture('tone-1s-48k-stereo.m4a')];
    await writeFile(
      rowsFile,
      `${JSON.stringify({ segments, format: 'flac' })}\n` +
        `\n${JSON.stringify({ segments: segments.join(','), format: 'wav' })}\n`,
    );
    const result = await runCli(
      [
        'run',
        'podcast',
        '--batch',
        rowsFile,
        '--out-dir',
        path.join(dir, 'out'),
        '--input',
        `intro=${await fixture('tone-1s-22k-mono.wav')}`,
        '--input',
        `outro=${await fixture('tone-2s-48k-stereo.aac')}`,
      ],
      { env },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { done: number }).done, 2);
    assert.equal(audioOf(await probe(path.join(dir, 'out', 'row-1', 'episode.flac')))?.codec_name, 'flac');
    assert.equal(audioOf(await probe(path.join(dir, 'out', 'row-2', 'episode.wav')))?.codec_name, 'pcm_s16le');
  });

  it('refuses a batch file it cannot read, or one without a required column, before running any row', async () => {
    const dir = path.join(work, 'bad');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'rows.csv'), 'intro,segments\n"a.wav,b.wav\n');
    let result = await runCli(['run', 'podcast', '--batch', path.join(dir, 'rows.csv'), '--out-dir', dir], { env });
    assert.equal(result.exitCode, 2);
    assert.match(result.stderr, /rows\.csv:2: a quoted field is never closed/);
    await writeFile(path.join(dir, 'rows.csv'), 'intro,segments\na.wav,"b.wav,c.wav"\n');
    result = await runCli(['run', 'podcast', '--batch', path.join(dir, 'rows.csv'), '--out-dir', dir], { env });
    assert.equal(result.exitCode, 2);
    assert.match(result.stderr, /no column 'outro', a required input of pipeline 'podcast'/);
  });

  it('stops cleanly on Ctrl-C, leaving whole lines, and a rerun completes the rest', async () => {
    const dir = path.join(work, 'sigint');
    const out = path.join(dir, 'out');
    const rowsFile = path.join(dir, 'rows.csv');
    await mkdir(dir, { recursive: true });
    const rows = ['intro,segments,outro'];
    for (let i = 0; i < 4; i++)
      rows.push(
        [
          files.url('/slow/intro.wav'),
          csvField(`${u('tone-1s-48k-stereo.m4a')},${u('tone-1s-22k-mono.wav')}`),
          u('tone-1s-48k-stereo.m4a'),
        ].join(','),
      );
    await writeFile(rowsFile, `${rows.join('\n')}\n`);
    const results = path.join(out, 'rows.results.jsonl');
    const args = [BIN, 'run', 'podcast', '--batch', rowsFile, '--out-dir', out, '--concurrency', '1'];

    const child = execa('node', args, { reject: false, env: { MEDIAFLOW_ALLOW_PRIVATE_URLS: '1', ...env } });
    // Interrupt once the first row has been recorded.
    for (let tries = 0; ; tries++) {
      const text = await readFile(results, 'utf8').catch(() => '');
      if (text.includes('\n')) break;
      assert.ok(tries < 600, 'the first row ends');
      await sleep(50);
    }
    child.kill('SIGINT');
    const stopped = await child;
    assert.equal(stopped.exitCode, 130, String(stopped.stderr));
    assert.match(String(stopped.stderr), /Interrupted: run the same command again to continue\./);
    const lines = await resultLines(results);
    const doneBefore = lines.filter((l) => l.status === 'done').length;
    assert.ok(doneBefore >= 1 && doneBefore < 4, `${doneBefore} rows done before the interrupt`);
    assert.equal(lines.length, doneBefore, 'an interrupted row is not recorded as failed');

    const rerun = await runCli(args.slice(1), { env });
    assert.equal(rerun.exitCode, 0, rerun.stderr);
    assert.ok(
      rerun.stderr.includes(`podcast: 4 rows, ${doneBefore} already done, ${4 - doneBefore} to run`),
      rerun.stderr,
    );
    const all = await resultLines(results);
    assert.deepEqual(all.map((l) => [l.row, l.status]).sort(), [
      [1, 'done'],
      [2, 'done'],
      [3, 'done'],
      [4, 'done'],
    ]);
    for (const line of all) assert.ok(Math.abs(durationOf(await probe(line.outputs.episode!)) - 4) < 0.2);
  });
});
