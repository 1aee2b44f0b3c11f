import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from './helpers/lifecycle.js';
import { useScratch } from './helpers/scratch.js';
import { serveFile, startFileServer, type FileServer } from './helpers/file-server.js';
import { audioPacketHashes, decodeErrors, probe, probeLines, videoOf } from './helpers/media.js';
import { startMediaflow, type TestServer } from './helpers/mediaflow.js';
import { startRedis, type TestRedis } from './helpers/redis.js';
import { startS3, type TestS3 } from './helpers/s3-server.js';
import { ffmpegChildren, startServeProcess, startWorkerProcess, type ServeProcess } from './helpers/serve-process.js';

/**
 * Fan-out of the layer operations (docs/fanout.md): a caption, a text or a logo whose time span crosses a join
 * between two parts is drawn on exactly the frames one pass draws it on, on both sides of the join.
 */

const [WIDTH, HEIGHT, FPS, SECONDS] = [320, 180, 25, 12];
/** Keyframes every second and parts of 3 s: parts start at 0, 3, 6 and 9 s. */
const PARTS = 4;
const JOINS = [3, 6, 9];
type Rect = readonly [x: number, y: number, width: number, height: number];
const TOP: Rect = [0, 0, WIDTH, HEIGHT / 2];
const BOTTOM: Rect = [0, HEIGHT / 2, WIDTH, HEIGHT / 2];
/** The logo's corner at the top right: 48 px wide (0.15 of 320), 10 px (0.03) from the edges. */
const LOGO: Rect = [WIDTH - 10 - 48, 10, 48, 48];

/** Small settings, so that 12 s splits: inputs longer than 6 s, parts of about 3 s. */
// Two slots on any machine: the parts are planned in a multiple of them (docs/fanout.md), 4 here.
const SPLIT = { MEDIAFLOW_FANOUT_MIN: '6', MEDIAFLOW_PART_SECONDS: '3', MEDIAFLOW_CONCURRENCY: '2' };

/** A case encodes the video twice and decodes it whole several times: more than a minute on a loaded machine. */
const SLOW = { timeout: 180_000 } as never;

type Rgb = readonly [number, number, number];
const white = ([r, g, b]: Rgb) => r > 120 && g > 120 && b > 120;
const red = ([r, g, b]: Rgb) => r > 180 && g < 90 && b < 90;

/**
 * For every frame of a file, in order, whether more than 20 pixels of `rect` pass `test`: where a layer is drawn.
 * The background is grey and dim (no channel above 70), so anything whiter or redder is the layer.
 */
async function layerFrames(file: string, [x, y, width, height]: Rect, test: (rgb: Rgb) => boolean) {
  const { stdout } = await execa(
    'ffmpeg',
    [
      ...['-v', 'error', '-i', file, '-map', '0:v:0', '-fps_mode', 'passthrough'],
      ...['-vf', `crop=${width}:${height}:${x}:${y}`, '-pix_fmt', 'rgb24', '-f', 'rawvideo', 'pipe:1'],
    ],
    { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 },
  );
  const data = stdout as unknown as Uint8Array;
  const size = width * height * 3;
  assert.equal(data.length % size, 0);
  const shown: boolean[] = [];
  for (let offset = 0; offset < data.length; offset += size) {
    let count = 0;
    for (let i = offset; i < offset + size; i += 3) if (test([data[i]!, data[i + 1]!, data[i + 2]!])) count++;
    shown.push(count > 20);
  }
  return shown;
}

/** The indexes of the frames that are `true`, as [first, last] runs: `[[125, 174]]`. */
function runs(shown: boolean[]): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  shown.forEach((on, index) => {
    if (!on) return;
    const last = found[found.length - 1];
    if (last && last[1] === index - 1) last[1] = index;
    else found.push([index, index]);
  });
  return found;
}

/** Every decoded frame's time, in order (a frame with side data, x264's SEI, has more fields after it). */
const frameTimes = async (file: string): Promise<number[]> =>
  (await probeLines(file, 'frame=pts_time', 'v:0')).map((line) => Number(line.split(',')[0]));

