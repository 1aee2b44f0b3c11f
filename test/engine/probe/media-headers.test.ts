import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, it, before, after } from '../../helpers/lifecycle.js';
import { runFfprobe } from '../../../src/engine/exec/ffmpeg.js';
import { factsFromMovie, movieExtent, readTopLevel, TOP_LEVEL_LIMITS } from '../../../src/engine/probe/iso-media.js';
import { MAX_BOXES } from '../../../src/engine/probe/iso-boxes.js';
import { box, emptyBoxes, emptyBoxesFile, FTYP, paddedMovie } from '../../helpers/iso-boxes.js';
import { mpegAudioFacts } from '../../../src/engine/probe/mpeg-audio.js';
import { subtitleFacts } from '../../../src/engine/probe/subtitle-format.js';
import { waveFacts } from '../../../src/engine/probe/wave-audio.js';
import type { MediaFacts } from '../../../src/engine/contract/media-facts.js';
import { factsFromProbe, probeFile } from '../../../src/engine/probe/probe.js';

const picture = (filter: string) => ['-f', 'lavfi', '-i', filter];
const tone = (rate: number, seconds = 1) => [
  '-f',
  'lavfi',
  '-i',
  `sine=frequency=440:duration=${seconds}:sample_rate=${rate}`,
];
const x264 = (...options: string[]) => ['-c:v', 'libx264', '-preset', 'ultrafast', ...options];
const tags = (pairs: Record<string, string>) =>
  Object.entries(pairs).flatMap(([key, value]) => ['-metadata', `${key}=${value}`]);
const movie = [
  ...picture('testsrc2=size=320x240:rate=25:duration=1'),
  ...tone(44100),
  ...x264(),
  '-c:a',
  'aac',
  '-shortest',
];
const SONG = { title: 'Sóng', artist: 'Singer', album: 'Album', track: '3/10', genre: 'Rock', comment: 'Nice' };

/**
 * Files whose facts are read in process (`quick`), and files left to ffprobe: either way, what
 * the probe returns must be exactly what ffprobe says.
 */
