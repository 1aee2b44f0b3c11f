import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { fixture, fixtures } from './helpers/fixtures.js';
import { startFileServer, type FileServer } from './helpers/file-server.js';
import { assertNearRgb, audioOf, durationOf, frameRgb, probe, videoOf, type Rgb } from './helpers/media.js';
import { runCli, runCliOnTerminal, startMediaflow, type TestServer } from './helpers/mediaflow.js';

/**
 * The templates mediaflow ships (templates/), each rendered for real with its merge values by a real server (a JSON
 * body, a form with merge values as fields and files as parts named after merge fields), and looked at: sizes,
 * lengths, the colours at known places and times. Then GET /templates/ and `mediaflow templates`, which list them,
 * and `mediaflow render` at a terminal: local paths as `src`, its progress on the status line.
 */

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Frame = Awaited<ReturnType<typeof frameRgb>>;

const API_KEY = 'templates-test-key';
const KEYED = { 'x-api-key': API_KEY };

/** Pixels of a box near a colour (each channel within `tolerance`), every other row and column. */
function pixelsNear(frame: Frame, colour: Rgb, [x0, y0, w, h]: [number, number, number, number], tolerance = 60) {
  let count = 0;
  for (let y = y0; y < y0 + h; y += 2)
    for (let x = x0; x < x0 + w; x += 2)
      if (frame.pixel(x, y).every((channel, i) => Math.abs(channel - colour[i]!) < tolerance)) count++;
  return count;
}

const WHITE: Rgb = [255, 255, 255];
const GOLD: Rgb = [255, 215, 0];

let files: FileServer;
let server: TestServer;
let work: string;
const url = (name: string) => files.url(`/f/${name}`);

/** narrated-short's merge values: a red, a green and a blue picture, a script of two sentences, 2 s of music. */
const narrated = () => ({
  PHOTO_1: url('red-640x360.jpg'),
  PHOTO_2: url('green-360x640.png'),
  PHOTO_3: url('blue-640x480.webp'),
  SCRIPT: 'Hello there. This is a short.',
  MUSIC_URL: url('tone-2s-44k-stereo.mp3'),
});

async function render(at: { base: string }, body: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${at.base}/render/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...KEYED },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

/** The rendered file of an answer of `by`, probed, with the frame at a time. */
async function rendered(answer: Json, by: { base: string; pathOf: (url: string) => string } = server) {
  assert.equal(answer.message, 'Video rendered successfully');
  assert.match(answer.output_file, new RegExp(`^${by.base}/uploads/[0-9a-f-]{36}/render\\.mp4$`));
  const file = by.pathOf(answer.output_file);
  return { info: await probe(file), at: (seconds: number) => frameRgb(file, seconds) };
}

before(async () => {
  await fixtures('red-640x360.jpg', 'green-360x640.png', 'blue-640x480.webp', 'tone-5s-44k-stereo.mp3');
  await fixtures('tone-2s-44k-stereo.mp3', 'tone-3s-44k-stereo.mp3', 'hello.srt');
  files = await startFileServer();
  work = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-templates-'));
  // The shipped templates (no MEDIAFLOW_TEMPLATES), behind a key.
  server = await startMediaflow({ MEDIAFLOW_API_KEY: API_KEY });
});

