import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { after, before, describe, it } from '../helpers/lifecycle.js';
import { serveFile, startFileServer, type FileServer } from '../helpers/file-server.js';
import { assertNearRgb, audioOf, durationOf, frameRgb, probe, toneDbAt, videoOf } from '../helpers/media.js';
import { startMediaflow, type TestServer } from '../helpers/mediaflow.js';

const PIPELINES = path.resolve(import.meta.dirname, '../../pipelines');
type Frame = Awaited<ReturnType<typeof frameRgb>>;

const VOICE_HZ = 300;
const MUSIC_HZ = 1000;
/** The voice speaks from 0 to 3 s and from 5.5 to 8 s; the pause between is longer than the ducking's release. */
const VOICE = `aevalsrc=exprs='0.25*sin(2*PI*${VOICE_HZ}*t)*(lt(t\\,3)+gte(t\\,5.5))':s=48000:d=8`;
/** Two images of 4 s each: the short lasts 8 s, as long as the voice, with one fade from 4 to 4.5 s. */
const SECONDS_PER_IMAGE = 4;

/** The first white column of row `y`, from the left: where the white square's left edge is shown. */
function whiteEdge(frame: Frame, y: number): number {
  for (let x = 0; x < frame.width; x++) if (frame.pixel(x, y).every((c) => c > 200)) return x;
  return -1;
}

/** Gold pixels (the word being said: the pictures are red and blue, the logo green) in the frame's middle third. */
function highlighted(frame: Frame): number {
  let gold = 0;
  for (let y = 427; y < 853; y += 2)
    for (let x = 0; x < frame.width; x += 2) {
      const [r, g, b] = frame.pixel(x, y);
      if (r > 200 && g > 150 && b < 90) gold++;
    }
  return gold;
}

describe('pipeline narrated-short', () => {
  let files: FileServer;
  let server: TestServer;
  let work: string;
  const made: Record<string, string> = {};

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-narrated-short-'));
    const recipes: Record<string, string[]> = {
      // Red with a white square up and to the left of the centre: a zoom into the centre pushes it further out.
      'first.png': ['-f', 'lavfi', '-i', 'color=c=red:s=720x1280,drawbox=x=100:y=250:w=120:h=120:color=white:t=fill'],
      'second.png': ['-f', 'lavfi', '-i', 'color=c=blue:s=720x1280'],
      // An opaque green logo, twice as wide as high.
      'logo.png': ['-f', 'lavfi', '-i', 'color=c=0x00ff00:s=200x100'],
      'voice.wav': ['-f', 'lavfi', '-i', VOICE],
      // The music, a quarter of the voice's length: looped four times.
      'music.mp3': ['-f', 'lavfi', '-i', `sine=f=${MUSIC_HZ}:r=48000:d=2`],
      // A video without sound, given as the music.
      'silent.mp4': ['-f', 'lavfi', '-i', 'testsrc2=s=320x240:r=25:d=2', '-pix_fmt', 'yuv420p'],
    };
    const routes: Record<string, ReturnType<typeof serveFile>> = {};
    for (const [name, args] of Object.entries(recipes)) {
      made[name] = path.join(work, name);
      const still = name.endsWith('.png') ? ['-frames:v', '1'] : [];
      await execa('ffmpeg', ['-v', 'error', ...args, ...still, made[name]]);
      routes[`/local/${name}`] = serveFile(made[name], 'application/octet-stream');
    }
    files = await startFileServer(routes);
    server = await startMediaflow({ MEDIAFLOW_PIPELINES_DIR: PIPELINES });
  });
  after(async () => {
    await server?.close();
    await files?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const fields = () => ({
    text: 'Every word lights up in turn. The music dips under the voice.',
    images: `${files.url('/local/first.png')},${files.url('/local/second.png')}`,
    voice: files.url('/local/voice.wav'),
    music: files.url('/local/music.mp3'),
    logo: files.url('/local/logo.png'),
    seconds_per_image: String(SECONDS_PER_IMAGE),
  });

  it(
    'runs over HTTP: a 720x1280 short as long as the voice, zooming and fading, the music ducked under the ' +
      'voice, the logo in its corner, the captions highlighted word by word',
    async () => {
      const res = await server.post('/pipelines/narrated-short/', fields());
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.message, 'Pipeline narrated-short completed successfully');
      const short = server.pathOf((res.body.outputs as unknown as { short: string }).short);
      const info = await probe(short);
      const video = videoOf(info)!;
      assert.deepEqual([video.codec_name, video.width, video.height], ['h264', 720, 1280]);
      assert.ok(audioOf(info), 'a sound track');
      assert.ok(Math.abs(durationOf(info) - 2 * SECONDS_PER_IMAGE) <= 0.15, `lasts ${durationOf(info)} s`);

      const [start, later, fade, second] = await Promise.all(
        [0.2, 3.2, 4.24, 6].map((seconds) => frameRgb(short, seconds)),
      );
      // The zoom: the square's left edge moves out, left, as the picture grows.
      const [edgeFirst, edgeLater] = [whiteEdge(start!, 300), whiteEdge(later!, 300)];
      assert.ok(edgeFirst > 0 && edgeLater > 0, `the square is shown (${edgeFirst}, ${edgeLater})`);
      assert.ok(edgeFirst - edgeLater >= 10, `the square moves out with the zoom: x ${edgeFirst} then ${edgeLater}`);
      // Halfway through the fade, red and blue are blended; afterwards the second picture alone.
      assertNearRgb(fade!.pixel(360, 1100), [128, 0, 128], 45, 'halfway through the fade');
      assertNearRgb(second!.pixel(360, 1100), [0, 0, 255], 30, 'the second picture');
      // The logo: 20% of the width (144 px), a margin of 3% (22 px) from the top and right edges.
      assertNearRgb(later!.pixel(626, 58), [0, 255, 0], 40, 'the logo, top right');
      assertNearRgb(later!.pixel(626, 130), [255, 0, 0], 40, 'below the logo, the picture');
      assertNearRgb(later!.pixel(520, 58), [255, 0, 0], 40, 'left of the logo, the picture');
      // The captions (a line a second, the four lines over by 4 s): a highlighted word in the middle third.
      for (const frame of [start!, later!]) assert.ok(highlighted(frame) > 100, 'a word highlighted');

      // The music loops under the whole voice, and dips while it speaks: 6 dB or more under its level in the pause.
      const [speech, pause, end] = await Promise.all([
        toneDbAt(short, MUSIC_HZ, 1.2, 0.3),
        toneDbAt(short, MUSIC_HZ, 4.6, 0.3),
        toneDbAt(short, MUSIC_HZ, 6.5, 0.3),
      ]);
      assert.ok(pause - speech >= 6, `music ${speech.toFixed(1)} dB under speech, ${pause.toFixed(1)} dB in the pause`);
      assert.ok(end > -60, `the music still plays at 6.5 s, looped (${end.toFixed(1)} dB)`);
      const voice = await toneDbAt(short, VOICE_HZ, 1.2, 0.3);
      const alone = await toneDbAt(made['voice.wav']!, VOICE_HZ, 1.2, 0.3);
      assert.ok(Math.abs(voice - alone) <= 1, `the voice at its own level: ${voice} dB, alone ${alone} dB`);
    },
  );

  it('refuses music without sound (422) with the step that failed, and leaves nothing behind', async () => {
    const res = await server.post('/pipelines/narrated-short/', { ...fields(), music: files.url('/local/silent.mp4') });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.match(res.body.error!, /^Step 'soundtrack' \(mix-audio\) failed: .*no audio stream/);
    assert.deepEqual(await server.workLeftovers(), []);
  });
});
