import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, it } from './helpers/lifecycle.js';
import { fixture, H264, lavfi } from './helpers/fixtures.js';
import { id3Tag } from './helpers/id3.js';
import { runCli } from './helpers/mediaflow.js';
import { makeMedia, turned, useOperation } from './helpers/operation.js';

const MESSAGE = 'Metadata read successfully';

/** The answer's `metadata`, as the contract shapes it. */
interface Metadata {
  format: string;
  duration: number | null;
  size: number;
  bit_rate: number | null;
  streams: Array<Record<string, string | number>>;
  tags: Record<string, string>;
  tags_truncated: boolean;
}

interface FfprobeStream {
  index: number;
  codec_type: string;
  codec_name: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  sample_rate?: string;
  channels?: number;
  side_data_list?: Array<{ rotation?: number }>;
}

const ratio = (text = '0/0') => {
  const [num, den] = text.split('/').map(Number);
  return num && den ? num / den : 0;
};

/** What a bare `ffprobe -show_format -show_streams` says of a file, put in the answer's shape here, independently. */
async function ffprobeMetadata(file: string): Promise<Metadata> {
  const { stdout } = await execa('ffprobe', ['-v', 'error', '-show_format', '-show_streams', '-of', 'json', file]);
  const { format, streams } = JSON.parse(stdout) as {
    format: { format_name: string; duration?: string; size: string; bit_rate?: string; tags?: Record<string, string> };
    streams: FfprobeStream[];
  };
  return {
    format: format.format_name,
    duration: format.duration ? Number(format.duration) : null,
    size: Number(format.size),
    bit_rate: format.bit_rate ? Number(format.bit_rate) : null,
    streams: streams.flatMap((s): Array<Record<string, string | number>> => {
      const common = { index: s.index, type: s.codec_type, codec: s.codec_name };
      if (s.codec_type === 'video') {
        const rotation = s.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ?? 0;
        const fps = ratio(s.avg_frame_rate) || ratio(s.r_frame_rate);
        return [{ ...common, width: s.width!, height: s.height!, fps, rotation }];
      }
      if (s.codec_type === 'audio') return [{ ...common, sample_rate: Number(s.sample_rate), channels: s.channels! }];
      return s.codec_type === 'subtitle' ? [common] : [];
    }),
    tags: format.tags ?? {},
    // Its tags are within the limits: none is cut.
    tags_truncated: false,
  };
}

