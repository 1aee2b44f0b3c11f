import { writeFile } from 'node:fs/promises';
import {
  argv,
  audioEncoder,
  muxerFor,
  recogniseSpeech,
  videoEncoder,
  type HeardWord,
  type LocalInput,
  type Plan,
  type Step,
  type VideoContainer,
} from '../../sdk.js';
import { InputList } from './input-list.js';
import { pictureGraph, picturePixelFormat, textScript, type SpokenClip } from './picture.js';
import { SOUND_LABEL, soundGraph } from './sound.js';
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
 * The first stage of a render whose captions come from speech without word times: each spoken clip's sound decoded
 * to what the recogniser reads; the next stage transcribes them (a step), writes the captions' script and renders.
 */
function transcribing(
  clips: readonly SpokenClip[],
  open: (input: LocalInput) => string[],
  render: (steps: Step[]) => Plan,
  scriptFile: string,
  script: (heard: ReadonlyMap<string, readonly HeardWord[]>) => string | undefined,
): Plan {
  return {
    commands: clips.map((clip, index) =>
      argv(open(clip.media), ['-map', '0:a:0', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', speechFile(index)]),
    ),
    // Decoding the sound takes a moment; the recognition and the render are the job.
    share: 0.05,
    next: () =>
      render([
        {
          label: `whisper.cpp (child process): the speech of ${clips.length} clip(s) -> ${scriptFile}`,
          run: async (context) => {
            const heard = new Map<string, readonly HeardWord[]>();
            for (const [index, clip] of clips.entries()) {
              const recognised = await recogniseSpeech(context, speechFile(index), 'auto');
              heard.set(clip.id!, recognised.words);
            }
            await writeFile(context.path(scriptFile), script(heard) ?? '', 'utf8');
          },
        },
      ]),
  };
}

/**
 * A resolved timeline as one ffmpeg command: the picture's and the sound's graphs in one script, each input opened
 * once, one encode (docs/render.md). `open` is the engine's safe way to open an input (BuildContext.input).
 */
export function compile(timeline: Timeline, open: (input: LocalInput) => string[], output: string): Plan {
  const { format, duration } = timeline.output;
  const inputs = new InputList(open);
  const span = { start: 0, end: duration };
  const picture = pictureGraph(timeline, inputs, span);
  const sound = soundGraph(timeline, inputs);
  const gif = format === 'gif';
  const video = gif ? `[${picture.output}]${GIF_PALETTE}[rendered]` : undefined;
  const graph = [picture.graph, video, sound].filter((part) => part !== undefined).join(';\n');
  const { video: videoArgs, audio: audioArgs, muxer } = encoding(format, timeline);
  const render = (steps: Step[] = []): Plan => ({
    files: { ...picture.files, [GRAPH_FILE]: graph },
    ...(steps.length > 0 ? { steps } : {}),
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
  });
  if (!picture.speech) return render();
  const { file, clips } = picture.speech;
  return transcribing(clips, open, render, file, (heard) => textScript(timeline, span, heard));
}
