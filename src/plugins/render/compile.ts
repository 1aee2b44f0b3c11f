import {
  argv,
  audioEncoder,
  joinParts,
  muxerFor,
  recogniseSpeech,
  videoEncoder,
  type HeardWord,
  type LocalInput,
  type Plan,
  type ReadyPart,
  type VideoContainer,
} from '../../sdk.js';
import { FrameClock, type Span } from './clock.js';
import { InputList } from './input-list.js';
import { pictureGraph, picturePixelFormat, speechToTranscribe, type HeardSpeech, type SpokenClip } from './picture.js';
import { scenesOf, type SceneLimits } from './scenes.js';
import { SOUND_LABEL, soundAlone, soundGraph } from './sound.js';
import type { RenderFormat, Timeline } from './timeline.js';

/** The filter graph's file in the workspace: graphs go to a file, never on the command line. */
const GRAPH_FILE = 'render.graph';

/** A GIF's palette is made from its own frames (palettegen), then applied with error diffusion. */
const GIF_PALETTE = 'split[gifa][gifb];[gifa]palettegen=stats_mode=diff[gifp];[gifb][gifp]paletteuse=dither=sierra2_4a';

/** The encoder and muxer options of a render's container. */
function encoding(format: RenderFormat, timeline: Timeline): { video: string[]; audio: string[]; muxer: string[] } {
  if (format === 'gif') return { video: ['-f', 'gif', '-loop', '0'], audio: [], muxer: [] };
  const container: VideoContainer = format;
  return {
    video: videoEncoder(container, { quality: timeline.output.quality }),
    audio: audioEncoder(container),
    muxer: muxerFor(container),
  };
}

/** The name of the audio a transcription reads: 16 kHz mono PCM, as whisper.cpp takes it. */
const speechFile = (index: number) => `speech-${index + 1}.wav`;

/**
 * The first stages of a render whose captions come from speech without word times: each spoken clip's sound decoded
 * to what the recogniser reads, then a step that transcribes them; the render is planned once their words are heard,
 * so that its scenes are cut between caption lines.
 */
