import assert from 'node:assert/strict';
import { execa } from 'execa';
import { assertCliParity } from './helpers/cli-parity.js';
import { describe, it } from './helpers/lifecycle.js';
import { fixture, H264, lavfi } from './helpers/fixtures.js';
import { audioOf, audioPacketHashes, pcm, probe, type Probed } from './helpers/media.js';
import { makeMedia, UUID, useOperation } from './helpers/operation.js';

const MESSAGE = 'Audio extracted successfully';

/** Seconds of sound a file decodes to (its first audio stream, as 16 kHz samples). */
const soundSeconds = async (file: string) => (await pcm(file, 0, 3600)).length / 16000;

/** MD5 of all the stored bytes of a file's first audio stream, as one run (no decoding). */
const pcmDataHash = async (file: string) =>
  (await execa('ffmpeg', ['-v', 'error', '-i', file, '-map', '0:a:0', '-c', 'copy', '-f', 'md5', 'pipe:1'])).stdout;

/** One frame of the 25 fps inputs. */
const FRAME = 0.04;

/** What ffprobe calls each format's container and codec when it reads the file back. */
const WRITTEN: Record<string, { container: string; codec: string }> = {
  mp3: { container: 'mp3', codec: 'mp3' },
  m4a: { container: 'mov,mp4,m4a,3gp,3g2,mj2', codec: 'aac' },
  aac: { container: 'aac', codec: 'aac' },
  wav: { container: 'wav', codec: 'pcm_s16le' },
  flac: { container: 'flac', codec: 'flac' },
  ogg: { container: 'ogg', codec: 'vorbis' },
  opus: { container: 'ogg', codec: 'opus' },
};

/** A Matroska video of a test pattern and a tone whose sound is encoded with `audio`, and `more` inputs. */
const matroska =
  (audio: string[], more: string[] = []) =>
  (file: string) =>
    makeMedia(file, [
      ...lavfi('testsrc2=size=160x120:rate=25:duration=2', 'sine=frequency=440:duration=2:sample_rate=44100'),
      ...more,
      ...['-map', '0', '-map', '1', ...H264, ...audio, '-shortest', '-f', 'matroska'],
    ]);

