import { argv, type LocalInput, mediaError } from '../../sdk.js';
import { tempoFilters } from '../shared/atempo.js';
import { bridgedSpans, duckingFilters, type Span } from './ducking.js';
import { count, decimal } from './graph-numbers.js';
import { InputList } from './input-list.js';
import { type AudioClip, type Clip, isSound, type SoundClip, type Timeline, type VideoClip } from './timeline.js';

/**
 * The render's sound: every clip heard (a video's sound, an audio, a voice) placed on the timeline, trimmed, retimed,
 * looped, faded, set to its own gain, and summed as it is (no normalisation of the whole), music ducked under the
 * voices; then one stream of exactly the output's length, at SOUND_RATE in stereo, from 0 (docs/render.md). Only
 * numbers and generated labels reach the graph.
 */

/** The sound's sample rate: every clip is brought to it, so that every time below is a whole count of samples. */
export const SOUND_RATE = 48000;

/** The label of the graph's last stream (`[aout]`), to `-map`. */
export const SOUND_LABEL = 'aout';

/**
 * One clip's sound, in samples at SOUND_RATE: where it starts (`delay`), how long it lasts (`length`), and how much of
 * that its media fills (`sounding`; silence after it), from `from` seconds into the media at `speed`.
 */
interface Placed {
  clip: SoundClip;
  input: number;
  loop: boolean;
  from: number;
  speed: number;
  delay: number;
  length: number;
  sounding: number;
  gain: number;
  fadeIn: number;
  fadeOut: number;
}

const samples = (seconds: number): number => Math.round(seconds * SOUND_RATE);

/** The clip's sound is heard: not muted, and its media has sound (a video without any is silent). */
function heard(clip: Clip): clip is SoundClip {
  if (!isSound(clip)) return false;
  if (clip.media.facts.audio) return true;
  if (clip.type === 'video') return false;
  throw mediaError(`Input ${clip.media.source} (${clip.path}) has no audio stream: there is nothing to hear`);
}

/** Seconds of its media a clip skips at its start, and its speed: only a video clip's sound is retimed. */
const trimOf = (clip: SoundClip): number => (clip.type === 'voice' ? 0 : clip.trim);
const speedOf = (clip: SoundClip): number => (clip.type === 'video' ? clip.speed : 1);
const loops = (clip: SoundClip): boolean => clip.type === 'audio' && clip.loop;

/** Seconds of the clip its media's sound fills: all of it when looped or of unknown length. */
function soundingSeconds(clip: SoundClip): number {
  const length = clip.end - clip.start;
  const media = clip.media.facts.duration;
  if (loops(clip) || media === undefined) return length;
  return Math.max(0, Math.min(length, (media - trimOf(clip)) / speedOf(clip)));
}

/** When each voice sounds, bridged (ducking.ts). */
const voiceSpans = (clips: readonly SoundClip[]): Span[] =>
  bridgedSpans(
    clips
      .filter((clip) => clip.type === 'voice' || (clip.type === 'audio' && clip.role === 'voice'))
      .map((clip) => ({ start: clip.start, end: clip.start + soundingSeconds(clip) }))
      .filter((span) => span.end > span.start),
  );

/**
 * The seconds over which a video clip's sound crosses into the next clip's on its track: the transition's overlap, as
 * the picture's xfade does (the incoming clip's own `transition` gives the fade-in).
 */
function transitionOut(clip: VideoClip, clips: readonly Clip[]): number {
  const next = clips
    .filter((other) => other.track === clip.track && other !== clip && other.start >= clip.start)
    .reduce<Clip | undefined>((first, other) => (first && first.start <= other.start ? first : other), undefined);
  return next && 'transition' in next && next.transition && next.start < clip.end ? clip.end - next.start : 0;
}