/** The times of a file's video keyframes, from its packets. */
const keyframeTimes = async (file: string): Promise<number[]> =>
  (await probeLines(file, 'packet=pts_time,flags', 'v:0'))
    .map((line) => line.split(','))
    .filter(([, flags]) => flags?.includes('K'))
    .map(([time]) => Number(time));

/** Each frame's SSIM (all planes) of one file against another of the same frames. */
async function ssimByFrame(file: string, reference: string): Promise<number[]> {
  const { stdout } = await execa('ffmpeg', [
    ...['-v', 'error', '-i', file, '-i', reference],
    ...['-lavfi', '[0:v:0][1:v:0]ssim=stats_file=-', '-f', 'null', '-'],
  ]);
  return [...stdout.matchAll(/All:([\d.]+)/g)].map((match) => Number(match[1]));
}

/**
 * How many x264 runs wrote a file's video: each writes its version and options once, in its first frame, and a
 * join by stream copy keeps them. One for a single pass, one per part for a split encode.
 */
async function x264Runs(file: string): Promise<number> {
  return (await readFile(file)).toString('latin1').split('x264 - core').length - 1;
}

/** A stream's start and duration as ffprobe reads them. */
async function streamSpans(file: string): Promise<Array<{ type: string; start: string; duration: string }>> {
  const { stdout } = await execa('ffprobe', [
    ...['-v', 'error', '-show_entries', 'stream=codec_type,start_time,duration', '-of', 'json', file],
  ]);
  const { streams } = JSON.parse(stdout) as {
    streams: Array<{ codec_type: string; start_time: string; duration: string }>;
  };
  return streams.map((s) => ({ type: s.codec_type, start: s.start_time, duration: s.duration }));
}

interface Inputs {
  /** 12 s at 25 fps with a tone, keyframes every second. */
  long: string;
  /** 6 s at 25 fps, then 6 s at 30 fps, keyframes every second. */
  vfr: string;
  /** Subtitles: a cue inside the first part, one across the join at 6 s. */
  srt: string;
  /** A red square. */
  logo: string;
}

/** Makes the inputs in `dir`. */
async function makeInputs(dir: string): Promise<Inputs> {
  const long = path.join(dir, 'long.mp4');
  // A moving grey picture kept dim (luma at most a fifth of full, no colour) with a tone, keyframes every second.
  // prettier-ignore
  await execa('ffmpeg', [
    '-v', 'error',
    '-f', 'lavfi', '-i', `testsrc2=s=${WIDTH}x${HEIGHT}:r=${FPS}:d=${SECONDS},lutyuv=y=16+(val-16)/5:u=128:v=128`,
    '-f', 'lavfi', '-i', `sine=f=440:d=${SECONDS}:sample_rate=48000`,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p',
    '-g', String(FPS), '-keyint_min', String(FPS), '-sc_threshold', '0',
    '-c:a', 'aac', '-shortest', long,
  ]);
  // 6 s at 25 fps then 6 s at 30 fps, on a 1/90000 clock: frames 1/30 s apart from 6 s on.
  const vfr = path.join(dir, 'vfr.mp4');
  // prettier-ignore
  await execa('ffmpeg', [
    '-v', 'error',
    '-f', 'lavfi', '-i', `testsrc2=s=${WIDTH}x${HEIGHT}:r=25:d=6,lutyuv=y=16+(val-16)/5:u=128:v=128`,
    '-f', 'lavfi', '-i', `testsrc2=s=${WIDTH}x${HEIGHT}:r=30:d=6,lutyuv=y=16+(val-16)/5:u=128:v=128`,
    '-f', 'lavfi', '-i', `sine=f=440:d=${SECONDS}:sample_rate=48000`,
    '-filter_complex', '[0:v]settb=1/90000[a];[1:v]settb=1/90000[b];[a][b]concat=n=2:v=1:a=0[v]',
    '-map', '[v]', '-map', '2:a',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-force_key_frames', 'expr:gte(t,n_forced)',
    '-fps_mode', 'passthrough', '-enc_time_base:v', '1/90000', '-video_track_timescale', '90000',
    '-c:a', 'aac', '-shortest', vfr,
  ]);
  const srt = path.join(dir, 'across.srt');
  // One cue across the join at 6 s, and one inside the first part.
  await writeFile(srt, '1\n00:00:01,000 --> 00:00:02,000\nINSIDE\n\n2\n00:00:05,000 --> 00:00:07,000\nACROSS\n');
  const logo = path.join(dir, 'red.png');
  await execa('ffmpeg', [
    ...['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=100x100,format=rgba'],
    ...['-frames:v', '1', logo],
  ]);
  return { long, vfr, srt, logo };
}