const CASES: Array<{ name: string; args: string[]; quick: boolean; remux?: string[] }> = [
  {
    name: 'high-aac-stereo.mp4',
    args: [
      ...picture('testsrc2=size=640x360:rate=25:duration=1'),
      ...tone(48000),
      ...x264('-pix_fmt', 'yuv420p'),
      '-c:a',
      'aac',
      '-ac',
      '2',
      '-shortest',
      '-movflags',
      '+faststart',
    ],
    quick: true,
  },
  {
    name: 'moov-at-end-90k.mp4',
    args: [
      ...picture('testsrc2=size=320x240:rate=30:duration=1'),
      ...tone(44100),
      ...x264('-pix_fmt', 'yuv420p'),
      '-c:a',
      'aac',
      '-ac',
      '1',
      '-video_track_timescale',
      '90000',
    ],
    quick: true,
  },
  {
    name: 'baseline-mono.mov',
    args: [
      ...picture('testsrc2=size=320x240:rate=25:duration=1'),
      ...tone(44100),
      ...x264('-profile:v', 'baseline', '-pix_fmt', 'yuv420p'),
      '-c:a',
      'aac',
      '-ac',
      '1',
      '-shortest',
    ],
    quick: true,
  },
  {
    name: 'cropped-ntsc-rate.mp4',
    args: [
      ...picture('testsrc2=size=854x480:rate=30000/1001:duration=1'),
      ...x264('-profile:v', 'main', '-pix_fmt', 'yuv420p'),
    ],
    quick: true,
  },
  {
    name: 'high10.mp4',
    args: [...picture('testsrc2=size=320x240:rate=24:duration=1'), ...x264('-pix_fmt', 'yuv420p10le')],
    quick: true,
  },
  {
    name: 'high422.mp4',
    args: [...picture('testsrc2=size=320x240:rate=24:duration=1'), ...x264('-pix_fmt', 'yuv422p')],
    quick: true,
  },
  {
    name: 'full-range.mp4',
    args: [...picture('testsrc2=size=320x240:rate=24:duration=1'), ...x264('-pix_fmt', 'yuvj420p')],
    quick: true,
  },
  { name: 'sound-only.m4a', args: [...tone(22050, 2), '-c:a', 'aac', '-ac', '2'], quick: true },
  { name: 'stereo-44k.mp3', args: [...tone(44100, 2), '-ac', '2', '-c:a', 'libmp3lame', '-b:a', '128k'], quick: true },
  { name: 'vbr-mono-22k.mp3', args: [...tone(22050, 3), '-ac', '1', '-c:a', 'libmp3lame', '-q:a', '4'], quick: true },
  { name: 'mpeg25-8k.mp3', args: [...tone(8000, 2), '-ac', '1', '-c:a', 'libmp3lame', '-b:a', '16k'], quick: true },
  { name: 'stereo-s16.wav', args: [...tone(44100, 1.5), '-ac', '2', '-c:a', 'pcm_s16le'], quick: true },
  { name: 'mono-s16-22k.wav', args: [...tone(22050, 2), '-ac', '1', '-c:a', 'pcm_s16le'], quick: true },
  { name: 'mono-u8-8k.wav', args: [...tone(8000, 1), '-ac', '1', '-c:a', 'pcm_u8'], quick: true },
  // Tags and rotation (a display matrix, which ffmpeg 5.1 writes when it copies the stream).
  {
    name: 'rotated-tagged.mp4',
    args: [...movie, ...tags({ title: 'Hello Wörld', artist: 'Me' })],
    // ffmpeg drops the creation time of what it copies: it is set here.
    remux: ['-metadata:s:v:0', 'rotate=90', ...tags({ creation_time: '2024-01-02T03:04:05Z' })],
    quick: true,
  },
  { name: 'upside-down.mp4', args: movie, remux: ['-metadata:s:v:0', 'rotate=180'], quick: true },
  { name: 'turned-left.mp4', args: movie, remux: ['-metadata:s:v:0', 'rotate=270'], quick: true },
  { name: 'quicktime-tagged.mov', args: [...movie, ...tags({ title: 'Clip', artist: 'Me' })], quick: true },
  { name: 'id3v24-tagged.mp3', args: [...tone(44100, 2), '-c:a', 'libmp3lame', ...tags(SONG)], quick: true },
  {
    name: 'id3v23-tagged.mp3',
    args: [...tone(44100, 2), '-c:a', 'libmp3lame', '-id3v2_version', '3', ...tags(SONG)],
    quick: true,
  },
  {
    name: 'info-tagged.wav',
    args: [...tone(44100), '-c:a', 'pcm_s16le', ...tags({ title: 'Wav', artist: 'X' })],
    quick: true,
  },
  // Left to ffprobe:
  { name: 'track-number.mp4', args: [...movie, ...tags({ track: '3' })], quick: false },
  {
    name: 'id3v23-dated.mp3',
    args: [...tone(44100, 2), '-c:a', 'libmp3lame', '-id3v2_version', '3', ...tags({ date: '2024' })],
    quick: false,
  },
  {
    name: 'numbered-genre.mp3',
    args: [...tone(44100, 2), '-c:a', 'libmp3lame', ...tags({ genre: '13' })],
    quick: false,
  },
  {
    name: 'id3v1.mp3',
    args: [...tone(44100, 2), '-c:a', 'libmp3lame', '-write_id3v1', '1', ...tags(SONG)],
    quick: false,
  },
  { name: 'tagged.mkv', args: [...movie, ...tags({ title: 'MK' })], quick: false },
  {
    name: 'hevc.mp4',
    args: [
      ...picture('testsrc2=size=320x240:rate=25:duration=1'),
      '-c:v',
      'libx265',
      '-preset',
      'ultrafast',
      '-x265-params',
      'log-level=none',
    ],
    quick: false,
  },
  {
    name: 'mp3-in.mp4',
    args: [
      ...picture('testsrc2=size=320x240:rate=25:duration=1'),
      ...tone(44100),
      ...x264(),
      '-c:a',
      'libmp3lame',
      '-shortest',
    ],
    quick: false,
  },
  {
    name: 'two-sound-tracks.mp4',
    args: [
      ...picture('testsrc2=size=320x240:rate=25:duration=1'),
      ...tone(44100),
      '-map',
      '0',
      '-map',
      '1',
      '-map',
      '1',
      ...x264(),
      '-c:a',
      'aac',
      '-shortest',
    ],
    quick: false,
  },
  {
    name: 'fragmented.mp4',
    args: [...picture('testsrc2=size=320x240:rate=25:duration=1'), ...x264(), '-movflags', 'frag_keyframe+empty_moov'],
    quick: false,
  },
  {
    name: 'timecode.mov',
    args: [...picture('testsrc2=size=320x240:rate=25:duration=1'), ...x264(), '-timecode', '01:00:00:00'],
    quick: false,
  },
  {
    name: 'interlaced.mp4',
    args: [
      ...picture('testsrc2=size=320x240:rate=25:duration=1'),
      ...x264('-flags', '+ildct+ilme', '-x264-params', 'interlaced=1'),
    ],
    quick: false,
  },
  {
    name: 'gray.mp4',
    args: [...picture('testsrc2=size=320x240:rate=25:duration=1'), ...x264('-pix_fmt', 'gray')],
    quick: false,
  },
  { name: 'extensible-s24.wav', args: [...tone(48000), '-ac', '2', '-c:a', 'pcm_s24le'], quick: false },
  { name: 'surround-5.1.wav', args: [...tone(48000), '-ac', '6', '-c:a', 'pcm_s16le'], quick: false },
  {
    name: 'constant-bitrate-no-header.mp3',
    args: [...tone(44100, 2), '-c:a', 'libmp3lame', '-b:a', '64k', '-write_xing', '0'],
    quick: false,
  },
];