/** The fades of a clip's sound, in seconds: an audio clip's own, a video clip's across its transitions. */
function fadesOf(clip: SoundClip, clips: readonly Clip[]): { fadeIn: number; fadeOut: number } {
  if (clip.type === 'audio') return { fadeIn: clip.fadeIn, fadeOut: clip.fadeOut };
  if (clip.type === 'video') return { fadeIn: clip.transition?.duration ?? 0, fadeOut: transitionOut(clip, clips) };
  return { fadeIn: 0, fadeOut: 0 };
}

function placed(clip: SoundClip, clips: readonly Clip[], inputs: InputList): Placed {
  const loop = loops(clip);
  const delay = samples(clip.start);
  const length = samples(clip.end) - delay;
  const sounding = Math.min(length, samples(soundingSeconds(clip)));
  const fades = fadesOf(clip, clips);
  // Fades end where the media's sound does, and never ask for more than it has.
  const fadeIn = Math.min(sounding, samples(fades.fadeIn));
  const fadeOut = Math.min(sounding, samples(fades.fadeOut));
  return {
    clip,
    // Each clip's media is decoded as its time comes, from an input of its own (InputList.ownIndex); a looped one is
    // read again from its start at its end, by the demuxer: nothing held in memory.
    input: inputs.ownIndex(clip.media, loop ? ['-stream_loop', '-1'] : []),
    loop,
    from: trimOf(clip),
    speed: speedOf(clip),
    delay,
    length,
    sounding,
    gain: clip.volume === 'mute' ? 0 : clip.volume,
    fadeIn,
    fadeOut,
  };
}

/**
 * The filters that read a clip's media from `from` at `speed`, on the clip's clock (its first sample at 0), exactly
 * `length` samples long. A media's own clock is kept (a sound that starts after its picture starts as late), but a
 * looped one is joined end to end by its samples, so that no gap opens where it comes round again.
 */
function readMedia(p: Placed): string[] {
  const mono = p.clip.media.facts.audio!.channels === 1;
  // atempo is given a little more than it turns into the clip (a tenth of a second), and its end is cut with the rest.
  const needed = Math.ceil(p.length * p.speed) + (p.speed === 1 ? 0 : samples(0.1 * p.speed));
  const first = samples(p.from);
  return [
    // A mono sound is heard at its own level on both sides, as a player plays it (not 3 dB down, as a downmix is).
    mono ? 'pan=stereo|c0=c0|c1=c0' : null,
    p.loop ? `aresample=${SOUND_RATE},asetpts=N/SR/TB` : `aresample=${SOUND_RATE}:async=1:first_pts=0`,
    'aformat=sample_fmts=fltp:channel_layouts=stereo',
    `atrim=start_pts=${count(first)}:end_pts=${count(first + needed)}`,
    'asetpts=PTS-STARTPTS',
    ...(p.speed === 1 ? [] : tempoFilters(p.speed, SOUND_RATE)),
    // Silence after a media shorter than its clip; then the clip's length, to the sample.
    `apad=whole_len=${count(p.length)}`,
    `atrim=end_sample=${count(p.length)}`,
    'asetpts=N/SR/TB',
  ].filter((filter): filter is string => filter !== null);
}

/** The gain and fades of a clip's sound, on its clock; the fade-out ends where its media's sound does. */
function shape(p: Placed): string[] {
  return [
    p.gain === 0 ? null : `volume=${decimal(p.gain)}dB`,
    p.fadeIn > 0 ? `afade=t=in:ss=0:ns=${count(p.fadeIn)}` : null,
    p.fadeOut > 0 ? `afade=t=out:ss=${count(p.sounding - p.fadeOut)}:ns=${count(p.fadeOut)}` : null,
  ].filter((filter): filter is string => filter !== null);
}

const ducked = (clip: SoundClip): clip is AudioClip => clip.type === 'audio' && clip.role === 'music' && clip.duck;

/**
 * The clips in lanes, each lane a run of clips one after the other, in as few lanes as they overlap (greedily, in
 * time order). A lane is one stream, each clip delayed from the end of the one before it: every clip mixed on its
 * own from 0 would carry its silence up to its start through the mix, a cost of the number of clips times the
 * timeline's length (a narration of many voice clips: two lanes, not one stream a clip).
 */
