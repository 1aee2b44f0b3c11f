import { CONTRACT_VERSION, definePlugin, Param, Type, type MediaFacts } from '../sdk.js';

const number = (description: string) => Type.Number({ description });

/** One stream of the answer: video, audio or subtitle, with what each kind has. */
const STREAM = Type.Object({
  index: Type.Integer({ description: 'Position in the file, counted as ffprobe counts streams' }),
  type: Type.Union([Type.Literal('video'), Type.Literal('audio'), Type.Literal('subtitle')]),
  codec: Type.String({ description: "The codec's name as ffmpeg gives it (h264, aac, mp3, subrip, ...)" }),
  width: Type.Optional(Type.Integer({ description: 'Video: pixels across, as stored' })),
  height: Type.Optional(Type.Integer({ description: 'Video: pixels down, as stored' })),
  fps: Type.Optional(number('Video: frames per second, averaged over the stream')),
  rotation: Type.Optional(
    number('Video: degrees the file says to turn the picture for display, as ffprobe reports it (0: upright)'),
  ),
  sample_rate: Type.Optional(Type.Integer({ description: 'Audio: samples per second' })),
  channels: Type.Optional(Type.Integer({ description: 'Audio: channels' })),
});

/** The `metadata` field of the answer. */
const METADATA = Type.Object({
  format: Type.String({ description: 'The container as ffmpeg names its demuxer (mov,mp4,m4a,3gp,3g2,mj2; mp3; wav)' }),
  duration: Type.Union([number('Seconds'), Type.Null()]),
  size: number('Bytes of the file'),
  bit_rate: Type.Union([number('Bits per second of the whole file'), Type.Null()]),
  streams: Type.Array(STREAM),
  tags: Type.Record(Type.String(), Type.String(), {
    description:
      "The container's tags (title, artist, encoder, ...): each value at most 16 KiB of UTF-8, all of them " +
      'together at most 64 KiB',
  }),
  tags_truncated: Type.Boolean({
    description: 'true when a tag was cut to those limits or left out (a 60 MB ID3 frame), else false',
  }),
});

/** The facts the probe found, in the answer's words. */
function metadataOf(facts: MediaFacts) {
  return {
    format: facts.formatName,
    duration: facts.duration ?? null,
    size: facts.size ?? 0,
    bit_rate: facts.bitRate ?? null,
    streams: (facts.streams ?? []).map((stream) => {
      if (stream.type === 'audio') {
        const { sampleRate, ...rest } = stream;
        return { ...rest, sample_rate: sampleRate };
      }
      return stream;
    }),
    tags: facts.tags ?? {},
    tags_truncated: facts.tagsTruncated === true,
  };
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'media-metadata',
  path: '/media-metadata/',
  summary: 'Read the duration, size, streams and tags of an audio or video file',
  description:
    'Answers `metadata`: the container, duration, size, bit rate, every video, audio and subtitle stream ' +
    '(codec; size, frame rate and rotation of a picture; sample rate and channels of sound) and the tags. ' +
    'Nothing is written and no ffmpeg runs: MP4/MOV, MP3 and WAV headers are read in process, anything ' +
    'else by ffprobe, with the same answer either way.',
  params: Type.Object({
    media_url: Param.url('media', 'URL of the audio or video to read'),
  }),
  output: () => ({ files: [] }),
  answers: Type.Object({ metadata: METADATA }),
  build: ({ inputs }) => ({ commands: [], answers: { metadata: metadataOf(inputs.media_url![0]!.facts) } }),
  message: () => 'Metadata read successfully',
});
