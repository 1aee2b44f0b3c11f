import assert from 'node:assert/strict';
import { readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { bandLevelDb } from './helpers/band-level.js';
import { captionPixels } from './helpers/caption-pixels.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { isFinal, waitForJob } from './helpers/jobs.js';
import {
  assertNearRgb,
  audioOf,
  durationOf,
  frameRgb,
  probe,
  videoOf,
  videoPacketHashes,
  type Rgb,
} from './helpers/media.js';
import { runCli, startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { decodedFrames, Workspace } from './plugins/render/picture-helpers.js';
import { DUCK } from '../src/plugins/render/ducking.js';

/**
 * `POST /render/` end to end: one rich edit document through the real server over a real socket (its media fetched
 * from a file server on 127.0.0.1), as a job, and through the real CLI with local paths; what comes out is decoded and
 * read at chosen times and places. The media tell time and place by their content: a colour per picture, a logo
 * whose left half is opaque yellow and right half transparent, tones at known frequencies, subtitles with known cue
 * times. The picture and sound graphs' variants are the unit tests' (test/plugins/render/); here the whole path is.
 */

const [WIDTH, HEIGHT, FPS, SECONDS] = [360, 640, 25, 6];
const BACKGROUND: Rgb = [48, 48, 48];
const RED: Rgb = [255, 0, 0];
const GREEN: Rgb = [0, 255, 0];
const BLUE: Rgb = [0, 0, 255];
const MAGENTA: Rgb = [255, 0, 255];
const CYAN: Rgb = [0, 255, 255];
const YELLOW: Rgb = [255, 255, 0];
/** The music's and the voice's tones, far enough apart for a band-pass to hear each alone. */
const [MUSIC_HZ, VOICE_HZ] = [440, 2500];

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Frame = Awaited<ReturnType<typeof frameRgb>>;

/**
 * The edit, its media named by `src`. Timeline (s): a red landscape picture letterboxed (0-2), a green one fading in
 * over it (1.5-2), a blue picture with magenta and cyan edges on a blurred copy of itself (3.5-5), the second second
 * of a video that is orange then cyan (5-6). A logo top right (1-5) and at half opacity bottom left (0-6), a title at
 * the top (0.5-1.5), subtitles whose cues (1.5-2.5, 3-4 of their clock) are shifted by 1 s, music ducked under a
 * voice (2.5-4.5).
 */
const edit = (src: (name: string) => string) => ({
  output: { width: WIDTH, height: HEIGHT, fps: FPS, background: '#303030' },
  tracks: [
    {
      clips: [
        { type: 'image', src: src('red.jpg'), duration: 2, fit: 'contain' },
        { type: 'image', src: src('green.png'), duration: 2, transition: { type: 'fade', duration: 0.5 } },
        { type: 'image', src: src('edges.png'), duration: 1.5, fit: 'contain-blur' },
        { type: 'video', src: src('clip.mp4'), trim: 1 },
      ],
    },
    { clips: [{ type: 'image', src: src('logo.png'), start: 1, duration: 4, position: 'top-right', width: 0.2 }] },
    {
      clips: [{ type: 'image', src: src('logo.png'), duration: 6, position: 'bottom-left', width: 0.2, opacity: 0.5 }],
    },
    { clips: [{ type: 'text', text: 'TITLE', start: 0.5, duration: 1, position: 'top' }] },
    { clips: [{ type: 'captions', src: src('cues.srt'), start: 1 }] },
    { clips: [{ type: 'audio', src: src('music.wav'), loop: true, duration: 6, duck: true }] },
    { clips: [{ type: 'audio', src: src('voice.wav'), start: 2.5, role: 'voice' }] },
  ],
});

/** The logos' boxes: 0.2 of the width (72 px), 0.03 of it (11 px) from the edges; their left half is the yellow. */
const LOGO = 72;
const MARGIN = 11;
const topRight = { x: WIDTH - MARGIN - LOGO, y: MARGIN };
const bottomLeft = { x: MARGIN, y: HEIGHT - MARGIN - LOGO };
/** A point in a logo's opaque half and one in its transparent half. */
const opaqueOf = (box: { x: number; y: number }) => [box.x + LOGO / 4, box.y + LOGO / 2] as const;
const clearOf = (box: { x: number; y: number }) => [box.x + (3 * LOGO) / 4, box.y + LOGO / 2] as const;

/** Two colours half and half: a fade at its midpoint, or the half-opaque logo over a colour. */
const halfway = (a: Rgb, b: Rgb): Rgb => a.map((channel, i) => Math.round((channel + b[i]!) / 2)) as Rgb;

/** The white (text) pixels of a band of rows of a frame. */
const textPixels = (frame: Frame, top: number, bottom: number) =>
  captionPixels(frame).white.filter((point) => point.y >= top && point.y < bottom).length;

let work: Workspace;
let files: FileServer;
let server: TestServer;
/** The edit's files, and a detailed picture a job zooms into. */
const EDIT_MEDIA = ['red.jpg', 'green.png', 'edges.png', 'clip.mp4', 'logo.png', 'cues.srt', 'music.wav', 'voice.wav'];
const MEDIA = [...EDIT_MEDIA, 'detail.jpg'];

before(async () => {
  work = await Workspace.create();
  await work.image('red.jpg', 'color=c=red:s=640x360');
  await work.image('detail.jpg', 'testsrc2=s=640x360');
  await work.image('green.png', 'color=c=0x00FF00:s=360x640');
  await work.image(
    'edges.png',
    'color=c=blue:s=640x360,drawbox=x=0:y=0:w=80:h=360:color=magenta:t=fill,' +
      'drawbox=x=560:y=0:w=80:h=360:color=cyan:t=fill',
  );
  await work.image('logo.png', "color=c=black@0:s=64x64,format=rgba,geq=r='255':g='255':b='0':a='255*lt(X,32)'");
  await work.media(
    'clip.mp4',
    ['color=c=0xFF8000:s=320x180:r=25:d=1', 'color=c=0x00FFFF:s=320x180:r=25:d=1'],
    ['-filter_complex', '[0][1]concat=n=2:v=1:a=0', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'],
  );
  await work.media('music.wav', [`sine=frequency=${MUSIC_HZ}:duration=1:sample_rate=48000`], ['-ac', '2']);
  await work.media('voice.wav', [`sine=frequency=${VOICE_HZ}:duration=2:sample_rate=48000`]);
  await writeFile(
    path.join(work.dir, 'cues.srt'),
    '1\n00:00:01,500 --> 00:00:02,500\nHello\n\n2\n00:00:03,000 --> 00:00:04,000\nWorld\n',
  );
  files = await startFileServer(
    Object.fromEntries(MEDIA.map((name) => [`/${name}`, serveFile(path.join(work.dir, name))])),
  );
  server = await startMediaflow();
}, 120_000);

after(async () => {
  await server?.close();
  await files?.close();
  await work?.remove();
});

async function postEdit(
  document: Json = edit((name) => files.url(`/${name}`)),
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${server.base}/render/`, {
    method: 'POST',
    body: JSON.stringify({ edit: document }),
    headers: { 'content-type': 'application/json', ...headers },
  });
  return { status: res.status, body: (await res.json()) as Json };
}

let rendered: Promise<string> | undefined;

/** The edit rendered by a synchronous request (once, for every test that reads it): the output file. */
const render = () =>
  (rendered ??= (async () => {
    const { status, body } = await postEdit();
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.message, 'Video rendered successfully');
    assert.equal(body.duration, SECONDS);
    assert.match(body.output_file, new RegExp(`^${server.base}/uploads/[^/]+/render\\.mp4$`));
    return server.pathOf(body.output_file);
  })());

describe('POST /render/ of a rich edit, decoded', () => {
  let output: string;
  const frames = new Map<number, Frame>();
  const at = (seconds: number) => frames.get(seconds)!;

  before(async () => {
    output = await render();
    for (const seconds of [0.25, 0.5, 1, 1.75, 2.25, 3, 3.75, 4.5, 5.5])
      frames.set(seconds, await frameRgb(output, seconds));
  }, 120_000);

  it("is the output's size, rate and length, with its sound, decoding cleanly; each file fetched once", async () => {
    const info = await probe(output);
    const video = videoOf(info)!;
    assert.deepEqual(
      [video.codec_name, video.width, video.height, video.r_frame_rate],
      ['h264', WIDTH, HEIGHT, '25/1'],
    );
    assert.ok(Math.abs(durationOf(info) - SECONDS) < 0.05, String(durationOf(info)));
    const audio = audioOf(info)!;
    assert.deepEqual([audio.codec_name, audio.sample_rate, audio.channels], ['aac', '48000', 2]);
    assert.deepEqual(await decodedFrames(output), { frames: SECONDS * FPS, errors: '' });
    // The logo is in two clips, and fetched once; every other file once too.
    assert.deepEqual(
      EDIT_MEDIA.map((name) => files.hits.get(`/${name}`)),
      EDIT_MEDIA.map(() => 1),
    );
    assert.deepEqual(await server.workLeftovers(), []);
  });

  it('shows each picture at its times: letterboxed on the background, on a blurred copy, blended in a fade', () => {
    const centre = [WIDTH / 2, HEIGHT / 2] as const;
    // 0-2 s: the red picture letterboxed (360x202 in the middle), the background above and below it.
    assertNearRgb(at(0.5).pixel(...centre), RED, 12, 'red at 0.5 s');
    assertNearRgb(at(0.5).pixel(WIDTH / 2, 150), BACKGROUND, 8, 'the bar above it');
    assertNearRgb(at(0.5).pixel(WIDTH / 2, 480), BACKGROUND, 8, 'the bar below it');
    // 1.5-2 s: the green picture fades in over it: halfway at 1.75 s, the bars too.
    assertNearRgb(at(1.75).pixel(...centre), halfway(RED, GREEN), 20, 'red and green blended at 1.75 s');
    assertNearRgb(at(1.75).pixel(WIDTH / 2, 150), halfway(BACKGROUND, GREEN), 20, 'the bar and green blended');
    // 2-3.5 s: green alone, filling the frame.
    assertNearRgb(at(2.25).pixel(...centre), GREEN, 12, 'green at 2.25 s');
    assertNearRgb(at(2.25).pixel(WIDTH / 2, 150), GREEN, 12, 'green covers the frame');
    // 3.5-5 s: the picture whole (its magenta and cyan edges), on its blurred copy: the copy covers the frame, so
    // its middle (blue) shows above and below, not the background.
    assertNearRgb(at(3.75).pixel(10, HEIGHT / 2), MAGENTA, 16, 'the left edge of the picture');
    assertNearRgb(at(3.75).pixel(WIDTH - 10, HEIGHT / 2), CYAN, 16, 'its right edge');
    assertNearRgb(at(3.75).pixel(...centre), BLUE, 16, 'its middle');
    for (const y of [60, 150, 500, 600])
      assertNearRgb(at(3.75).pixel(WIDTH - 10, y), BLUE, 24, `the blurred bar at y ${y}`);
    // 5-6 s: the video from its second second (trim 1): cyan, not its orange first second.
    assertNearRgb(at(5.5).pixel(...centre), CYAN, 16, 'the video after its trim');
  });

  it('places the logo at its corners, only in its times, its transparent half showing what is below', () => {
    assertNearRgb(at(0.5).pixel(...opaqueOf(topRight)), BACKGROUND, 8, 'no logo top right before 1 s');
    for (const seconds of [1, 2.25, 4.5])
      assertNearRgb(at(seconds).pixel(...opaqueOf(topRight)), YELLOW, 16, `${seconds} s`);
    assertNearRgb(at(1).pixel(...clearOf(topRight)), BACKGROUND, 8, 'the background through its clear half');
    assertNearRgb(at(2.25).pixel(...clearOf(topRight)), GREEN, 12, 'the picture through its clear half');
    assertNearRgb(at(5.5).pixel(...opaqueOf(topRight)), CYAN, 16, 'no logo top right after 5 s');
    // At half opacity bottom left, all along.
    assertNearRgb(at(0.5).pixel(...opaqueOf(bottomLeft)), halfway(BACKGROUND, YELLOW), 16, 'half a logo on the bar');
    assertNearRgb(at(2.25).pixel(...opaqueOf(bottomLeft)), halfway(GREEN, YELLOW), 16, 'half a logo on green');
    assertNearRgb(at(2.25).pixel(...clearOf(bottomLeft)), GREEN, 12, 'green through its clear half');
  });

  it('draws the title and the captions only within their times', () => {
    const title = (seconds: number) => textPixels(at(seconds), 0, HEIGHT / 4);
    const captions = (seconds: number) => textPixels(at(seconds), (3 * HEIGHT) / 4, HEIGHT);
    // The title, 0.5-1.5 s, at the top.
    assert.deepEqual([title(0.25), title(2.25)], [0, 0], 'no title before 0.5 s or after 1.5 s');
    assert.ok(title(0.5) > 20 && title(1) > 20, `the title: ${title(0.5)}, ${title(1)} pixels`);
    // The cues, at 2.5-3.5 and 4-5 s of the timeline, at the bottom.
    assert.ok(captions(3) > 20 && captions(4.5) > 20, `the cues: ${captions(3)}, ${captions(4.5)} pixels`);
    assert.deepEqual([captions(2.25), captions(3.75), captions(5.5)], [0, 0, 0], 'no caption between cues');
    // Nothing else is that white: the title is not at the bottom, nor a cue at the top.
    assert.deepEqual([textPixels(at(1), HEIGHT / 4, HEIGHT), textPixels(at(3), 0, (3 * HEIGHT) / 4)], [0, 0]);
  });

  it('ducks the music under the voice by its depth, and brings it back', async () => {
    const music = (from: number, to: number) => bandLevelDb(output, MUSIC_HZ, from, to);
    const [before, under, afterwards] = [await music(0.2, 2), await music(2.6, 4.4), await music(5.1, 5.9)];
    assert.ok(Math.abs(before - afterwards) < 0.5, `the music at ${before} dB, then at ${afterwards} dB`);
    assert.ok(before - under >= 6, `down by ${before - under} dB under the voice`);
    assert.ok(Math.abs(before - under - DUCK.depthDb) < 1, `down by ${before - under} dB, not ${DUCK.depthDb}`);
    // The voice is heard at its own level while it plays, and only then.
    const voice = (from: number, to: number) => bandLevelDb(output, VOICE_HZ, from, to);
    const own = await bandLevelDb(path.join(work.dir, 'voice.wav'), VOICE_HZ, 0.1, 1.9);
    assert.ok(Math.abs((await voice(2.6, 4.4)) - own) < 0.5, `the voice at ${await voice(2.6, 4.4)} dB, not ${own}`);
    assert.ok(own - (await voice(0.2, 2.3)) > 40, 'no voice before 2.5 s');
  });
});

describe('a render as a job, and from the CLI', () => {
  const JOB = 'answers 202, then its progress rising to 100 while ffmpeg runs, then the URL of the video';
  it(JOB, { timeout: 180_000 } as never, async () => {
    // Long enough for ffmpeg to report its position a few times: every frame of a zoom is a new picture to encode.
    const zoom = {
      output: { width: WIDTH, height: HEIGHT, fps: FPS },
      tracks: [{ clips: [{ type: 'image', src: files.url('/detail.jpg'), duration: 20, motion: 'zoom-in' }] }],
    };
    const submitted = await postEdit(zoom, { prefer: 'respond-async' });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    const progress: number[] = [];
    const job = await waitForJob(
      server.base,
      submitted.body.job_id,
      (seen) => {
        progress.push(seen.progress);
        return isFinal(seen);
      },
      { ms: 120_000, every: 50 },
    );
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    assert.deepEqual(
      progress,
      [...progress].sort((a, b) => a - b),
      'never down',
    );
    assert.equal(progress.at(-1), 100);
    assert.ok(
      progress.some((value) => value > 10 && value < 96),
      `a value while ffmpeg runs: ${[...new Set(progress)].join(', ')}`,
    );
    const result = job.result as Json;
    assert.deepEqual([result.message, result.duration], ['Video rendered successfully', 20]);
    const res = await fetch(result.output_file);
    assert.equal(res.status, 200);
    const file = path.join(work.dir, 'job.mp4');
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    assert.deepEqual(await decodedFrames(file), { frames: 20 * FPS, errors: '' });
  });

  const CLI = 'renders the same video from local paths with `mediaflow render`';
  it(CLI, { timeout: 180_000 } as never, async () => {
    await writeFile(path.join(work.dir, 'edit.json'), JSON.stringify(edit((name) => name)));
    const { exitCode, stdout, stderr } = await runCli(['render', 'edit.json', '--out-dir', 'out'], { cwd: work.dir });
    assert.equal(exitCode, 0, stderr);
    const answer = JSON.parse(stdout) as Json;
    assert.deepEqual([answer.message, answer.duration], ['Video rendered successfully', SECONDS]);
    const file = path.join(work.dir, answer.output_file);
    assert.deepEqual(await videoPacketHashes(file), await videoPacketHashes(await render()));
    assert.deepEqual(await readdir(path.dirname(file)), ['render.mp4'], 'the video alone');
    await rm(path.join(work.dir, 'out'), { recursive: true, force: true });
  });
});