describe('media-metadata', () => {
  const op = useOperation({
    fixtures: [
      'clip-2s-640x360-25fps.mp4',
      'tone-1s-22k-mono.wav',
      'clip-2s-320x240.webm',
      'hello.srt',
      'not-media.txt',
    ],
    make: {
      // A phone-style clip: tags, and a display matrix that turns it (ffmpeg 5.1 writes one when it copies).
      'upright.mp4': [
        ...lavfi('testsrc2=size=320x240:rate=25:duration=2', 'sine=frequency=440:duration=2:sample_rate=48000'),
        ...[...H264, '-c:a', 'aac', '-shortest'],
        ...['-metadata', 'title=Beach día', '-metadata', 'artist=Me'],
      ],
      'rotated-tagged.mp4': turned('upright.mp4'),
      'tagged.mp3': [
        ...lavfi('sine=frequency=440:duration=2'),
        ...['-c:a', 'libmp3lame', '-metadata', 'title=Song', '-metadata', 'artist=Singer', '-metadata', 'album=Album'],
      ],
      'subtitled.mkv': async (file) =>
        makeMedia(file, [
          ...['-i', await fixture('clip-2s-320x240.webm'), '-i', await fixture('hello.srt')],
          ...['-map', '0', '-map', '1', '-c', 'copy', '-c:s', 'srt', '-metadata', 'title=Subtitled'],
        ]),
      'bare.mp3': [...lavfi('sine=duration=1'), '-c:a', 'libmp3lame', '-write_id3v2', '0'],
      // Tags past the limits, written before a bare MP3's frames: a 40 KB title, then six notes of 15,000 bytes.
      'long-tags.mp3': async (file, made) => {
        const notes = Array.from({ length: 6 }, (_, i): [string, string] => [
          `TXXX:notes_${i + 1}`,
          'n'.repeat(15_000),
        ]);
        const tag = id3Tag([['TIT2', 'é'.repeat(20_000)], ...notes]);
        await writeFile(file, Buffer.concat([tag, await readFile(made['bare.mp3']!)]));
      },
    },
    pipelines: {
      'clip-facts': `
        name: clip-facts
        description: A clip converted to WebM, and the facts of the result
        inputs:
          clip:
            type: url
        steps:
          webm:
            op: convert-video
            with:
              video_url: "{{ inputs.clip }}"
              format: webm
          facts:
            op: media-metadata
            with:
              media_url: "{{ steps.webm.output }}"
        results:
          video: "{{ steps.webm.output }}"
      `,
      // The same facts step, its output then named as a file: by a step, and as a result.
      'facts-misused': `
        name: facts-misused
        description: Names the output of a step that writes none
        inputs:
          clip:
            type: url
        steps:
          facts:
            op: media-metadata
            with:
              media_url: "{{ inputs.clip }}"
          webm:
            op: convert-video
            with:
              video_url: "{{ steps.facts.output }}"
              format: webm
        results:
          facts: "{{ steps.facts.output }}"
      `,
    },
  });
  const urlOf = (name: string) => (op.made[name] ? op.local(name) : op.files.url(`/f/${name}`));
  /** The local path of an input. */
  const local = async (name: string) => op.made[name] ?? (await fixture(name));

  /** Files under uploads/: reading metadata writes none. */
  const uploads = () => readdir(path.join(op.server.dataDir, 'uploads')).catch(() => []);

  /** Reads over HTTP and checks the answer has the message and the metadata, and no output file. */
  const read = async (name: string): Promise<Metadata> => {
    const res = await op.server.post('/media-metadata/', { media_url: urlOf(name) });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.message, 'Metadata read successfully');
    assert.equal(res.body.output_file, undefined, 'no output file');
    return res.body.metadata as unknown as Metadata;
  };

  // Read in process from their headers (MP4, MP3, WAV), and by ffprobe (WebM, Matroska with subtitles).
  const NAMES = ['rotated-tagged.mp4', 'clip-2s-640x360-25fps.mp4', 'tagged.mp3', 'tone-1s-22k-mono.wav'];
  for (const name of [...NAMES, 'clip-2s-320x240.webm', 'subtitled.mkv']) {
    it(`answers for ${name} what ffprobe reports, and writes no file`, async () => {
      const before = await uploads();
      assert.deepEqual(await read(name), await ffprobeMetadata(await local(name)));
      assert.deepEqual(await uploads(), before);
      assert.deepEqual(await op.server.workLeftovers(), []);
    });
  }

  it('cuts a tag past 16 KiB, and the tags past 64 KiB in all, and says so (issue 33)', async () => {
    const { tags, tags_truncated } = await read('long-tags.mp3');
    assert.equal(tags_truncated, true);
    // 'é' is two bytes: the title keeps 8,192 of its 20,000, cut between characters.
    assert.equal(tags.title, 'é'.repeat(8192));
    // Then the notes in their order, as much as fits: three whole, the fourth cut, the last two left out.
    assert.deepEqual(
      Object.entries(tags).map(([name, value]) => [name, value.length]),
      [
        ['title', 8192],
        ['notes_1', 15_000],
        ['notes_2', 15_000],
        ['notes_3', 15_000],
        ['notes_4', 64 * 1024 - ('title'.length + 16 * 1024 + 3 * (7 + 15_000) + 7)],
      ],
    );
  });

  it('names the rotation, the tags, the streams by kind and the size', async () => {
    const rotated = await read('rotated-tagged.mp4');
    assert.equal(rotated.format, 'mov,mp4,m4a,3gp,3g2,mj2');
    assert.deepEqual(
      rotated.streams.map((s) => [s.index, s.type, s.codec, s.rotation ?? null, s.sample_rate ?? null]),
      [
        [0, 'video', 'h264', 90, null],
        [1, 'audio', 'aac', null, 48000],
      ],
    );
    assert.equal(rotated.tags.title, 'Beach día');
    assert.equal(rotated.tags.artist, 'Me');
    assert.equal(rotated.size, (await stat(await local('rotated-tagged.mp4'))).size);
    assert.ok(rotated.duration! > 1.9 && rotated.duration! < 2.1, `${rotated.duration}`);
    assert.ok(rotated.bit_rate! > 0);
    const song = await read('tagged.mp3');
    assert.deepEqual([song.tags.title, song.tags.artist, song.tags.album], ['Song', 'Singer', 'Album']);
    const subtitled = await read('subtitled.mkv');
    assert.deepEqual(
      subtitled.streams.map((s) => [s.type, s.codec]),
      [
        ['video', 'vp9'],
        ['audio', 'opus'],
        ['subtitle', 'subrip'],
      ],
    );
  });

  it('runs asynchronously: 202, then the job at /jobs/<id> with the same answer', async () => {
    const { result } = await op.asJob('/media-metadata', { media_url: urlOf('tagged.mp3') }, MESSAGE);
    assert.deepEqual(result.metadata, await ffprobeMetadata(await local('tagged.mp3')));
  });

  it('prints the metadata from the CLI for a local file, and writes nothing', async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'mediaflow-cli-'));
    try {
      const file = await local('rotated-tagged.mp4');
      const result = await runCli(['media-metadata', '--media-url', file, '--out-dir', out]);
      assert.equal(result.exitCode, 0, result.stderr);
      const body = JSON.parse(result.stdout) as { message: string; metadata: Metadata };
      assert.equal(body.message, MESSAGE);
      assert.deepEqual(body.metadata, await ffprobeMetadata(file));
      assert.deepEqual(await readdir(out), []);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('runs as a pipeline step on the output of the step before, the run answering its metadata', async () => {
    const res = await op.server.post('/pipelines/clip-facts', { clip: urlOf('clip-2s-640x360-25fps.mp4') });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const body = res.body as unknown as { outputs: { video: string }; answers: { facts: { metadata: Metadata } } };
    const webm = op.server.pathOf(body.outputs.video);
    assert.deepEqual(body.answers.facts.metadata, await ffprobeMetadata(webm));
    assert.equal(body.answers.facts.metadata.format, 'matroska,webm');
  });

  it('refuses a pipeline that names the output of its step, which writes none, with a 400 before running', async () => {
    const before = await uploads();
    const res = await op.server.post('/pipelines/facts-misused', { clip: urlOf('clip-2s-640x360-25fps.mp4') });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    const issue = "{{ steps.facts.output }} is no file: operation 'media-metadata' writes none";
    assert.ok(res.body.error!.includes(issue), res.body.error);
    assert.deepEqual(await uploads(), before);
    assert.deepEqual(await op.server.workLeftovers(), []);
  });

  it('refuses what is not audio or video with a 422, as other operations do, and leaves nothing behind', async () => {
    await op.expectRefusals('/media-metadata/', [
      [{ media_url: urlOf('not-media.txt') }, 422, /is not readable media/],
      [{ media_url: urlOf('hello.srt') }, 422, /is not a media file: found srt/],
      [{}, 400, 'Missing required parameter `media_url`'],
    ]);
  });
});
