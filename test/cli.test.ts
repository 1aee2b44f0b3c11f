import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { FIXTURE_DIR, fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { frameRgb, meanLuma, probe, videoOf } from './helpers/media.js';
import { runCli } from './helpers/mediaflow.js';
import { freePort, startServeProcess } from './helpers/serve-process.js';
import { builtinRegistry } from '../src/plugins/index.js';

const BIN = path.resolve(import.meta.dirname, '../bin/mediaflow.js');
const pkg = JSON.parse(await readFile(path.resolve(import.meta.dirname, '../package.json'), 'utf8')) as { version: string };

/** CONTRACT.md's CLI names: the route without slashes, underscores as dashes. */
const dashed = (name: string) => name.replace(/^\/+|\/+$/g, '').replace(/_/g, '-');

/** Whether ffmpeg-ffprobe-static (an optional dependency whose install downloads the binaries) is present and would be found. */
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
    files = await startFileServer();
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-cli-test-'));
  });
  after(async () => {
    await files?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('--help lists serve and every operation by its CLI name', async () => {
    const { exitCode, stdout, stderr } = await runCli(['--help']);
    assert.equal(exitCode, 0, stderr);
    const commands = stdout.slice(stdout.indexOf('Commands:'));
    const names = [...commands.matchAll(/^ {2}([a-z][a-z-]*) /gm)].map((m) => m[1]);
    const expected = builtinRegistry()
      .list()
      .map((p) => dashed(p.path));
    assert.equal(expected.length, 10);
    // Every operation and serve (other commands, such as pipeline ones, may come beside them).
    for (const name of ['serve', ...expected]) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    for (const name of ['merge-audios', 'crop-image-to-short', 'convert-image-from-url', 'resize-image', 'add-subtitles', 'generate-subtitles']) {
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
      for (const [index, flag] of flags.entries()) {
        const start = flat.indexOf(`${flag} <`);
        assert.ok(start >= 0, `${operation} --help shows ${flag}: ${stdout}`);
        const next = flags[index + 1] ? flat.indexOf(`${flags[index + 1]} <`, start) : flat.length;
        const block = flat.slice(start, next);
        const schema = (plugin.params.properties as Record<string, { default?: unknown }>)[flag.slice(2).replace(/-/g, '_')];
        const fallback = flag === '--out-dir' ? '.' : schema?.default;
        if (fallback !== undefined) assert.ok(block.includes(`(default: "${String(fallback)}")`), `${operation} ${flag}: ${block}`);
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
      { args: ['generate-subtitles', '--text', 'hello', '--words-per-line', '0'], code: 2, message: /^mediaflow: .*`words_per_line`.*`0`/m },
      { args: ['generate-subtitles', '--text', 'hello', '--seconds-per-line', 'abc'], code: 2, message: /`seconds_per_line`/ },
      { args: ['generate-subtitles', '--text', '   '], code: 2, message: /`text`/ },
      { args: ['add-subtitles', '--video-url', 'clip-2s-480x270-black.mp4', '--subtitle-url', 'hello.srt', '--format', 'gif'], code: 2, message: /Unsupported format 'gif'/ },
      { args: ['resize-image', '--image-url', path.join(tmp, 'does-not-exist.png'), '--width', '10', '--height', '10'], code: 2, message: /not found/ },
      // Input that is not an image: the tool's reason, exit 1.
      { args: ['resize-image', '--image-url', 'not-media.txt', '--width', '10', '--height', '10'], code: 1, message: /^mediaflow: Input .*(not readable|not an image)/m },
      // A download that fails: exit 1, the URL named.
      { args: ['resize-image', '--image-url', files.url('/f/missing.png'), '--width', '10', '--height', '10'], code: 1, message: /Failed to download http:\/\/127\.0\.0\.1:\d+\/f\/missing\.png: HTTP 404/ },
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
      ['add-subtitles', '--video-url', 'clip-2s-480x270-black.mp4', '--subtitle-url', path.join(FIXTURE_DIR, 'hello.srt'), '--out-dir', out],
      { cwd: FIXTURE_DIR },
    );
    assert.equal(exitCode, 0, stderr);
    const body = JSON.parse(stdout) as Record<string, string>;
    assert.deepEqual(Object.keys(body).sort(), ['message', 'output_video']);
    assert.equal(body.message, 'Subtitles added successfully');
    assert.match(body.output_video!, new RegExp(`^${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[0-9a-f-]{36}/video_with_subtitles\\.mp4$`));
    assert.equal(videoOf(await probe(body.output_video!))?.width, 480);
    const frame = await frameRgb(body.output_video!, 1);
    const source = await frameRgb(await fixture('clip-2s-480x270-black.mp4'), 1);
    assert.ok(meanLuma(frame, 100, 225, 280, 42) > meanLuma(source, 100, 225, 280, 42) + 4, 'subtitles burned in');

    // The default --out-dir is the working directory.
    const cwd = await mkdtemp(path.join(tmp, 'cwd-'));
    const generated = await runCli(['generate-subtitles', '--text', 'Local run. Ça marche 🎉', '--words-per-line', '2'], { cwd });
    assert.equal(generated.exitCode, 0, generated.stderr);
    const result = JSON.parse(generated.stdout) as Record<string, string>;
    assert.equal(result.message, 'Subtitle file generated successfully');
    assert.match(result.subtitle_file_url!, /^[0-9a-f-]{36}\/generated_subtitles\.srt$/);
    assert.equal(
      await readFile(path.join(cwd, result.subtitle_file_url!), 'utf8'),
      '1\n00:00:00,000 --> 00:00:03,000\nLocal run.\n\n2\n00:00:03,000 --> 00:00:06,000\nÇa marche\n\n3\n00:00:06,000 --> 00:00:09,000\n🎉\n',
    );
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
    const serve = await execa(process.execPath, [BIN, 'serve', '--port', String(port), '--data-dir', dataDir], { env, reject: false, timeout: 30_000 });
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
