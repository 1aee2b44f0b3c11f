import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { fixtures } from './helpers/fixtures.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { assertNearRgb, frameRgb, probe, videoOf, type Rgb } from './helpers/media.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import type { LocalInput, Plan } from '../src/engine/contract/plugin.js';
import { BOARD, boardLayout, storyboard } from '../src/plugins/render/storyboard.js';
import type { Clip } from '../src/plugins/render/timeline.js';
import { timelineOf } from './plugins/render/picture-helpers.js';

/**
 * `dry_run=true` with `storyboard=true` (docs/render.md): one PNG, a row per track that draws something, each visual
 * clip's frame at its midpoint on its row, placed by time, with its times under it; made of one-frame renders only.
 */

const RED: Rgb = [255, 0, 0];
const GREEN: Rgb = [0, 255, 0];
const BLUE: Rgb = [0, 0, 255];
const YELLOW: Rgb = [255, 255, 0];
const BLACK: Rgb = [0, 0, 0];
const BOARD_GREY: Rgb = [0x20, 0x20, 0x20];

/** The edit: three pictures on track 0, a logo in the corner on track 1, a title on track 2, and music. */
const edit = (url: (name: string) => string) => ({
  output: { width: 640, height: 360, fps: 25 },
  tracks: [
    {
      clips: [
        { type: 'image', src: url('red-640x360.jpg'), duration: 4 },
        { type: 'image', src: url('green-360x640.png'), duration: 4, fit: 'contain' },
        { type: 'video', src: url('blue.mp4'), duration: 2 },
      ],
    },
    {
      clips: [
        { type: 'image', src: url('yellow-333x251.jpg'), start: 2, duration: 4, position: 'top-right', width: 0.3 },
      ],
    },
    { clips: [{ type: 'text', text: 'Hello', start: 0, duration: 3, font_size: 200 }] },
    { clips: [{ type: 'audio', src: url('tone-5s-44k-stereo.mp3'), duration: 5 }] },
  ],
});

describe('the storyboard’s plan', () => {
  const still = (file: string, start: number, end: number, track = 0) =>
    ({
      ...{ type: 'image', track, start, end, layout: { fit: 'cover' }, motion: 'zoom-in' },
      media: {
        file,
        source: `https://example.com/${file}`,
        facts: { formatName: 'png_pipe', isImage: true, video: { codec: 'png', width: 64, height: 64, fps: 25 } },
      } as LocalInput,
    }) as Clip;

  it('renders one frame per clip and the board, never more: no full encode', () => {
    const timeline = timelineOf(
      [
        ...Array.from({ length: 5 }, (_, i) => still(`p${i}.png`, i * 60, (i + 1) * 60)),
        { type: 'text', track: 1, start: 0, end: 300, text: 'Long', style: {} } as Clip,
      ],
      { width: 1080, height: 1920, fps: 30 },
    );
    const plan: Plan = storyboard(timeline, (input) => ['-i', input.file], 'storyboard.png');
    assert.equal(plan.commands.length, 7, 'six clips and the board');
    const layout = boardLayout(timeline);
    assert.deepEqual(plan.frameSize, { width: layout.width, height: layout.height }, 'the board, held to the limit');
    for (const command of plan.commands) {
      const frames = command.indexOf('-frames:v');
      assert.equal(command[frames + 1], '1', command.join(' '));
      assert.deepEqual(command.slice(-5), ['-c:v', 'png', '-f', 'image2', command.at(-1)]);
      assert.match(command.at(-1)!, /^storyboard-[\w-]+\.png$/);
    }
    // Each clip's graph draws one frame: its picture repeated no more, its motion at the clip's midpoint.
    for (let i = 0; i < 5; i++) {
      const graph = plan.files![`storyboard-00${i}.graph`]!;
      assert.match(graph, /loop=loop=0:size=1/);
      assert.match(graph, /perspective=.*\(in\+900\)\/1800/, 'the middle frame of 1800');
      assert.match(graph, /scale=90:160/, 'drawn at the frame’s small size');
    }
    const next = plan.next!([]) as Plan;
    assert.deepEqual(next.commands, [], 'the board is made by laying the frames on it, not by an encode');
    assert.equal(next.steps!.length, 1);
  });

  it("draws the words of captions from a voice, whose times need no transcription, and not another clip's", () => {
    const sound = { file: 'a.wav', source: 'a.wav', facts: { isImage: false, audio: {} } } as unknown as LocalInput;
    const words = ['one', 'two'].map((text, i) => ({ text, spaced: true, start: i, end: i + 1 }));
    const captions = (track: number, from: string) =>
      ({
        ...{ type: 'captions', track, start: 0, end: 2, source: { from } },
        ...{ style: {}, highlight: 'none', highlightColor: '#FFD700', wordsPerLine: 8 },
      }) as Clip;
    const timeline = timelineOf(
      [
        {
          type: 'voice',
          track: 0,
          start: 0,
          end: 2,
          id: 'v',
          text: 'one two',
          voice: 'flite:slt',
          media: sound,
          words,
        },
        { type: 'audio', track: 1, start: 0, end: 2, id: 'a', media: sound, trim: 0, volume: 0 },
        captions(2, 'v'),
        captions(3, 'a'),
      ] as Clip[],
      { width: 320, height: 180 },
    );
    const plan: Plan = storyboard(timeline, (input) => ['-i', input.file], 'storyboard.png');
    const scripts = Object.entries(plan.files!).filter(
      ([name]) => name.endsWith('.ass') && name !== 'storyboard-times.ass',
    );
    assert.equal(scripts.length, 1, Object.keys(plan.files!).join(', '));
    assert.match(scripts[0]![1], /^Dialogue: .*one two$/m, 'the voice’s words');
  });
});