/** Serves the inputs on loopback, under /local/. */
const serveInputs = (inputs: Inputs): Promise<FileServer> =>
  startFileServer({
    '/local/long.mp4': serveFile(inputs.long, 'video/mp4'),
    '/local/vfr.mp4': serveFile(inputs.vfr, 'video/mp4'),
    '/local/across.srt': serveFile(inputs.srt, 'application/x-subrip'),
    '/local/red.png': serveFile(inputs.logo, 'image/png'),
  });

// The inputs, made once for both ways of running below.
const scratch = useScratch('mediaflow-fanout-layers-');
let inputs: Inputs;
let files: FileServer;
before(async () => {
  inputs = await makeInputs(scratch.dir);
  files = await serveInputs(inputs);
});
after(async () => {
  await files?.close();
});

describe('fan-out of add-subtitles, add-text and overlay-image', () => {
  let server: TestServer;

  before(async () => {
    server = await startMediaflow(SPLIT);
  });
  after(async () => {
    await server?.close();
  });

  /** Runs an operation on the long video, split and in one pass (`fanout=false`); returns both outputs. */
  async function bothWays(route: string, field: string, fields: Record<string, string>) {
    const run = async (fanout: string) => {
      const res = await server.post(route, { video_url: files.url('/local/long.mp4'), ...fields, fanout });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return { file: server.pathOf(res.body[field]!), body: res.body };
    };
    const split = await run('true');
    const single = await run('false');
    assert.deepEqual(await server.workLeftovers(), [], 'no part file is left behind');
    return { split, single };
  }

  /**
   * What a split output must hold against the one pass's: it was split (one x264 run per part), every frame once at
   * the one pass's times, the same streams' starts and lengths, the sound's packets as the input's, a clean decode.
   */
  async function assertSameAsOnePass(split: string, single: string): Promise<void> {
    assert.equal(await x264Runs(split), PARTS, 'the split output is the parts joined');
    assert.equal(await x264Runs(single), 1, 'fanout=false is one pass');
    const times = await frameTimes(split);
    assert.equal(times.length, FPS * SECONDS);
    assert.deepEqual(times, await frameTimes(single), 'every frame at the one pass time');
    assert.ok(
      times.every((time, i) => i === 0 || time > times[i - 1]!),
      'timestamps only go forward',
    );
    assert.deepEqual(await streamSpans(split), await streamSpans(single));
    assert.equal((await probe(split)).format.duration, (await probe(single)).format.duration);
    assert.deepEqual(await audioPacketHashes(split), await audioPacketHashes(inputs.long), 'the sound is copied whole');
    assert.equal(await decodeErrors(split), '', 'a clean decode');
    // The encoder starts afresh at each join: the frames there are close to the one pass's, not the same.
    const ssim = await ssimByFrame(split, single);
    for (const join of JOINS)
      for (const frame of [join * FPS - 1, join * FPS])
        assert.ok(ssim[frame]! >= 0.98, `SSIM ${ssim[frame]} at frame ${frame}, beside the join at ${join} s`);
  }

  it('burns a subtitle cue that spans a join into the frames on both sides of it, and no others', SLOW, async () => {
    const { split, single } = await bothWays('/add-subtitles/', 'output_video', {
      subtitle_url: files.url('/local/across.srt'),
    });
    await assertSameAsOnePass(split.file, single.file);
    const shown = await layerFrames(split.file, BOTTOM, white);
    // 1 to 2 s and 5 to 7 s at 25 fps; the join at 6 s is between frames 149 and 150.
    assert.deepEqual(runs(shown), [
      [25, 49],
      [125, 174],
    ]);
    assert.deepEqual(shown, await layerFrames(single.file, BOTTOM, white));
    assert.equal(runs(await layerFrames(split.file, TOP, white)).length, 0, 'nothing drawn elsewhere');
  });

  it('draws text whose span crosses a join on the frames on both sides of it, and no others', SLOW, async () => {
    const { split, single } = await bothWays('/add-text/', 'output_file', {
      text: 'ACROSS',
      start: '8',
      end: '10',
      position: 'top',
    });
    await assertSameAsOnePass(split.file, single.file);
    const shown = await layerFrames(split.file, TOP, white);
    // The join at 9 s is between frames 224 and 225.
    assert.deepEqual(runs(shown), [[200, 249]]);
    assert.deepEqual(shown, await layerFrames(single.file, TOP, white));
    assert.equal(runs(await layerFrames(split.file, BOTTOM, white)).length, 0, 'nothing drawn elsewhere');
  });

  it('lays a logo whose span crosses a join over the frames on both sides of it, and no others', SLOW, async () => {
    const { split, single } = await bothWays('/overlay-image/', 'output_file', {
      image_url: files.url('/local/red.png'),
      start: '2',
      end: '4',
    });
    await assertSameAsOnePass(split.file, single.file);
    const shown = await layerFrames(split.file, LOGO, red);
    // between(t,2,4) holds at both ends: frames 50 to 100; the join at 3 s is between frames 74 and 75.
    assert.deepEqual(runs(shown), [[50, 100]]);
    assert.deepEqual(shown, await layerFrames(single.file, LOGO, red));
  });

  it('encodes a webm (VP9) output in one pass, its layer in place', async () => {
    const res = await server.post('/add-text/', {
      video_url: files.url('/local/long.mp4'),
      text: 'ACROSS',
      start: '8',
      end: '10',
      format: 'webm',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const file = server.pathOf(res.body.output_file!);
    assert.equal(videoOf(await probe(file))!.codec_name, 'vp9');
    const times = await frameTimes(file);
    assert.equal(times.length, FPS * SECONDS);
    assert.equal(await decodeErrors(file), '');
    assert.deepEqual(runs(await layerFrames(file, BOTTOM, white)), [[200, 249]]);
    // A part starts with a keyframe, so a split output has one at each join (3, 6 and 9 s); this one has them
    // where libvpx puts them.
    const keyframes = await keyframeTimes(file);
    assert.ok(keyframes.length > 0);
    for (const join of JOINS)
      assert.ok(!keyframes.some((time) => Math.abs(time - join) < 0.02), `no keyframe at ${join} s: ${keyframes}`);
  });

  it('keeps every frame of a variable frame rate at its own time across the joins', SLOW, async () => {
    const input = await frameTimes(inputs.vfr);
    assert.equal(input.length, 6 * 25 + 6 * 30);
    const res = await server.post('/add-text/', {
      video_url: files.url('/local/vfr.mp4'),
      text: 'ACROSS',
      start: '5',
      end: '7',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const file = server.pathOf(res.body.output_file!);
    assert.equal(await x264Runs(file), PARTS);
    const times = await frameTimes(file);
    assert.equal(times.length, input.length);
    const off = times.flatMap((time, i) =>
      Math.abs(time - input[i]!) > 1e-4 ? [`${i}: ${time} for ${input[i]}`] : [],
    );
    assert.deepEqual(off.slice(0, 5), [], 'every frame at its own time');
    // ffmpeg's null muxer puts the frames on a clock of the first frame rate unless told to keep the input's.
    const { stderr } = await execa('ffmpeg', ['-v', 'error', '-i', file, '-enc_time_base:v', '-1', '-f', 'null', '-']);
    assert.equal(stderr, '', 'a clean decode');
    // The text from 5 s (frame 125) to 7 s: 25 frames at 25 fps, then 30 at 30 fps (across the join at 6 s), to
    // frame 179.
    assert.deepEqual(runs(await layerFrames(file, BOTTOM, white)), [[125, 179]]);
  });

  it("names characters no installed font has in the answer's warnings, split or not", SLOW, async () => {
    const { split, single } = await bothWays('/add-text/', 'output_file', { text: 'A\uE000B', start: '5', end: '7' });
    assert.equal(await x264Runs(split.file), PARTS);
    assert.match(JSON.stringify(single.body.warnings), /U\+E000/i);
    assert.deepEqual(split.body.warnings, single.body.warnings);
  });
});

/**
 * Redis mode (docs/fanout.md): one API process with no workers, two worker processes of one ffmpeg slot each, Redis
 * and an S3 server, all real and on loopback. A part another worker takes reads the job's files from the store.
 */
describe('fan-out of the layer operations in Redis mode, parts on both workers', () => {
  let redis: TestRedis;
  let s3: TestS3;
  let api: ServeProcess;
  const workers: ServeProcess[] = [];

  before(async () => {
    [redis, s3] = await Promise.all([startRedis(), startS3()]);
    const shared = { ...s3.env, ...SPLIT, MEDIAFLOW_REDIS_URL: redis.url, MEDIAFLOW_STALLED_INTERVAL: '3s' };
    const dataDir = scratch.path('data');
    for (let n = 0; n < 2; n++)
      workers.push(await startWorkerProcess(dataDir, { ...shared, MEDIAFLOW_CONCURRENCY: '1' }));
    api = await startServeProcess(dataDir, { ...shared, MEDIAFLOW_WORKERS: '0' });
  }, 120_000);
  after(async () => {
    for (const proc of [api, ...workers]) if (proc && proc.child.exitCode === null) proc.child.kill('SIGKILL');
    await Promise.all([api, ...workers].map((proc) => proc?.child));
    await Promise.all([redis?.close(), s3?.close()]);
  });

  /**
   * POSTs an operation on the long video to the API and downloads its output; says which workers ran ffmpeg
   * meanwhile (only the job's own runs its probe and its join: the other one ran a part).
   */
  async function run(route: string, fields: Record<string, string>) {
    const form = new FormData();
    for (const [key, value] of Object.entries({ video_url: files.url('/local/long.mp4'), ...fields }))
      form.append(key, value);
    const busy = new Set<number>();
    let done = false;
    const watching = (async () => {
      while (!done) {
        for (const [n, worker] of workers.entries())
          if ((await ffmpegChildren(worker.child.pid!)).length > 0) busy.add(n);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const res = await fetch(`${api.base}${route}`, { method: 'POST', body: form }).finally(() => (done = true));
    await watching;
    const body = (await res.json()) as Record<string, string | string[]>;
    assert.equal(res.status, 200, JSON.stringify(body));
    const download = await fetch(String(body.output_file ?? body.output_video));
    assert.equal(download.status, 200);
    const file = scratch.path(`${route.replaceAll('/', '')}.mp4`);
    await writeFile(file, Buffer.from(await download.arrayBuffer()));
    assert.equal(await x264Runs(file), PARTS, 'the output is the parts joined');
    assert.equal((await frameTimes(file)).length, FPS * SECONDS);
    assert.equal(await decodeErrors(file), '', 'a clean decode');
    return { file, body, workers: busy.size };
  }

  it(
    'burns a cue across a join, with the subtitles the job restyled, whichever worker takes a part',
    SLOW,
    async () => {
      const { file, workers } = await run('/add-subtitles/', { subtitle_url: files.url('/local/across.srt') });
      assert.equal(workers, 2, 'both workers ran ffmpeg');
      assert.deepEqual(runs(await layerFrames(file, BOTTOM, white)), [
        [25, 49],
        [125, 174],
      ]);
    },
  );

  it("draws text across a join and names the glyphs no font has, from the parts' logs", SLOW, async () => {
    const { file, body } = await run('/add-text/', { text: 'A\uE000B', start: '8', end: '10', position: 'top' });
    assert.deepEqual(runs(await layerFrames(file, TOP, white)), [[200, 249]]);
    assert.match(JSON.stringify(body.warnings), /U\+E000/i);
  });

  it('lays a logo across a join, every part reading the logo', SLOW, async () => {
    const { file } = await run('/overlay-image/', { image_url: files.url('/local/red.png'), start: '2', end: '4' });
    assert.deepEqual(runs(await layerFrames(file, LOGO, red)), [[50, 100]]);
  });
});