function intoLanes(clips: readonly Placed[]): Placed[][] {
  const lanes: Placed[][] = [];
  for (const clip of [...clips].sort((a, b) => a.delay - b.delay)) {
    const free = lanes.find((lane) => {
      const last = lane.at(-1)!;
      return last.delay + last.length <= clip.delay;
    });
    if (free) free.push(clip);
    else lanes.push([clip]);
  }
  return lanes;
}

/**
 * The sound's filter graph, reading its media through `inputs` (shared with the picture's graph), ending in
 * `[SOUND_LABEL]`: exactly the output's duration, SOUND_RATE, stereo, from 0. Undefined when nothing is heard (no
 * clip with sound, or a gif).
 */
export function soundGraph(timeline: Timeline, inputs: InputList): string | undefined {
  const { output, clips } = timeline;
  if (output.format === 'gif') return undefined;
  // A clip that starts after the output's end is never heard, nor one shorter than a sample; one that runs past the
  // end is cut with the mix.
  const heardClips = clips
    .filter(heard)
    .filter((clip) => clip.start < output.duration && samples(clip.end) > samples(clip.start));
  if (heardClips.length === 0) return undefined;
  const voices = voiceSpans(heardClips);
  const chains: string[] = [];
  let next = 0;
  const lanes = intoLanes(heardClips.map((clip) => placed(clip, clips, inputs))).map((lane, index) => {
    const labels = lane.map((p, i) => {
      const silence = i === 0 ? p.delay : p.delay - (lane[i - 1]!.delay + lane[i - 1]!.length);
      const filters = [
        ...readMedia(p),
        ...shape(p),
        ...(ducked(p.clip) ? duckingFilters({ start: p.clip.start, end: p.clip.end }, voices) : []),
        silence > 0 ? `adelay=delays=${count(silence)}S:all=1` : null,
      ].filter((filter): filter is string => filter !== null);
      const label = `[snd${next++}]`;
      chains.push(`[${count(p.input)}:a:0]${filters.join(',')}${label}`);
      return label;
    });
    if (labels.length === 1) return labels[0]!;
    chains.push(`${labels.join('')}concat=n=${count(labels.length)}:v=0:a=1[sndlane${index}]`);
    return `[sndlane${index}]`;
  });
  const total = samples(output.duration);
  // normalize=0: amix would otherwise divide every lane by the number of lanes sounding.
  const mix = lanes.length > 1 ? `amix=inputs=${count(lanes.length)}:duration=longest:normalize=0,` : '';
  // The output's length exactly: silence after the last sound, the end of a clip past it cut.
  const length = `apad=whole_len=${count(total)},atrim=end_sample=${count(total)}`;
  return [...chains, `${lanes.join('')}${mix}${length},asetpts=N/SR/TB[${SOUND_LABEL}]`].join(';\n');
}

/** The sound alone, for a render whose picture is made in parts: its graph, and the command that writes it. */
export interface SoundAlone {
  /** The graph's file name in the workspace (the plan's `files` holds `graph` under it). */
  script: string;
  graph: string;
  /** ffmpeg's arguments that write the sound, whole, into `output` with the encoder's `audioArgs`. */
  command: (output: string) => string[];
}

/**
 * The timeline's sound rendered on its own (always once and whole, however its picture is made), its inputs opened
 * with `open` (BuildContext.input); undefined when nothing is heard.
 */
export function soundAlone(
  timeline: Timeline,
  open: (media: LocalInput) => string[],
  audioArgs: readonly string[],
  script = 'sound.graph',
): SoundAlone | undefined {
  const inputs = new InputList(open);
  const graph = soundGraph(timeline, inputs);
  if (graph === undefined) return undefined;
  return {
    script,
    graph,
    command: (output) =>
      argv(inputs.args(), ['-filter_complex_script', script, '-map', `[${SOUND_LABEL}]`], audioArgs, [output]),
  };
}