describe('POST /render/ with a storyboard', () => {
  let tmp: string;
  let files: FileServer;
  let server: TestServer;

  before(async () => {
    const named = ['red-640x360.jpg', 'green-360x640.png', 'yellow-333x251.jpg', 'tone-5s-44k-stereo.mp3'];
    await fixtures(...named);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-storyboard-'));
    const blue = path.join(tmp, 'blue.mp4');
    await execa('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=blue:s=320x180:r=25:d=2', blue]);
    files = await startFileServer({ '/f/blue.mp4': serveFile(blue, 'video/mp4') });
    server = await startMediaflow();
  });
  after(async () => {
    await server?.close();
    await files?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('answers the timeline and one PNG: each clip’s frame on its track’s row, its times under it', async () => {
    const res = await fetch(`${server.base}/render/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dry_run: true, storyboard: true, edit: edit((name) => files.url(`/f/${name}`)) }),
    });
    const body = (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.message, 'Timeline resolved successfully');
    assert.equal(body.timeline.clips.length, 6);
    assert.match(body.storyboard_url, /\/uploads\/[0-9a-f-]{36}\/storyboard\.png$/);
    const file = server.pathOf(body.storyboard_url);
    assert.deepEqual(await readdir(path.dirname(file)), ['storyboard.png'], 'no video written');

    // Frames of 160x90 (the output's 16:9); three rows; the shortest clip (2 s) gets 112 px: 56 px a second.
    const video = videoOf(await probe(file))!;
    assert.equal(video.codec_name, 'png');
    const rowHeight = 90 + BOARD.times + BOARD.gap;
    assert.deepEqual([video.width, video.height], [2 * 16 + 160 + 10 * 56, 2 * 16 + 3 * rowHeight - BOARD.gap]);
    const board = await frameRgb(file);
    const at = (seconds: number, row: number) => ({ x: 16 + Math.round(seconds * 56), y: 16 + row * rowHeight });

    const frame = (clip: { x: number; y: number }, dx: number, dy: number) => board.pixel(clip.x + dx, clip.y + dy);
    const red = at(2, 0);
    const green = at(6, 0);
    const blue = at(9, 0);
    const logo = at(4, 1);
    const title = at(1.5, 2);
    assertNearRgb(frame(red, 80, 45), RED, 40, 'the red picture’s frame, at 2 s on row 0');
    assertNearRgb(frame(green, 80, 45), GREEN, 40, 'the green picture’s frame, at 6 s on row 0');
    assertNearRgb(frame(green, 10, 45), BLACK, 30, 'the green picture letterboxed (contain)');
    assertNearRgb(frame(blue, 80, 45), BLUE, 40, 'the video’s frame, at 9 s on row 0');
    assertNearRgb(frame(logo, 140, 15), YELLOW, 40, 'the logo in its frame’s top-right corner, on row 1');
    assertNearRgb(frame(logo, 40, 60), BLACK, 30, 'the background elsewhere in the logo’s frame');
    const bright = (clip: { x: number; y: number }, height: number, top: number) => {
      let count = 0;
      for (let y = clip.y + top; y < clip.y + top + height; y++)
        for (let x = clip.x; x < clip.x + 160; x++) if (board.pixel(x, y).some((channel) => channel > 128)) count++;
      return count;
    };
    assert.ok(bright(title, 90, 0) > 50, 'the title drawn in its frame, on row 2');
    assertNearRgb(board.pixel(4, 4), BOARD_GREY, 4, 'the board around the frames');
    // Each clip's times are written under its frame, in the band that is otherwise the board's grey.
    for (const [name, clip] of Object.entries({ red, green, blue, logo, title }))
      assert.ok(bright(clip, BOARD.times, 90) > 20, `the times under ${name}`);
    assert.equal(bright({ x: 16 + 160 + 10 * 56 - 160, y: 16 + 2 * rowHeight }, BOARD.times, 90), 0, 'no times here');
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('lays out the board as docs/render.md says', () => {
    const layout = boardLayout(
      timelineOf([{ type: 'text', track: 3, start: 0, end: 100, text: 'x', style: {} } as Clip], {
        width: 1080,
        height: 1920,
      }),
    );
    assert.deepEqual(layout.frame, { width: 90, height: 160 });
    assert.equal(layout.width, 640, 'at least 640 wide');
    assert.equal(layout.height, 2 * 16 + 160 + BOARD.times);
    assert.deepEqual(
      layout.places.map(({ x, y }) => [x, y]),
      [[16 + Math.round(50 * ((640 - 32 - 90) / 100)), 16]],
    );
  });
});