describe('extract-audio', () => {
  const op = useOperation({
    fixtures: [
      'clip-2s-640x360-25fps.mp4',
      'clip-2s-320x240.webm',
      'clip-1s-320x240-30fps-silent.mp4',
      'tone-2s-44k-stereo.mp3',
      'hello.srt',
    ],
    // Videos made here, as the shared fixtures have no Matroska with MP3, FLAC or PCM sound, nor with subtitles.
    make: {
      // H.264, MP3 and an SRT track: the subtitles must not reach the output.
      'mp3-subs.mkv': async (file) => {
        const subtitles = ['-i', await fixture('hello.srt'), '-map', '2', '-c:s', 'srt'];
        return matroska(['-c:a', 'libmp3lame', '-q:a', '4'], subtitles)(file);
      },
      // Fastest compression: packets a re-encode at the default level would not reproduce.
      'flac.mkv': matroska(['-c:a', 'flac', '-compression_level', '0']),
      // 24-bit: a copy keeps it, where an encode would write wav's 16 bits.
      'pcm.mkv': matroska(['-c:a', 'pcm_s24le']),
    },
    pipelines: {
      soundtrack: `
        name: soundtrack
        description: A video converted to WebM, and its sound taken out of the result
        inputs:
          clip:
            type: url
        steps:
          webm:
            op: convert-video
            with:
              video_url: "{{ inputs.clip }}"
              format: webm
          sound:
            op: extract-audio
            with:
              video_url: "{{ steps.webm.output }}"
              format: opus
        results:
          video: "{{ steps.webm.output }}"
          sound: "{{ steps.sound.output }}"
      `,
    },
  });
  const urlOf = (name: string) => (op.made[name] ? op.local(name) : op.files.url(`/f/${name}`));
  /** The local path of an input. */
  const local = async (name: string) => op.made[name] ?? (await fixture(name));

  /** Extracts over HTTP, checks the answer's message and path, and returns the file with ffprobe's view of it. */
  const extract = async (name: string, format?: string) => {
    const { file } = await op.expectOutput(
      '/extract-audio/',
      { video_url: urlOf(name), ...(format ? { format } : {}) },
      { message: MESSAGE, name: `${UUID}/audio\\.${format ?? 'mp3'}` },
    );
    return { file, info: await probe(file) };
  };

  /** The output is one audio stream, in the container and codec the format names. */
  const assertWritten = (info: Probed, format: string) => {
    assert.deepEqual(
      info.streams.map((s) => s.codec_type),
      ['audio'],
      `only sound in the ${format} (no picture, subtitles or data)`,
    );
    assert.equal(info.format.format_name, WRITTEN[format]!.container);
    assert.equal(audioOf(info)!.codec_name, WRITTEN[format]!.codec);
  };

  // The source's audio codec fits the format: its packets are copied.
  const copies: Array<{ source: string; format?: string }> = [
    { source: 'clip-2s-640x360-25fps.mp4', format: 'm4a' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'aac' },
    { source: 'clip-2s-320x240.webm', format: 'opus' },
    { source: 'clip-2s-320x240.webm', format: 'ogg' },
    { source: 'mp3-subs.mkv' },
    { source: 'flac.mkv', format: 'flac' },
    { source: 'pcm.mkv', format: 'wav' },
  ];
  for (const { source, format } of copies) {
    it(`copies the sound of ${source} into ${format ?? 'mp3 (the default)'}, byte for byte`, async () => {
      const { file, info } = await extract(source, format);
      const sourceInfo = await probe(await local(source));
      const original = audioOf(sourceInfo)!;
      assert.ok(sourceInfo.streams.some((s) => s.codec_type === 'video'));
      if (source === 'mp3-subs.mkv') assert.ok(sourceInfo.streams.some((s) => s.codec_type === 'subtitle'));
      assert.equal(info.format.format_name, WRITTEN[format ?? 'mp3']!.container);
      assert.deepEqual(
        info.streams.map((s) => [s.codec_type, s.codec_name]),
        [['audio', original.codec_name]],
      );
      if (format === 'wav') {
        // PCM packets are slices of one run of samples, cut differently by each container: compare the whole run.
        assert.equal(await pcmDataHash(file), await pcmDataHash(await local(source)));
        return;
      }
      const [copied, packets] = await Promise.all([audioPacketHashes(file), audioPacketHashes(await local(source))]);
      assert.ok(copied.length > 10, `${copied.length} packets`);
      assert.deepEqual(copied, packets);
    });
  }

  // The codec does not fit: the sound is encoded, and lasts as long as the source's.
  const encodes: Array<{ source: string; format: string }> = [
    { source: 'clip-2s-640x360-25fps.mp4', format: 'mp3' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'wav' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'flac' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'ogg' },
    { source: 'clip-2s-640x360-25fps.mp4', format: 'opus' },
    { source: 'clip-2s-320x240.webm', format: 'm4a' },
    { source: 'clip-2s-320x240.webm', format: 'aac' },
  ];
  for (const { source, format } of encodes) {
    it(`encodes the sound of ${source} as ${format}, as long as the source's within a frame`, async () => {
      const { file, info } = await extract(source, format);
      assertWritten(info, format);
      const [out, original] = await Promise.all([soundSeconds(file), soundSeconds(await local(source))]);
      // A bare AAC stream (ADTS) cannot say how many samples the encoder put before the sound: they play too.
      const priming = format === 'aac' ? 1024 / Number(audioOf(info)!.sample_rate) : 0;
      assert.ok(
        Math.abs(out - original - priming) <= FRAME,
        `${out} s of sound, the source has ${original} s (and ${priming} s of priming)`,
      );
    });
  }

  it('refuses a video without sound with a 422 naming the field, and the other fields, leaving nothing', async () => {
    const silent = urlOf('clip-1s-320x240-30fps-silent.mp4');
    await op.expectRefusals('/extract-audio/', [
      [
        { video_url: silent, format: 'wav' },
        422,
        `Input ${silent} has no audio stream: \`video_url\` must be a video with sound`,
      ],
      [
        { video_url: urlOf('clip-2s-640x360-25fps.mp4'), format: 'wma' },
        400,
        "Unsupported format 'wma'. Supported formats: mp3, wav, aac, m4a, ogg, flac, opus.",
      ],
      [{ format: 'mp3' }, 400, 'Missing required parameter `video_url`'],
      // `video_url` takes a video: a file of sound alone is not one.
      [{ video_url: urlOf('tone-2s-44k-stereo.mp3') }, 422, /is not a video file: found mp3 with audio mp3/],
    ]);
  });

  it('runs from the CLI on a local file, and fails there too on a silent one', async () => {
    const clip = await local('clip-2s-640x360-25fps.mp4');
    await assertCliParity({
      args: ['extract-audio', '--video-url', clip, '--format', 'm4a'],
      message: MESSAGE,
      output: /\/audio\.m4a$/,
      check: async (file) => assert.deepEqual(await audioPacketHashes(file), await audioPacketHashes(clip)),
      refused: {
        args: ['extract-audio', '--video-url', await local('clip-1s-320x240-30fps-silent.mp4')],
        stderr: /has no audio stream: `video_url` must be a video with sound/,
        exitCode: 1,
      },
    });
  });

  it('runs asynchronously: 202, then the job at /jobs/<id> with the same answer', async () => {
    const fields = { video_url: urlOf('clip-2s-320x240.webm'), format: 'flac' };
    const { file } = await op.asJob('/extract-audio', fields, MESSAGE);
    assert.match(file, /\/audio\.flac$/);
    assertWritten(await probe(file), 'flac');
  });

  it('runs as a pipeline step, on the output of the step before', async () => {
    const res = await op.server.post('/pipelines/soundtrack', { clip: urlOf('clip-2s-640x360-25fps.mp4') });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const outputs = res.body.outputs as unknown as Record<string, string>;
    assert.match(outputs.sound!, /\/sound\.opus$/);
    const sound = op.server.pathOf(outputs.sound!);
    assertWritten(await probe(sound), 'opus');
    // The WebM step wrote Opus, so the second step copied it.
    assert.deepEqual(await audioPacketHashes(sound), await audioPacketHashes(op.server.pathOf(outputs.video!)));
  });
});