function transcribing(
  clips: readonly SpokenClip[],
  open: (input: LocalInput) => string[],
  render: (heard: HeardSpeech) => Plan,
): Plan {
  const heard = new Map<string, readonly HeardWord[]>();
  return {
    commands: clips.map((clip, index) =>
      argv(open(clip.media), ['-map', '0:a:0', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', speechFile(index)]),
    ),
    // Decoding the sound takes a moment; the recognition and the render are the job.
    share: 0.05,
    next: () => ({
      steps: [
        {
          label: `whisper.cpp (child process): the speech of ${clips.length} clip(s)`,
          run: async (context) => {
            for (const [index, clip] of clips.entries()) {
              const recognised = await recogniseSpeech(context, speechFile(index), 'auto');
              heard.set(clip.id!, recognised.words);
            }
          },
        },
      ],
      commands: [],
      // Only the step has run when this is called: what it heard is in the map.
      next: () => render(heard),
    }),
  };
}

/** How a render is cut into scenes, and whether they may run at once. */
export interface CompileOptions {
  /** How long a scene may last and how many media files it may draw (scenes.ts). */
  scenes: SceneLimits;
  /** The request's `fanout`: a long timeline's scenes may be made at once, on many workers (docs/fanout.md). */
  fanout: boolean;
}

/**
 * A resolved timeline as ffmpeg commands (docs/render.md): a short in one command, its picture's and sound's graphs in
 * one script, one encode; a long timeline in scenes (scenes.ts), each a video-only encode of its own picture with only
 * its inputs open, the sound once, whole, and a stream copy that joins them. `open` is the engine's safe way to open
 * an input (BuildContext.input).
 */
export function compile(
  timeline: Timeline,
  open: (input: LocalInput) => string[],
  output: string,
  options: CompileOptions,
): Plan {
  const whole = { start: 0, end: timeline.output.duration };
  const render = (heard: HeardSpeech): Plan => {
    const scenes = timeline.output.format === 'gif' ? [whole] : scenesOf(timeline, options.scenes, heard);
    return scenes.length === 1
      ? onePass(timeline, open, output, heard)
      : inScenes(timeline, open, output, scenes, options.fanout, heard);
  };
  const spoken = speechToTranscribe(timeline, whole);
  return spoken.length > 0 ? transcribing(spoken, open, render) : render(new Map());
}

/** The render in one ffmpeg command: the picture's and the sound's graphs in one script, each input opened once. */
function onePass(timeline: Timeline, open: (input: LocalInput) => string[], output: string, heard: HeardSpeech): Plan {
  const { format, duration } = timeline.output;
  const inputs = new InputList(open);
  const picture = pictureGraph(timeline, inputs, { start: 0, end: duration }, heard);
  const sound = soundGraph(timeline, inputs);
  const gif = format === 'gif';
  const video = gif ? `[${picture.output}]${GIF_PALETTE}[rendered]` : undefined;
  const graph = [picture.graph, video, sound].filter((part) => part !== undefined).join(';\n');
  const { video: videoArgs, audio: audioArgs, muxer } = encoding(format, timeline);
  return {
    files: { ...picture.files, [GRAPH_FILE]: graph },
    commands: [
      argv(
        // libass names each character no font has at warning level: the answer's `warnings`.
        ['-loglevel', 'warning'],
        inputs.args(),
        ['-filter_complex_script', GRAPH_FILE],
        ['-map', gif ? '[rendered]' : `[${picture.output}]`],
        sound ? ['-map', `[${SOUND_LABEL}]`] : null,
        gif ? null : ['-pix_fmt', picturePixelFormat(format)],
        videoArgs,
        sound ? audioArgs : null,
        muxer,
        [output],
      ),
    ],
    expectedSeconds: duration,
    answers: { duration },
  };
}

/** Seconds as a label shows them: milliseconds at most. */
const secondsText = (seconds: number): string => String(Math.round(seconds * 1000) / 1000);

/**
 * The render in scenes: each scene's picture a command of its own (only its inputs open, video only, in the output's
 * codec), the sound one command, whole, and the join by stream copy. The commands make them one after another; as
 * `readyParts`, the engine makes them at once when the timeline is long enough (and the request lets it).
 */
function inScenes(
  timeline: Timeline,
  open: (input: LocalInput) => string[],
  output: string,
  scenes: readonly Span[],
  fanout: boolean,
  heard: HeardSpeech,
): Plan {
  const { format, duration, fps } = timeline.output;
  const { video: videoArgs, audio: audioArgs, muxer } = encoding(format, timeline);
  // VP9 parts in WebM, H.264 in MP4: containers the concat demuxer reads, whose streams a webm, an mp4, a mov or a
  // Matroska file takes as they are.
  const container = format === 'webm' ? 'webm' : 'mp4';
  const files: Record<string, string> = {};
  const parts = scenes.map((span, index): ReadyPart => {
    const name = `scene-${String(index).padStart(3, '0')}`;
    const inputs = new InputList(open);
    const picture = pictureGraph(timeline, inputs, span, heard);
    const graph = `${name}.graph`;
    Object.assign(files, picture.files, { [graph]: picture.graph });
    const file = `${name}.${container}`;
    const range = `${secondsText(span.start)} to ${secondsText(span.end)}`;
    return {
      command: argv(
        ['-loglevel', 'warning'],
        inputs.args(),
        ['-filter_complex_script', graph, '-map', `[${picture.output}]`],
        ['-pix_fmt', picturePixelFormat(format)],
        videoArgs,
        ['-an', '-sn', '-dn', '-f', container, file],
      ),
      output: file,
      frames: new FrameClock(fps, span).frames,
      start: span.start,
      seconds: span.end - span.start,
      reads: [...inputs.files(), graph, ...Object.keys(picture.files)],
      label: `Scene ${index + 1} of ${scenes.length} (${range} s of the timeline)`,
    };
  });
  const sound = soundAlone(timeline, open, audioArgs);
  const soundFile = `sound${audioArgs.includes('aac') ? '.m4a' : '.mka'}`;
  const audio = sound && { command: sound.command(soundFile), output: soundFile };
  const join = joinParts({
    parts: parts.map((part) => ({ file: part.output, at: part.start })),
    list: 'scenes.txt',
    ...(audio ? { audio: audio.output } : {}),
    muxer,
    output,
  });
  return {
    files: { ...files, ...(sound ? { [sound.script]: sound.graph } : {}), [join.list]: join.text },
    commands: [...(audio ? [audio.command] : []), ...parts.map((part) => part.command), join.command],
    // Progress follows the scenes; the sound and the join take moments.
    parts: [...(audio ? [0] : []), ...parts.map((part) => part.seconds), 0],
    expectedSeconds: duration,
    answers: { duration },
    ...(fanout ? { readyParts: { parts, ...(audio ? { audio } : {}), muxer, output } } : {}),
  };
}
