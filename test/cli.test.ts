import assert from 'node:assert/strict';
import { createReadStream, existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { FIXTURE_DIR, fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { frameRgb, meanLuma, probe, videoOf } from './helpers/media.js';
import { runCli } from './helpers/mediaflow.js';
import { freePort, startServeProcess } from './helpers/serve-process.js';
import { builtinPlugins, builtinRegistry } from '../src/plugins/index.js';

const BIN = path.resolve(import.meta.dirname, '../bin/mediaflow.js');
const pkg = JSON.parse(await readFile(path.resolve(import.meta.dirname, '../package.json'), 'utf8')) as {
  version: string;
};

/** The CLI names of docs/architecture.md: the route without slashes, underscores as dashes. */
const dashed = (name: string) => name.replace(/^\/+|\/+$/g, '').replace(/_/g, '-');

/**
 * Whether ffmpeg-ffprobe-static (an optional dependency whose install downloads the binaries) is
 * present and would be found.
 */
function hasPackagedFfmpeg(): boolean {
  try {
    const exported = createRequire(import.meta.url)('ffmpeg-ffprobe-static') as { ffmpegPath?: string | null };
    return typeof exported.ffmpegPath === 'string' && existsSync(exported.ffmpegPath);
  } catch {
    return false;
  }
}

describe('cli', () => {
  let files: FileServer;
  let tmp: string;

  before(async () => {
    await fixtures('clip-2s-480x270-black.mp4', 'hello.srt', 'not-media.txt', 'small-300x200.png');
    files = await startFileServer({
      // Answers after a pause, so that the run's work folder can be looked at meanwhile.
      '/slow/small.png': async (_req, res) => {
        await sleep(1500);
        res.writeHead(200, { 'content-type': 'image/png' });
        createReadStream(await fixture('small-300x200.png')).pipe(res);
      },
    });
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-cli-test-'));
  });
  after(async () => {
    await files?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it("an operation's --help says what a list input takes, once", async () => {
    const { exitCode, stdout, stderr } = await runCli(['merge-audios', '--help']);
    assert.equal(exitCode, 0, stderr);
    const flag = stdout.slice(stdout.indexOf('--audio-urls'), stdout.indexOf('--format')).replace(/\s+/g, ' ');
    assert.match(
      flag,
      /^--audio-urls <value> Audio files, joined in this order \(URLs or local paths, comma-separated, at least 2\) \(required\) $/,
    );
  });

  it('--help lists serve and every operation by its CLI name', async () => {
    const { exitCode, stdout, stderr } = await runCli(['--help']);
    assert.equal(exitCode, 0, stderr);
    const commands = stdout.slice(stdout.indexOf('Commands:'));
    const names = [...commands.matchAll(/^ {2}([a-z][a-z-]*) /gm)].map((m) => m[1]);
    const expected = builtinRegistry()
      .list()
      .map((p) => dashed(p.path));
    assert.equal(expected.length, builtinPlugins.length);
    // Every operation and serve (other commands, such as pipeline ones, may come beside them).
    for (const name of ['serve', ...expected]) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    for (const name of [
      'merge-audios',
      'crop-image-to-short',
      'convert-image-from-url',
      'resize-image',
      'add-subtitles',
      'generate-subtitles',
      'change-speed',
    ]) {
      assert.ok(names.includes(name), name);
    }
  });

  it("an operation's --help shows each parameter as a flag, with its default", async () => {
    const registry = builtinRegistry();
    for (const operation of ['merge-audios', 'generate-subtitles', 'images-to-video', 'add-subtitles']) {
      const plugin = registry.list().find((p) => dashed(p.path) === operation)!;
      const { exitCode, stdout, stderr } = await runCli([operation, '--help']);
      assert.equal(exitCode, 0, stderr);
      // Help text wraps at 80 columns; compare with whitespace collapsed.
      const flat = stdout.replace(/\s+/g, ' ');
      const flags = [...Object.keys(plugin.params.properties).map((key) => `--${dashed(key)}`), '--out-dir'];
      // A flag takes `<value>`, or `[true|false]` for a boolean.
      const at = (flag: string, from = 0) => Math.max(flat.indexOf(`${flag} <`, from), flat.indexOf(`${flag} [`, from));
      for (const [index, flag] of flags.entries()) {
        const start = at(flag);
        assert.ok(start >= 0, `${operation} --help shows ${flag}: ${stdout}`);
        const next = flags[index + 1] ? at(flags[index + 1]!, start) : flat.length;
        const block = flat.slice(start, next);
        const schema = (plugin.params.properties as Record<string, { default?: unknown }>)[
          flag.slice(2).replace(/-/g, '_')
        ];
        const fallback = flag === '--out-dir' ? '.' : schema?.default;
        if (fallback !== undefined)
          assert.ok(block.includes(`(default: "${String(fallback)}")`), `${operation} ${flag}: ${block}`);
        else assert.ok(!block.includes('(default: "'), `${operation} ${flag} has no default: ${block}`);
      }
    }
    const merge = await runCli(['merge-audios', '--help']);
    assert.ok(merge.stdout.replace(/\s+/g, ' ').includes('(default: "mp3")'));
  });

  it("--version prints mediaflow's version and the ffmpeg and ffprobe in use", async () => {
    const { exitCode, stdout, stderr } = await runCli(['--version']);
    assert.equal(exitCode, 0, stderr);
    const lines = stdout.trimEnd().split('\n');
    assert.equal(lines[0], `mediaflow ${pkg.version}`);
    const ffmpeg = (await execa('ffmpeg', ['-version'])).stdout.split('\n')[0]!;
    const ffprobe = (await execa('ffprobe', ['-version'])).stdout.split('\n')[0]!;
    assert.ok(lines[1]!.startsWith(ffmpeg), lines[1]);
    assert.ok(lines[2]!.startsWith(ffprobe), lines[2]);
  });

  it('exits non-zero with the message on stderr and nothing on stdout; 2 for bad usage or parameters', async () => {
    const cases: Array<{ args: string[]; code: number; message: RegExp }> = [
      { args: ['no-such-operation'], code: 2, message: /unknown command 'no-such-operation'/ },
      { args: ['--no-such-flag'], code: 2, message: /unknown option '--no-such-flag'/ },
      { args: ['merge-audios', '--no-such-flag', 'x'], code: 2, message: /unknown option '--no-such-flag'/ },
      {
        args: ['generate-subtitles', '--text', 'hello', '--words-per-line', '0'],
        code: 2,
        message: /^mediaflow: .*`words_per_line`.*`0`/m,
      },
      {
        args: ['generate-subtitles', '--text', 'hello', '--seconds-per-line', 'abc'],
        code: 2,
        message: /`seconds_per_line`/,
      },
      { args: ['generate-subtitles', '--text', '   '], code: 2, message: /`text`/ },
      {
        args: [
          'add-subtitles',
          '--video-url',
          'clip-2s-480x270-black.mp4',
          '--subtitle-url',
          'hello.srt',
          '--format',
          'gif',
        ],
        code: 2,
        message: /Unsupported format 'gif'/,
      },
      {
        args: ['resize-image', '--image-url', path.join(tmp, 'does-not-exist.png'), '--width', '10', '--height', '10'],
        code: 2,
        message: /not found/,
      },
      // Input that is not an image: the tool's reason, exit 1.
      {
        args: ['resize-image', '--image-url', 'not-media.txt', '--width', '10', '--height', '10'],
        code: 1,
        message: /^mediaflow: Input .*(not readable|not an image)/m,
      },
      // A download that fails: exit 1, the URL named.
      {
        args: ['resize-image', '--image-url', files.url('/f/missing.png'), '--width', '10', '--height', '10'],
        code: 1,
        message: /Failed to download http:\/\/127\.0\.0\.1:\d+\/f\/missing\.png: HTTP 404/,
      },
    ];
    for (const { args, code, message } of cases) {
      const result = await runCli([...args, '--out-dir', tmp], { cwd: FIXTURE_DIR });
      assert.equal(result.exitCode, code, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stdout, '', `${args.join(' ')}: stdout stays empty`);
      assert.match(result.stderr, message);
      assert.ok(!/\n\s+at /.test(result.stderr), `no stack trace: ${result.stderr}`);
    }
    // Nothing was written for the failures.
    assert.deepEqual(await readdir(tmp), []);
  });

  it('takes local paths, relative to the working directory, and writes to --out-dir', async () => {
    const out = await mkdtemp(path.join(tmp, 'out-'));
    const { exitCode, stdout, stderr } = await runCli(
      [
        'add-subtitles',
        '--video-url',
        'clip-2s-480x270-black.mp4',
        '--subtitle-url',
        path.join(FIXTURE_DIR, 'hello.srt'),
        '--out-dir',
        out,
      ],
      { cwd: FIXTURE_DIR },
    );
    assert.equal(exitCode, 0, stderr);
    const body = JSON.parse(stdout) as Record<string, string>;
    assert.deepEqual(Object.keys(body).sort(), ['message', 'output_video']);
    assert.equal(body.message, 'Subtitles added successfully');
    assert.match(
      body.output_video!,
      new RegExp(`^${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[0-9a-f-]{36}/video_with_subtitles\\.mp4$`),
    );
    assert.equal(videoOf(await probe(body.output_video!))?.width, 480);
    const frame = await frameRgb(body.output_video!, 1);
    const source = await frameRgb(await fixture('clip-2s-480x270-black.mp4'), 1);
    assert.ok(meanLuma(frame, 100, 225, 280, 42) > meanLuma(source, 100, 225, 280, 42) + 4, 'subtitles burned in');

    // The default --out-dir is the working directory.
    const cwd = await mkdtemp(path.join(tmp, 'cwd-'));
    const generated = await runCli(
      ['generate-subtitles', '--text', 'Local run. Ça marche 🎉', '--words-per-line', '2'],
      { cwd },
    );
    assert.equal(generated.exitCode, 0, generated.stderr);
    const result = JSON.parse(generated.stdout) as Record<string, string>;
    assert.equal(result.message, 'Subtitle file generated successfully');
    assert.match(result.subtitle_file_url!, /^[0-9a-f-]{36}\/generated_subtitles\.srt$/);
    assert.equal(
      await readFile(path.join(cwd, result.subtitle_file_url!), 'utf8'),
      '1\n00:00:00,000 --> 00:00:03,000\nLocal run.\n\n2\n00:00:03,000 --> 00:00:06,000\nÇa marche\n\n3\n' +
        '00:00:06,000 --> 00:00:09,000\n🎉\n',
    );
  });

  it("-o/--output names the result file; its extension must be the result's; a pipeline refuses it", async () => {
    const dir = await mkdtemp(path.join(tmp, 'output-'));
    const file = path.join(dir, 'new', 'folder', 'subs.srt');
    let result = await runCli(['generate-subtitles', '--text', 'Named file.', '-o', file]);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), {
      message: 'Subtitle file generated successfully',
      subtitle_file_url: file,
    });
    assert.equal(await readFile(file, 'utf8'), '1\n00:00:00,000 --> 00:00:03,000\nNamed file.\n');
    // An existing file is replaced; nothing else is written beside it.
    result = await runCli(['generate-subtitles', '--text', 'Again.', '--output', file]);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(await readFile(file, 'utf8'), /Again\./);
    assert.deepEqual(await readdir(path.dirname(file)), ['subs.srt']);

    const resized = path.join(dir, 'small.jpg');
    result = await runCli(
      ['resize-image', '--image-url', 'small-300x200.png', '--width', '30', '--height', '20', '-o', resized],
      { cwd: FIXTURE_DIR },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(videoOf(await probe(resized))?.width, 30);

    result = await runCli(
      [
        'convert-video',
        '--video-url',
        'clip-2s-480x270-black.mp4',
        '--format',
        'webm',
        '-o',
        path.join(dir, 'clip.mp4'),
      ],
      { cwd: FIXTURE_DIR },
    );
    assert.equal(result.exitCode, 2);
    assert.match(
      result.stderr,
      /^mediaflow: Expected `--output` to end in \.webm, the kind of file convert-video makes here, got `.*clip\.mp4` \(--format chooses another\)$/m,
    );
    result = await runCli(['run', 'podcast', '-o', path.join(dir, 'episode.mp3')]);
    assert.equal(result.exitCode, 2);
    assert.match(result.stderr, /`--output` names one file, but a pipeline names its results itself .*use --out-dir/);
    assert.deepEqual((await readdir(dir)).sort(), ['new', 'small.jpg']);
  });

  it('a bad --out-dir exits 2 saying why, before anything runs', async () => {
    const dir = await mkdtemp(path.join(tmp, 'bad-out-'));
    const aFile = path.join(dir, 'a-file');
    await writeFile(aFile, 'not a folder');
    const cases: Array<[string, RegExp]> = [
      [aFile, /^mediaflow: Cannot write to --out-dir .*a-file: it is a file, not a folder$/m],
      [
        path.join(aFile, 'below'),
        /^mediaflow: Cannot write to --out-dir .*a-file\/below: a part of the path is a file, not a folder$/m,
      ],
    ];
    // Permissions do not stop root, so the read-only folder is only tried as another user.
    if (process.getuid?.() !== 0) {
      const readOnly = path.join(dir, 'read-only');
      await mkdir(readOnly);
      await chmod(readOnly, 0o500);
      cases.push([readOnly, /^mediaflow: Cannot write to --out-dir .*read-only: permission denied$/m]);
    }
    for (const [outDir, message] of cases) {
      for (const args of [
        ['generate-subtitles', '--text', 'hi'],
        ['run', 'podcast', '--input', 'intro=a.wav', '--input', 'segments=b.wav,c.wav', '--input', 'outro=d.wav'],
      ]) {
        const result = await runCli([...args, '--out-dir', outDir], {
          env: { MEDIAFLOW_PIPELINES_DIR: path.resolve(import.meta.dirname, '../pipelines') },
        });
        assert.equal(result.exitCode, 2, `${args[0]} ${outDir}: ${result.stderr}`);
        assert.match(result.stderr, message);
        assert.doesNotMatch(result.stderr, /EEXIST|ENOTDIR|EACCES/);
      }
    }
  });

  it('a refused loopback URL suggests --allow-private-urls', async () => {
    const url = files.url('/f/small-300x200.png');
    const result = await runCli(
      ['resize-image', '--image-url', url, '--width', '10', '--height', '10', '--out-dir', tmp],
      { env: { MEDIAFLOW_ALLOW_PRIVATE_URLS: '0' } },
    );
    assert.equal(result.exitCode, 2, result.stderr);
    assert.match(
      result.stderr,
      /^mediaflow: URL 'http:\/\/127\.0\.0\.1:\d+\/f\/small-300x200\.png' is not allowed: it resolves to a loopback address \(127\.0\.0\.1\)$/m,
    );
    assert.match(
      result.stderr,
      /^mediaflow: Hint: add --allow-private-urls \(or set MEDIAFLOW_ALLOW_PRIVATE_URLS=1\)/m,
    );
    assert.equal(files.hits.get('/f/small-300x200.png'), undefined, 'refused before any request');
    // Other refusals get no such hint.
    const other = await runCli([
      'resize-image',
      '--image-url',
      'ftp://127.0.0.1/x.png',
      '--width',
      '10',
      '--height',
      '10',
      '--out-dir',
      tmp,
    ]);
    assert.equal(other.exitCode, 2);
    assert.doesNotMatch(other.stderr, /Hint/);
  });

  it('a boolean parameter is a bare flag, with its negation; `--flag false` still works', async () => {
    const plugin = path.resolve(import.meta.dirname, 'fixtures/plugins/shout.js');
    const dir = await mkdtemp(path.join(tmp, 'shout-'));
    const cases: Array<[string[], string]> = [
      [['--upper'], 'HI THERE'],
      [['--no-upper'], 'hi there'],
      [['--upper', 'false'], 'hi there'],
      [['--upper', 'true'], 'HI THERE'],
      [[], 'hi there'],
    ];
    for (const [flags, expected] of cases) {
      const file = path.join(dir, 'shout.txt');
      const result = await runCli(['shout', '--plugin', plugin, '--text', 'hi there', ...flags, '-o', file]);
      assert.equal(result.exitCode, 0, `${flags.join(' ')}: ${result.stderr}`);
      assert.equal(await readFile(file, 'utf8'), expected, flags.join(' '));
    }
    const help = await runCli(['shout', '--plugin', plugin, '--help']);
    assert.match(help.stdout, /^ {2}--upper \[true\|false\] +Upper-case the text/m);
    assert.match(help.stdout, /^ {2}--no-upper /m);
    const bad = await runCli(['shout', '--plugin', plugin, '--text', 'x', '--upper', 'maybe', '--out-dir', dir]);
    assert.equal(bad.exitCode, 2);
    assert.match(bad.stderr, /Expected `upper` to be true or false, got `maybe`/);
  });

  it("a parameter whose name holds a digit or several words gets its CLI flag's value", async () => {
    // Commander stores `--line-2` under `line2`; the value was read back from `line_2` and silently dropped.
    const plugin = path.resolve(import.meta.dirname, 'fixtures/plugins/two-lines.js');
    const file = path.join(await mkdtemp(path.join(tmp, 'two-lines-')), 'lines.txt');
    const flags = ['--first-line-text', 'one', '--line-2', 'two', '-o', file];
    const result = await runCli(['two-lines', '--plugin', plugin, ...flags]);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(await readFile(file, 'utf8'), 'one\ntwo\n');
  });

  it('keeps its work under MEDIAFLOW_DATA_DIR, and clears what a killed run left there', async () => {
    const dataDir = await mkdtemp(path.join(tmp, 'data-dir-'));
    // A run killed with -9 leaves its work folder (pid-<pid>); no process can have this pid (above Linux's pid_max).
    const leftover = path.join(dataDir, 'work', 'pid-4194305', 'some-job');
    await mkdir(leftover, { recursive: true });
    await writeFile(path.join(leftover, 'in0.png'), 'half a download');
    const out = path.join(tmp, 'data-dir-out');
    const child = execa(
      'node',
      [
        BIN,
        'resize-image',
        '--image-url',
        files.url('/slow/small.png'),
        '--width',
        '10',
        '--height',
        '10',
        '--out-dir',
        out,
      ],
      {
        reject: false,
        env: { MEDIAFLOW_ALLOW_PRIVATE_URLS: '1', MEDIAFLOW_DATA_DIR: dataDir },
      },
    );
    // While the download waits, the job's folder is in this run's own work folder under the data directory.
    let seen: string[] = [];
    for (let tries = 0; seen.length === 0 && tries < 100; tries++) {
      await sleep(50);
      const mine = (await readdir(path.join(dataDir, 'work')).catch(() => [] as string[])).filter(
        (name) => name === `pid-${child.pid}`,
      );
      if (mine.length > 0) seen = await readdir(path.join(dataDir, 'work', mine[0]!));
    }
    assert.equal(seen.length, 1, 'a job folder under <data dir>/work/pid-<pid>');
    const result = await child;
    assert.equal(result.exitCode, 0, String(result.stderr));
    assert.deepEqual(
      await readdir(path.join(dataDir, 'work')),
      [],
      "the killed run's folder is gone, and so is this run's",
    );
    assert.ok((await stat(path.join(dataDir, 'cache'))).isDirectory(), 'downloads are cached under the data directory');
  });

  it('serve starts on the given port and data directory, works, and exits 0 on SIGTERM', async () => {
    const dataDir = await mkdtemp(path.join(tmp, 'data-'));
    const serve = await startServeProcess(dataDir);
    try {
      const health = (await (await fetch(`${serve.base}/health`)).json()) as { status: string };
      assert.equal(health.status, 'ok');
      const form = new FormData();
      form.append('text', 'served by the CLI');
      const res = await fetch(`${serve.base}/generate-subtitles/`, { method: 'POST', body: form });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { subtitle_file_url: string };
      assert.ok(body.subtitle_file_url.startsWith(`${serve.base}/uploads/`), body.subtitle_file_url);
      const relative = body.subtitle_file_url.slice(`${serve.base}/uploads/`.length);
      const expected = '1\n00:00:00,000 --> 00:00:03,000\nserved by the CLI\n';
      assert.equal(await readFile(path.join(dataDir, 'uploads', relative), 'utf8'), expected);
      assert.equal(await (await fetch(body.subtitle_file_url)).text(), expected);
    } finally {
      serve.child.kill('SIGTERM');
    }
    const result = await serve.child;
    assert.equal(result.signal, undefined, `exited by itself, not killed: ${serve.output()}`);
    assert.equal(result.exitCode, 0, serve.output());
  });

  it('serve and --version without any ffmpeg exit non-zero saying how to install one', async (context) => {
    if (hasPackagedFfmpeg()) {
      // The packaged pair would be found whatever PATH says; nothing to check on this machine.
      (context as { skip?: (why: string) => void }).skip?.('ffmpeg-ffprobe-static is installed');
      return;
    }
    const emptyPath = await mkdtemp(path.join(tmp, 'no-bin-'));
    const env = { PATH: emptyPath, FFMPEG_PATH: '/nonexistent/ffmpeg', MEDIAFLOW_ALLOW_PRIVATE_URLS: '1' };
    const port = await freePort();
    const dataDir = await mkdtemp(path.join(tmp, 'data-'));
    // Node by its absolute path: PATH holds nothing at all.
    const serve = await execa(process.execPath, [BIN, 'serve', '--port', String(port), '--data-dir', dataDir], {
      env,
      reject: false,
      timeout: 30_000,
    });
    assert.equal(serve.timedOut, false, 'exits at start instead of serving');
    assert.notEqual(serve.exitCode, 0);
    assert.match(serve.stderr, /No ffmpeg binary found/);
    assert.match(serve.stderr, /apt-get install ffmpeg/);
    assert.match(serve.stderr, /FFMPEG_PATH/);
    assert.equal(serve.stdout, '');

    const version = await execa(process.execPath, [BIN, '--version'], { env, reject: false, timeout: 30_000 });
    assert.notEqual(version.exitCode, 0);
    assert.match(version.stderr, /No ffmpeg binary found.*Install ffmpeg/s);
  });
});