const SRT = '1\n00:00:00,500 --> 00:00:02,000\nHello\n\n2\n00:00:02,500 --> 00:00:04,000\nthere\n';

/**
 * Subtitle files, written as text: read in process when their first lines say what they are, as
 * ffmpeg's probes read them.
 */
const TEXTS: Array<{ name: string; text: string; quick: boolean }> = [
  { name: 'plain.srt', text: SRT, quick: true },
  { name: 'bom-crlf-blank-lines.srt', text: `\uFEFF\r\n\r\n${SRT.replaceAll('\n', '\r\n')}`, quick: true },
  { name: 'cues.vtt', text: 'WEBVTT\n\n00:00.500 --> 00:02.000\nHello\n', quick: true },
  {
    name: 'styled.ass',
    text:
      '[Script Info]\nScriptType: v4.00+\n\n[V4+ Styles]\nFormat: Name, Fontname, Fontsize\nStyle: ' +
      'Default,Arial,20\n\n[Events]\nFormat: Layer, Start, End, Style, Text\nDialogue: ' +
      '0,0:00:00.50,0:00:02.00,Default,Hello\n',
    quick: true,
  },
  // Words after the cue number: ffmpeg's probe allows them, this reading leaves the file to ffprobe.
  { name: 'numbered-with-words.srt', text: SRT.replace('1\n', '1 (first)\n'), quick: false },
];

/** The facts ffprobe gives, as the engine read them before this reader existed. */
async function ffprobeFacts(dir: string, name: string): Promise<MediaFacts> {
  const stdout = await runFfprobe(
    'ffprobe',
    ['-show_format', '-show_streams', '-show_data_hash', 'md5', '-of', 'json', name],
    { cwd: dir, timeoutMs: 30_000 },
  );
  return factsFromProbe(JSON.parse(stdout));
}

