import {
  argv,
  concatList,
  concatListArgs,
  CONTRACT_VERSION,
  definePlugin,
  even,
  muxerFor,
  Param,
  Type,
  audioEncoder,
  videoEncoder,
  qualityParam,
  type LocalInput,
} from '../sdk.js';

/** Codecs mp4 takes as they are; other inputs are re-encoded even when they match each other. */
const MP4_VIDEO = ['h264', 'hevc', 'av1', 'mpeg4'];
const MP4_AUDIO = ['aac', 'mp3'];
/**
 * The video timescale remuxed inputs get when the first input's is no plain `1/N`: a multiple of
 * the usual frame rates' time bases.
 */
const TIMESCALE = 90000;

/**
 * Whether the concat demuxer can read an input as it is, in a join whose video time base is
 * `videoTimeBase`: an MP4/MOV (the mov demuxer) holding only the streams that are joined (a data
 * or subtitle track would be mapped into the wrong place), whose video time base is the join's
 * and whose audio time base is its sample rate's (what a remuxed input's audio gets). The concat
 * demuxer reads every file's timestamps in the first file's time bases, so any difference would
 * break the timeline.
 */
function joinsAsIs(video: LocalInput, videoTimeBase: string): boolean {
  const { facts } = video;
  const joined = facts.audio ? 2 : 1;
  return (
    facts.formatName.split(',')[0] === 'mov' &&
    facts.streamCount === joined &&
    facts.video!.timeBase === videoTimeBase &&
    (!facts.audio || facts.audio.timeBase === `1/${facts.audio.sampleRate}`)
  );
}

/** Inputs that share codecs, size, frame rate and audio layout can be joined by copying packets. */
export function compatible(videos: LocalInput[]): boolean {
  const first = videos[0]!.facts;
  const fv = first.video!;
  return videos.every(({ facts }) => {
    const v = facts.video!;
    const a = facts.audio;
    const sameVideo =
      MP4_VIDEO.includes(v.codec) &&
      v.codec === fv.codec &&
      v.width === fv.width &&
      v.height === fv.height &&
      v.pixFmt === fv.pixFmt &&
      Math.abs(v.fps - fv.fps) < 0.01 &&
      v.profile === fv.profile;
    const sameAudio =
      a && first.audio
        ? MP4_AUDIO.includes(a.codec) &&
          a.codec === first.audio.codec &&
          a.sampleRate === first.audio.sampleRate &&
          a.channels === first.audio.channels
        : !a && !first.audio;
    return sameVideo && sameAudio;
  });
}

export default definePlugin({
  contract: CONTRACT_VERSION,
  name: 'merge-videos',
  path: '/merge-videos/',
  summary: 'Join several videos into one',
  description:
    'Compatible inputs (same codecs, size, frame rate and audio layout) are joined without re-encoding. ' +
    "Others are scaled to the first input's size, letterboxed, given silence where they lack sound, and " +
    'encoded as H.264/AAC.',
  params: Type.Object({
    video_urls: Param.urlList('video', 'Videos, joined in this order', {
      min: 2,
      tooFew: 'At least two video URLs are required',
    }),
    quality: qualityParam(),
  }),
  output: () => ({ field: 'output_file', path: '{id}_merged.mp4' }),
  build: ({ params, inputs, output, input }) => {
    const videos = inputs.video_urls!;
    const expectedSeconds = videos.reduce((sum, v) => sum + (v.facts.duration ?? 0), 0);
    if (compatible(videos)) {
      // One ffmpeg run when every input joins as it is; an input that does not (another time base,
      // another container, extra streams) is first copied into a mov with the join's video
      // timescale (audio's is its sample rate, which compatible inputs share), keeping only the
      // streams compared above. Packets are copied either way, never re-encoded.
      const firstTimeBase = videos[0]!.facts.video!.timeBase;
      const videoTimeBase = firstTimeBase && /^1\/\d+$/.test(firstTimeBase) ? firstTimeBase : `1/${TIMESCALE}`;
      const withAudio = Boolean(videos[0]!.facts.audio);
      const parts = videos.map((v, i) => (joinsAsIs(v, videoTimeBase) ? v.file : `part${i}.mov`));
      const remux = videos.flatMap((v, i) =>
        parts[i] === v.file
          ? []
          : [
              argv(input(v), ['-map', '0:v:0'], withAudio ? ['-map', '0:a:0'] : null, [
                '-c',
                'copy',
                '-video_track_timescale',
                videoTimeBase.slice(2),
                '-f',
                'mov',
                parts[i]!,
              ]),
            ],
      );
      const files = { 'videos.txt': concatList(parts.map((file) => ({ file }))) };
      // The concat demuxer turns H.264 into Annex B, which writes each input's SPS and PPS into its
      // first key frame: needed when the inputs' differ, a change of every input's first packet when
      // they are the same, so then packets go through untouched.
      const sameSetup = videos.every(
        (v) =>
          v.facts.video!.extradataHash !== undefined &&
          v.facts.video!.extradataHash === videos[0]!.facts.video!.extradataHash,
      );
      return {
        files,
        expectedSeconds,
        commands: [
          ...remux,
          argv(
            sameSetup ? ['-auto_convert', '0'] : null,
            concatListArgs('videos.txt', 'video'),
            ['-map', '0', '-c', 'copy'],
            muxerFor('mp4'),
            [output],
          ),
        ],
      };
    }
    const first = videos[0]!.facts.video!;
    const width = even(first.width);
    const height = even(first.height);
    const fps = first.fps > 0 && first.fps <= 120 ? Number(first.fps.toFixed(3)) : 25;
    const withAudio = videos.some((v) => v.facts.audio);
    const chains = videos.flatMap((v, i) => {
      const picture =
        `[${i}:v:0]scale=${width}:${height}:force_original_aspect_ratio=decrease,` +
        `pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2:color=black,setsar=1,fps=${fps},format=yuv420p[v${i}]`;
      if (!withAudio) return [picture];
      // An input without sound gets silence of its own length, so the tracks stay in step.
      const sound = v.facts.audio
        ? `[${i}:a:0]aresample=48000,aformat=sample_fmts=fltp:channel_layouts=stereo[a${i}]`
        : `anullsrc=r=48000:cl=stereo,atrim=duration=${(v.facts.duration ?? 0).toFixed(3)}[a${i}]`;
      return [picture, sound];
    });
    const pads = videos.map((_, i) => (withAudio ? `[v${i}][a${i}]` : `[v${i}]`)).join('');
    const graph =
      `${chains.join(';')};${pads}concat=n=${videos.length}:v=1:a=${withAudio ? 1 : 0}` +
      `${withAudio ? '[v][a]' : '[v]'}`;
    return {
      expectedSeconds,
      commands: [
        argv(
          ...videos.map((v) => input(v)),
          ['-filter_complex', graph, '-map', '[v]'],
          withAudio ? ['-map', '[a]'] : null,
          videoEncoder('mp4', { quality: params.quality }),
          withAudio ? audioEncoder('mp4') : null,
          muxerFor('mp4'),
          [output],
        ),
      ],
    };
  },
  message: () => 'Videos merged successfully',
});
