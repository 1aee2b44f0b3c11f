/**
 * Shared checks and crafted files of the hostile-input suite. Every hostile request is checked the
 * same way: its status, its exact `{error}` text (and nothing else in the body, no server path),
 * that the server still answers /health, and that no work file was left behind.
 */
import assert from 'node:assert/strict';
import { readdir, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { FIXTURE_DIR } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/mediaflow.js';
import { ERRORS, isErrorCode, type ErrorCode } from '../../src/engine/errors.js';

export interface Refusal {
  status: number;
  /** The exact text, or a pattern where the text is not fully determined. */
  error: string | RegExp;
  /** The registry code; by default any code of `status`. */
  code?: ErrorCode;
}

/** A body's `code` is the expected one, or else a code of the registry with the expected status. */
export function assertCode(code: unknown, expected: { status: number; code?: ErrorCode }): void {
  assert.ok(isErrorCode(code), `a registry code: ${String(code)}`);
  if (expected.code) assert.equal(code, expected.code);
  else assert.equal(ERRORS[code].status, expected.status, `${code} answers ${expected.status}`);
}

/** What the server adds to the text of a refused address: the setting that allows it. */
export const ALLOW_PRIVATE_HINT = '; MEDIAFLOW_ALLOW_PRIVATE_URLS=1 allows loopback, private and link-local addresses';

/** Regex-escapes a literal. */
export const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Fails when a message shows where the server keeps its files. */
export function assertNoServerPaths(text: string, server: TestServer): void {
  for (const secret of [server.dataDir, FIXTURE_DIR, process.cwd(), `${os.tmpdir()}${path.sep}`]) {
    assert.ok(!text.includes(secret), `message shows a server path (${secret}): ${text}`);
  }
  assert.doesNotMatch(text, /@ 0x[0-9a-f]+/, `message shows a memory address: ${text}`);
}

/**
 * Waits until a freshly started server answers /health with 200. Startup (module loading in the
 * same process) can stall the event loop long enough for the load guard to answer 503 for a moment;
 * the hostile cases must not be judged during that moment.
 */
export async function ready(...servers: TestServer[]): Promise<void> {
  for (const server of servers) {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const res = await fetch(`${server.base}/health`);
      await res.arrayBuffer();
      if (res.status === 200) break;
      if (Date.now() > deadline) throw new Error(`${server.base} never became ready (last status ${res.status})`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** The server answers /health with 200 and its work directory is empty. */
export async function assertStillServing(server: TestServer): Promise<void> {
  const health = await fetch(`${server.base}/health`);
  assert.equal(health.status, 200);
  assert.equal(((await health.json()) as { status?: string }).status, 'ok');
  assert.deepEqual(await server.workLeftovers(), [], 'files left in the work directory');
}

/** Sends a hostile request and checks status, error text, health and leftovers. */
export async function expectRefused(
  server: TestServer,
  route: string,
  fields: Record<string, string>,
  expected: Refusal,
): Promise<void> {
  const res = await server.post(route, fields);
  assert.equal(
    res.status,
    expected.status,
    `${route} ${JSON.stringify(fields).slice(0, 200)} → ${res.status} ${JSON.stringify(res.body)}`,
  );
  assert.deepEqual(Object.keys(res.body), ['error', 'code'], `body is only {error, code}: ${JSON.stringify(res.body)}`);
  assertCode(res.body.code, expected);
  const error = res.body.error!;
  if (typeof expected.error === 'string') assert.equal(error, expected.error);
  else assert.match(error, expected.error);
  assertNoServerPaths(error, server);
  await assertStillServing(server);
}

/** Every file under a directory (recursively), for "did anything get written" checks. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name));
}

/** Fails when any file under `dir` contains `secret`. */
export async function assertNoFileContains(dir: string, secret: string): Promise<void> {
  for (const file of await filesUnder(dir)) {
    if ((await stat(file)).size > 64 * 1024 * 1024) continue;
    assert.ok(!(await readFile(file)).includes(secret), `${file} contains the secret`);
  }
}

// --- crafted pictures: headers that declare a size, with valid checksums, and almost no data ---

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/**
 * A PNG whose IHDR declares `width`x`height` (8-bit RGB), every chunk CRC valid, with a small
 * zlib stream of zero rows: a decompression bomb of a few hundred bytes.
 */
export function pngBomb(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  const rows = deflateSync(Buffer.alloc((1 + Math.min(width, 65536) * 3) * 4));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', rows),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A baseline JPEG header (SOI, a quantisation table, SOF0 declaring the size) with no picture data. */
export function jpegBomb(width: number, height: number): Buffer {
  const dqt = Buffer.concat([Buffer.from([0xff, 0xdb, 0x00, 0x43, 0x00]), Buffer.alloc(64, 1)]);
  const sof = Buffer.from([
    0xff,
    0xc0,
    0x00,
    0x0b,
    0x08,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    0x01,
    0x01,
    0x11,
    0x00,
  ]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), dqt, sof, Buffer.from([0xff, 0xd9])]);
}

/** A GIF's header: a logical screen of `width`x`height` and a global colour table of black and white. */
function gifHeader(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.write('GIF89a', 0, 'latin1');
  header.writeUInt16LE(width, 6);
  header.writeUInt16LE(height, 8);
  header[10] = 0x80; // global colour table of 2 entries
  return Buffer.concat([header, Buffer.from([0, 0, 0, 255, 255, 255])]);
}

/** A GIF whose logical screen is `width`x`height`, with one 1x1 image. */
export function gifBomb(width: number, height: number): Buffer {
  const image = Buffer.from([0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b]);
  return Buffer.concat([gifHeader(width, height), image]);
}

/**
 * A GIF whose logical screen is `width`x`height`, with `frames` 1x1 images a hundredth of a second each: a few bytes
 * a frame, every one of which decodes to the whole canvas.
 */
export function animatedGif(width: number, height: number, frames: number): Buffer {
  // A graphic control extension (delay 1/100 s), then a 1x1 image of colour 1.
  const frame = Buffer.from([
    ...[0x21, 0xf9, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00],
    ...[0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0x02, 0x02, 0x44, 0x01, 0x00],
  ]);
  return Buffer.concat([gifHeader(width, height), ...Array.from({ length: frames }, () => frame), Buffer.from([0x3b])]);
}

/** An ASS script of 640x360 whose events are `lines`, each a Dialogue's text shown from `start` to `end`. */
export function assScript(lines: Array<{ start: string; end: string; text: string }>): string {
  return [
    '[Script Info]',
    'ScriptType: v4.00+',
    'PlayResX: 640',
    'PlayResY: 360',
    '',
    '[V4+ Styles]',
    'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, ' +
      'Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, ' +
      'MarginR, MarginV, Encoding',
    'Style: Default,DejaVu Sans,36,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2,0,2,10,10,10,1',
    '',
    '[Events]',
    'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
    ...lines.map(({ start, end, text }) => `Dialogue: 0,${start},${end},Default,,0,0,0,,${text}`),
    '',
  ].join('\n');
}