after(async () => {
  await server?.close();
  await files?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the shipped templates, rendered', () => {
  it('quote-card: the quote, its mark and its author on the background, with no media at all', async () => {
    const res = await render(server, {
      template: 'quote-card',
      merge: { QUOTE: 'Simplicity is prerequisite for reliability.', AUTHOR: 'Dijkstra', DURATION: '1' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.duration, 1);
    const { info, at } = await rendered(res.body);
    assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height], [1080, 1080]);
    assert.ok(Math.abs(durationOf(info) - 1) < 0.05, String(durationOf(info)));
    assert.equal(audioOf(info), undefined, 'nothing sounds: no sound track');
    const frame = await at(0.5);
    // The default background (#1E293B) in the corners; the quote in white across the middle; the mark above it and
    // the author under it in the default accent (#F59E0B).
    assertNearRgb(frame.pixel(20, 20), [0x1e, 0x29, 0x3b], 12, 'the background');
    assertNearRgb(frame.pixel(1060, 1060), [0x1e, 0x29, 0x3b], 12, 'the background');
    const accent: Rgb = [0xf5, 0x9e, 0x0b];
    assert.ok(pixelsNear(frame, WHITE, [100, 400, 880, 280]) > 1000, 'the quote in the middle');
    assert.equal(pixelsNear(frame, WHITE, [0, 0, 1080, 330]), 0, 'nothing white above it');
    assert.ok(pixelsNear(frame, accent, [340, 20, 400, 310]) > 500, 'the quotation mark above it');
    assert.ok(pixelsNear(frame, accent, [200, 820, 680, 200]) > 300, 'the author under it');
  });

  it('audiogram: from a form, merge values as fields and files as parts named after merge fields', async () => {
    const form = new FormData();
    form.append('template', 'audiogram');
    form.append('TITLE', 'Episode 12');
    form.append('AUDIO_URL', url('tone-3s-44k-stereo.mp3'));
    form.append('START', '1');
    form.append('DURATION', '2');
    form.append('WAVE_COLOR', '#00FF00');
    const part = async (name: string, type: string) => new Blob([await readFile(await fixture(name))], { type });
    form.append('COVER_URL', await part('red-640x360.jpg', 'image/jpeg'), 'cover.jpg');
    form.append('CAPTIONS_URL', await part('hello.srt', 'application/x-subrip'), 'captions.srt');
    const res = await fetch(`${server.base}/render/`, { method: 'POST', headers: KEYED, body: form });
    const body = (await res.json()) as Json;
    assert.equal(res.status, 200, JSON.stringify(body));
    const { info, at } = await rendered(body);
    assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height], [1080, 1920]);
    assert.ok(Math.abs(durationOf(info) - 2) < 0.05, String(durationOf(info)));
    assert.ok(Math.abs(Number(audioOf(info)!.duration) - 2) < 0.05, 'the sound: 2 s of the tone, from 1 s');
    const frame = await at(1);
    assertNearRgb(frame.pixel(20, 20), [0x0f, 0x17, 0x2a], 12, 'the default background');
    // The cover (red, 640x360) 78% of the width wide in the middle: 842x474 around (540, 960).
    assertNearRgb(frame.pixel(540, 960), [255, 0, 0], 40, 'the cover in the middle');
    assertNearRgb(frame.pixel(540, 740), [255, 0, 0], 40, 'the cover, near its top');
    assertNearRgb(frame.pixel(540, 680), [0x0f, 0x17, 0x2a], 12, 'the background above the cover');
    assert.ok(pixelsNear(frame, WHITE, [60, 150, 960, 250]) > 500, 'the title above the cover');
    assert.ok(pixelsNear(frame, WHITE, [60, 1400, 960, 250]) > 500, "the captions' cue under the cover");
    assert.ok(pixelsNear(frame, [0, 255, 0], [0, 1690, 1080, 230]) > 300, 'the waveform along the bottom, green');
    assert.equal(pixelsNear(frame, [0, 255, 0], [0, 0, 1080, 1600]), 0, 'and nowhere else');
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('narrated-short: pictures in turn, the title, the script spoken with captions of it, and music', async () => {
    const res = await render(server, {
      template: 'narrated-short',
      merge: { ...narrated(), TITLE: 'Hello there', DURATION: '4', PHOTO_SECONDS: '1.5' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { info, at } = await rendered(res.body);
    assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height, videoOf(info)!.r_frame_rate], [1080, 1920, '30/1']);
    assert.ok(Math.abs(durationOf(info) - 4) < 0.05, String(durationOf(info)));
    assert.ok(Math.abs(Number(audioOf(info)!.duration) - 4) < 0.05, 'the voice and the music, to DURATION');
    // The pictures: the first two 1.5 s each, crossing over 0.5 s; the third from 2 s to the end.
    const colours: Array<[number, Rgb]> = [
      [0.5, [255, 0, 0]],
      [1.7, [0, 255, 0]],
      [3.5, [0, 0, 255]],
    ];
    const frames = new Map<number, Frame>();
    for (const [seconds, colour] of colours) {
      const frame = await at(seconds);
      frames.set(seconds, frame);
      assertNearRgb(frame.pixel(60, 1800), colour, 40, `the picture at ${seconds} s`);
    }
    // The title at the top for its first 3 s.
    assert.ok(pixelsNear(frames.get(0.5)!, WHITE, [60, 200, 960, 250]) > 500, 'the title at 0.5 s');
    assert.equal(pixelsNear(frames.get(3.5)!, WHITE, [60, 200, 960, 250]), 0, 'no title at 3.5 s');
    // The server's default voice says the script from 0.3 s: "Hello" is lit first, the words after it white.
    const spoken = await at(0.5);
    assert.ok(pixelsNear(spoken, GOLD, [60, 760, 960, 400], 50) > 300, 'the word said, lit, in the middle');
    assert.ok(pixelsNear(spoken, WHITE, [60, 760, 960, 400]) > 300, 'the words around it, white');
    assert.equal(pixelsNear(frames.get(3.5)!, GOLD, [60, 760, 960, 400], 50), 0, 'nothing lit once it is said');
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('narrated-short with a VOICE not installed: a 400 at the voice clip, before anything is fetched', async () => {
    const seen = [...files.hits.values()].reduce((sum, count) => sum + count, 0);
    const res = await render(server, { template: 'narrated-short', merge: { ...narrated(), VOICE: 'espeak:en-uss' } });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.errors.map((problem: Json) => problem.path),
      ['tracks[3].clips[0].voice'],
    );
    assert.match(res.body.error, /unknown voice 'espeak:en-uss': did you mean espeak:en-us\?/);
    assert.equal(
      [...files.hits.values()].reduce((sum, count) => sum + count, 0),
      seen,
      'nothing fetched',
    );
  });
});

describe('GET /templates/ and mediaflow templates', () => {
  it('lists the shipped templates with their merge fields, kinds and defaults, behind the key', async () => {
    const refused = await fetch(`${server.base}/templates/`);
    assert.equal(refused.status, 401);
    const res = await fetch(`${server.base}/templates/`, { headers: KEYED });
    assert.equal(res.status, 200);
    const { templates } = (await res.json()) as { templates: Json[] };
    assert.deepEqual(
      templates.map((template) => template.name),
      ['audiogram', 'narrated-short', 'quote-card'],
    );
    const byName = new Map(templates.map((template) => [template.name, template]));
    assert.match(byName.get('narrated-short')!.description, /the SCRIPT spoken by the server/);
    // Those a request must give first; URLs without defaults.
    assert.deepEqual(byName.get('quote-card')!.merge, [
      { name: 'QUOTE', kind: 'text' },
      { name: 'AUTHOR', kind: 'text' },
      { name: 'DURATION', kind: 'number', default: '6' },
      { name: 'BACKGROUND', kind: 'text', default: '#1E293B' },
      { name: 'ACCENT', kind: 'text', default: '#F59E0B' },
    ]);
    assert.deepEqual(byName.get('narrated-short')!.merge, [
      { name: 'PHOTO_1', kind: 'url' },
      { name: 'PHOTO_2', kind: 'url' },
      { name: 'PHOTO_3', kind: 'url' },
      { name: 'SCRIPT', kind: 'text' },
      { name: 'MUSIC_URL', kind: 'url' },
      { name: 'DURATION', kind: 'number', default: '15' },
      { name: 'PHOTO_SECONDS', kind: 'number', default: '5' },
      { name: 'TITLE', kind: 'text', default: 'A short story' },
      { name: 'VOICE', kind: 'text', default: '' },
      { name: 'SPEED', kind: 'number', default: '1' },
      { name: 'MUSIC_DB', kind: 'number', default: '-8' },
    ]);
    assert.deepEqual(
      byName.get('audiogram')!.merge.map((field: Json) => [field.name, field.kind]),
      [
        ['DURATION', 'number'],
        ['COVER_URL', 'url'],
        ['CAPTIONS_URL', 'url'],
        ['AUDIO_URL', 'url'],
        ['BACKGROUND', 'text'],
        ['TITLE', 'text'],
        ['WAVE_COLOR', 'text'],
        ['START', 'number'],
      ],
    );
    // The OpenAPI document describes the route, and the templates it lists are those /render/ takes.
    const openapi = (await (await fetch(`${server.base}/openapi.json`)).json()) as Json;
    assert.deepEqual(openapi.paths['/templates/'].get.security, [{ apiKey: [] }]);
  });

  it('prints the same list on the command line, as JSON with --json and as text without', async () => {
    const listed = (await (await fetch(`${server.base}/templates/`, { headers: KEYED })).json()) as Json;
    const json = await runCli(['templates', '--json']);
    assert.equal(json.exitCode, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), listed);
    const text = await runCli(['templates']);
    assert.equal(text.exitCode, 0, text.stderr);
    const quote = text.stdout.split('\n\n').find((block) => block.startsWith('quote-card: '))!;
    assert.deepEqual(quote.trimEnd().split('\n').slice(1), [
      '  MERGE FIELD  KIND    DEFAULT',
      '  QUOTE        text    (required)',
      '  AUTHOR       text    (required)',
      '  DURATION     number  6',
      '  BACKGROUND   text    #1E293B',
      '  ACCENT       text    #F59E0B',
    ]);
    // MEDIAFLOW_TEMPLATES names another folder: its templates, read as they are now.
    const own = await mkdtemp(path.join(work, 'own-'));
    await writeFile(
      path.join(own, 'card.json'),
      JSON.stringify({ description: 'A card', tracks: [{ clips: [{ type: 'text', text: '{{T}}', duration: 1 }] }] }),
    );
    const other = await runCli(['templates', '--json'], { env: { MEDIAFLOW_TEMPLATES: own } });
    assert.deepEqual(JSON.parse(other.stdout), {
      templates: [{ name: 'card', description: 'A card', merge: [{ name: 'T', kind: 'text' }] }],
    });
  });
});

describe('mediaflow render', () => {
  it('renders a template by name with --merge values, into the file -o names', async () => {
    const dir = await mkdtemp(path.join(work, 'cli-template-'));
    const args = ['render', '--template', 'quote-card', '--merge', 'QUOTE=Less is more.', '--merge', 'AUTHOR=Mies'];
    const run = await runCli([...args, '--merge', 'DURATION=1', '-o', 'card.mp4'], { cwd: dir });
    assert.equal(run.exitCode, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), {
      message: 'Video rendered successfully',
      output_file: 'card.mp4',
      duration: 1,
    });
    const info = await probe(path.join(dir, 'card.mp4'));
    assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height], [1080, 1080]);
    assert.ok(Math.abs(durationOf(info) - 1) < 0.05, String(durationOf(info)));
    // A merge field without a value, named with the path where the template uses it.
    const missing = await runCli(['render', '--template', 'quote-card', '--dry-run'], { cwd: dir });
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderr, /^mediaflow: tracks\[1\]\.clips\[0\]\.text: merge field \{\{QUOTE\}\} has no value/);
  });

  it('renders an edit of local files at a terminal, showing its progress on the status line', async () => {
    const dir = await mkdtemp(path.join(work, 'cli-'));
    await copyFile(await fixture('red-640x360.jpg'), path.join(dir, 'red.jpg'));
    await copyFile(await fixture('tone-2s-44k-stereo.mp3'), path.join(dir, 'music.mp3'));
    // Long enough that ffmpeg reports its position a few times: a slow zoom over 6 s.
    await writeFile(
      path.join(dir, 'edit.json'),
      JSON.stringify({
        output: { width: 640, height: 360 },
        tracks: [
          { clips: [{ type: 'image', src: 'red.jpg', duration: 6, motion: 'zoom-in' }] },
          { clips: [{ type: 'audio', src: 'music.mp3', loop: true, duration: 6 }] },
        ],
      }),
    );
    const { exitCode, terminal } = await runCliOnTerminal(['render', 'edit.json', '--out-dir', 'out'], { cwd: dir });
    assert.equal(exitCode, 0, terminal);
    // The status line: each stage and the percent done, redrawn in place, erased before the answer.
    const states = terminal
      .split('\r\x1b[2K')
      .slice(1, -1)
      .map((state) => state.trim());
    assert.ok(states.includes('render: download'), states.join(' | '));
    assert.ok(
      states.some((state) => /^render: process [1-9]\d?%$/.test(state)),
      `a percent under way: ${states.join(' | ')}`,
    );
    assert.ok(states.includes('render: publish'), states.join(' | '));
    const answer = JSON.parse(terminal.slice(terminal.lastIndexOf('\x1b[2K') + 4)) as Json;
    assert.equal(answer.message, 'Video rendered successfully');
    const info = await probe(path.join(dir, answer.output_file));
    assert.deepEqual([videoOf(info)!.width, videoOf(info)!.height], [640, 360]);
    assert.ok(Math.abs(durationOf(info) - 6) < 0.05, String(durationOf(info)));
    assert.ok(audioOf(info));
  });
});
