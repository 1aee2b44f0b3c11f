/**
 * What a plugin's tests need, using mediaflow only as a user has it: its `mediaflow` command (from
 * the installed package) and its public entry. Media are made with ffmpeg's own test sources, and
 * served from 127.0.0.1, so nothing is downloaded from outside.
 */
import { execFile, spawn } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { resolveBinaries } from 'mediaflow';

const exec = promisify(execFile);
const require = createRequire(import.meta.url);

/** The `mediaflow` command of the installed package. */
const manifest = require('mediaflow/package.json') as { bin: { mediaflow: string } };
const BIN = path.join(path.dirname(require.resolve('mediaflow/package.json')), manifest.bin.mediaflow);

/** The environment every run gets: this plugin loaded as a user loads it, and inputs on 127.0.0.1 allowed. */
export const PLUGIN_ENV = { MEDIAFLOW_PLUGINS: 'mediaflow-plugin-thumbnail', MEDIAFLOW_ALLOW_PRIVATE_URLS: '1' };

/** Runs `mediaflow <args>` and returns its exit code and output (it does not throw on failure). */
export async function mediaflow(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  try {
    const { stdout, stderr } = await exec(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? process.cwd(),
      env: { ...process.env, ...PLUGIN_ENV, ...options.env },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? '',
    };
  }
}

/** A free loopback port. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** `mediaflow serve` as a child process, once /health answers. */
export async function serve(dataDir: string, env: Record<string, string> = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port), '--data-dir', dataDir], {
    env: { ...process.env, ...PLUGIN_ENV, MEDIAFLOW_LOG_LEVEL: 'warn', MEDIAFLOW_MAX_EVENT_LOOP_DELAY: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const base = `http://127.0.0.1:${port}`;
  for (const started = Date.now(); ;) {
    if (child.exitCode !== null) throw new Error(`mediaflow serve exited: ${output}`);
    if (
      await fetch(`${base}/health`).then(
        (res) => res.ok,
        () => false,
      )
    )
      break;
    if (Date.now() - started > 30_000) {
      child.kill('SIGKILL');
      throw new Error(`mediaflow serve did not start: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    base,
    /** POSTs fields as multipart/form-data, as mediaflow's clients do. */
    post: async (route: string, fields: Record<string, string>) => {
      const form = new FormData();
      for (const [key, value] of Object.entries(fields)) form.append(key, value);
      const res = await fetch(`${base}${route}`, { method: 'POST', body: form });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Serves the files of a folder on 127.0.0.1: `url(name)` is a file's URL. */
export async function fileServer(dir: string) {
  const server = http.createServer((req, res) => {
    const file = path.join(dir, path.basename(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)));
    if (!existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'video/mp4' });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name: string) => `http://127.0.0.1:${port}/${name}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

const binaries = () => resolveBinaries();

/** A 3 s 320x240 video: red for the first second, green for the second, blue for the third. */
export async function makeVideo(file: string): Promise<void> {
  const colour = (c: string, label: string) => `color=c=${c}:s=320x240:r=25:d=1,format=yuv420p[${label}]`;
  await exec(binaries().ffmpeg, [
    ...['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i'],
    `${colour('red', 'a')};${colour('0x00ff00', 'b')};${colour('blue', 'c')};[a][b][c]concat=n=3:v=1:a=0`,
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', file],
  ]);
}

/** A picture's width and height. */
export async function sizeOf(file: string): Promise<{ width: number; height: number }> {
  const { stdout } = await exec(binaries().ffprobe, [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=width,height',
    '-of',
    'json',
    file,
  ]);
  const [stream] = (JSON.parse(stdout) as { streams: Array<{ width: number; height: number }> }).streams;
  return stream!;
}

/** The colour at the centre of a picture, as [r, g, b]. */
export async function centreRgb(file: string): Promise<number[]> {
  const { stdout } = await exec(
    binaries().ffmpeg,
    [
      '-v',
      'error',
      '-i',
      file,
      '-vf',
      'format=rgb24,crop=1:1:iw/2:ih/2',
      '-frames:v',
      '1',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-',
    ],
    {
      encoding: 'buffer',
    },
  );
  return [...stdout.subarray(0, 3)];
}

/** Which of red, green and blue a colour mostly is. */
export function dominant([r = 0, g = 0, b = 0]: number[]): 'red' | 'green' | 'blue' {
  return r > g && r > b ? 'red' : g > b ? 'green' : 'blue';
}