/** The in-process reading alone, without the fall-back to ffprobe. */
async function quickFacts(file: string): Promise<MediaFacts | undefined> {
  const head = await readFile(file);
  if (file.endsWith('.wav')) return waveFacts(head, head.length);
  if (/\.(srt|vtt|ass)$/.test(file)) return subtitleFacts(head);
  if (head.toString('latin1', 4, 8) !== 'ftyp') return mpegAudioFacts(head, head.length, head.subarray(-160));
  const top = await readTopLevel(file);
  return 'moov' in top && top.moov ? factsFromMovie(top.moov, top.ftyp) : undefined;
}

describe('facts read from MP4/MOV, MP3, WAV and subtitle headers in process', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-headers-'));
    const ffmpeg = (...args: string[]) =>
      execa('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args]);
    await Promise.all(
      CASES.map(async ({ name, args, remux }) => {
        const made = path.join(dir, remux ? `made-${name}` : name);
        await ffmpeg(...args, made);
        if (remux) await ffmpeg('-i', made, '-map', '0', '-c', 'copy', ...remux, path.join(dir, name));
      }),
    );
    await Promise.all(TEXTS.map(({ name, text }) => writeFile(path.join(dir, name), text)));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('are exactly what ffprobe reports, and read in process for the common cases only', async () => {
    for (const { name, quick } of [...CASES, ...TEXTS]) {
      const file = path.join(dir, name);
      const expected = await ffprobeFacts(dir, name);
      assert.equal((await quickFacts(file)) !== undefined, quick, `${name}: read in process`);
      // The engine's probe, whichever way it went, must answer as ffprobe does.
      assert.deepEqual(await probeFile('ffprobe', name, { cwd: dir, timeoutMs: 30_000 }), expected, name);
    }
  });

  it('read tags, rotation, size and bit rate, in process as ffprobe reports them', async () => {
    const probe = (name: string) => probeFile('ffprobe', name, { cwd: dir, timeoutMs: 30_000 });
    const rotated = await probe('rotated-tagged.mp4');
    assert.equal(rotated.video?.rotation, 90);
    assert.deepEqual(
      rotated.streams?.map((stream) => stream.type === 'video' && stream.rotation),
      [90, false],
      'video first, then audio',
    );
    assert.equal(rotated.tags?.title, 'Hello Wörld');
    assert.equal(rotated.tags?.artist, 'Me');
    assert.equal(rotated.tags?.creation_time, '2024-01-02T03:04:05.000000Z');
    assert.equal(rotated.tags?.major_brand, 'isom');
    assert.match(rotated.tags?.encoder ?? '', /^Lavf/);
    const size = (await readFile(path.join(dir, 'rotated-tagged.mp4'))).length;
    assert.equal(rotated.size, size);
    assert.equal(rotated.bitRate, Math.trunc((size * 8) / rotated.duration!));
    assert.equal((await probe('upside-down.mp4')).video?.rotation, -180);
    assert.equal((await probe('turned-left.mp4')).video?.rotation, -90);
    assert.equal((await probe('quicktime-tagged.mov')).tags?.title, 'Clip');
    for (const name of ['id3v24-tagged.mp3', 'id3v23-tagged.mp3']) {
      const { tags } = await probe(name);
      assert.deepEqual({ ...tags, encoder: undefined }, { ...SONG, encoder: undefined }, name);
    }
    const wave = await probe('info-tagged.wav');
    assert.equal(wave.tags?.title, 'Wav');
    assert.equal(wave.tags?.artist, 'X');
    assert.deepEqual((await probe('tagged.mkv')).tags?.title, 'MK');
  });

  it('leave a movie header that does not add up to ffprobe instead of throwing', async () => {
    const top = await readTopLevel(path.join(dir, 'high-aac-stereo.mp4'));
    assert.ok('moov' in top && top.moov);
    const { moov, ftyp } = top;
    // Every prefix, and every single corrupted length field, is either read or refused: never a crash.
    for (let cut = 0; cut < moov.length; cut += 7)
      assert.doesNotThrow(() => factsFromMovie(moov.subarray(0, cut), ftyp));
    for (let at = 0; at + 4 <= Math.min(moov.length, 4000); at += 4) {
      const broken = Buffer.from(moov);
      broken.writeUInt32BE(0xfffffff0, at);
      assert.doesNotThrow(() => factsFromMovie(broken, ftyp), `length at ${at}`);
    }
  });

  it('leave a movie header of more boxes than MAX_BOXES to ffprobe, read one within it (issue 33)', async () => {
    const mp4 = await readFile(path.join(dir, 'moov-at-end-90k.mp4'));
    const movieOf = async (bytes: Buffer) => {
      const file = path.join(dir, 'padded.mp4');
      await writeFile(file, bytes);
      const top = await readTopLevel(file);
      assert.ok('moov' in top && top.moov);
      return top;
    };
    // A few dozen boxes are the movie's own: half the allowance more is still read.
    const within = await movieOf(paddedMovie(mp4, MAX_BOXES / 2));
    assert.ok(factsFromMovie(within.moov!, within.ftyp));
    assert.ok(movieExtent(within.moov!));
    // Two million (16 MB), each walked, held the event loop for seconds: the walk stops at the limit.
    const over = await movieOf(paddedMovie(mp4, 2_000_000));
    assert.equal(factsFromMovie(over.moov!, over.ftyp), undefined);
    assert.equal(movieExtent(over.moov!), undefined);
  });

  it('walk the top level a chunk at a time, within a count of boxes, of reads and a time (issue 33)', async () => {
    const file = path.join(dir, 'top-level.mp4');
    const mp4 = await readFile(path.join(dir, 'moov-at-end-90k.mp4'));
    const at = mp4.indexOf('moov', 0, 'latin1') - 4;
    const moov = mp4.subarray(at);
    // 1,000 empty boxes, then ten of 100 KB (each larger than a chunk), then the movie header.
    const big = Array.from({ length: 10 }, () => box('free', Buffer.alloc(100_000)));
    await writeFile(file, Buffer.concat([FTYP, emptyBoxes(1000), ...big, moov]));
    const read = (limits: Partial<typeof TOP_LEVEL_LIMITS>) => readTopLevel(file, { ...TOP_LEVEL_LIMITS, ...limits });
    const found = await read({});
    assert.ok('moov' in found && found.moov?.equals(moov.subarray(8)), 'read within the limits');
    // The file type, the 1,000 small boxes and the first large one's header take one read; each large box
    // after it one (the header at its start), and the movie header after them one more: 11.
    const fewest = await read({ reads: 11 });
    assert.ok('moov' in fewest && fewest.moov);
    for (const limits of [{ boxes: 1011 }, { reads: 10 }, { timeMs: 0 }]) {
      assert.deepEqual(await read(limits), { moov: undefined }, JSON.stringify(limits));
    }
    // A million empty boxes, one read each before, are a few dozen reads, then left to ffprobe.
    await writeFile(file, emptyBoxesFile(1_000_000));
    const reads = () => Number(/^syscr: (\d+)/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
    const before = reads();
    assert.deepEqual(await readTopLevel(file), { moov: undefined });
    assert.ok(reads() - before < 1000, `${reads() - before} reads`);
  });

  it('leave an MP3 whose Xing header disagrees with the file size to ffprobe', async () => {
    const file = path.join(dir, 'stereo-44k.mp3');
    const bytes = await readFile(file);
    assert.ok(mpegAudioFacts(bytes, bytes.length, bytes.subarray(-160)));
    assert.equal(
      mpegAudioFacts(bytes, bytes.length * 2, bytes.subarray(-160)),
      undefined,
      'twice the size the header declares',
    );
  });

  it('leave a WAV whose data chunk runs past the end of the file to ffprobe', async () => {
    const bytes = await readFile(path.join(dir, 'stereo-s16.wav'));
    assert.ok(waveFacts(bytes, bytes.length));
    assert.equal(waveFacts(bytes.subarray(0, bytes.length - 100), bytes.length - 100), undefined);
  });
});
