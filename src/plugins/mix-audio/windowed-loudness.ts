import { argv, type LocalInput, type Plan } from '../../sdk.js';

/**
 * One ffmpeg pass that measures the integrated loudness (EBU R128) of several inputs at once, each on a
 * sample of it when it is long: what mix-audio sets its music's gain by. One process rather than one an
 * input: each ffmpeg start costs about 50 ms of CPU.
 */

/** The options of a run whose filters' summaries the next stage reads (at `-loglevel error` they log nothing). */
const LOGGED = ['-loglevel', 'info'];

/**
 * Loudness is measured on the whole of an input up to `WINDOWS.count * WINDOWS.seconds * 2` seconds long; a
 * longer one on `count` windows of `seconds` spread evenly over it, each read by seeking (an input of its own,
 * about 10 ms of CPU each): a 10-minute voice costs 30 s of decoding instead of 600. A gain set by it needs
 * about 1 dB, which the windows give on sound that keeps a level (speech, a song); a recording loud in one
 * place only may be misjudged.
 */
const WINDOWS = { count: 6, seconds: 5 };

/** The spans of an input that its loudness is measured on, as input options: itself whole, or its windows. */
function measuredSpans(media: LocalInput, input: (media: LocalInput) => string[]): string[][] {
  const duration = media.facts.duration;
  if (duration === undefined || duration <= WINDOWS.count * WINDOWS.seconds * 2) return [input(media)];
  return Array.from({ length: WINDOWS.count }, (_, i) => {
    const start = ((i + 0.5) * duration) / WINDOWS.count - WINDOWS.seconds / 2;
    return argv(['-ss', start.toFixed(3), '-t', String(WINDOWS.seconds)], input(media));
  });
}

/** Seconds of an input that are measured: the whole of it, or its windows joined; undefined when it does not say. */
function measuredSeconds(media: LocalInput): number | undefined {
  const duration = media.facts.duration;
  if (duration === undefined) return undefined;
  return duration <= WINDOWS.count * WINDOWS.seconds * 2 ? duration : WINDOWS.count * WINDOWS.seconds;
}

/**
 * The pass, as a stage of its own: ebur128 over each input's first audio stream, over its spans joined end to
 * end, all into one output of nothing. Each filter is named after its input's key (`ebur128@voice`), so that
 * `ebur128Summary(log, key)` tells its summary from the others'. The summaries are read with the sample peak,
 * which costs less than the true peak. One output, expecting the longest of the measured lengths: the engine's
 * cap (`-t`, output-caps.ts) covers an output, so every input's measure stops there, and an input whose header
 * lies about its length (an MP3 claiming 0.43 s that runs 2 h) is not decoded to its real end.
 */
export function measuringPass(
  inputs: Record<string, LocalInput>,
  input: (media: LocalInput) => string[],
): Pick<Plan, 'commands' | 'expectedSeconds'> {
  const spans = Object.entries(inputs).map(([name, media]) => [name, measuredSpans(media, input)] as const);
  let next = 0;
  const chains = spans.map(([name, own]) => {
    const labels = own.map(() => `[${next++}:a:0]`).join('');
    const joined = own.length > 1 ? `${labels}concat=n=${own.length}:v=0:a=1,` : labels;
    return `${joined}ebur128@${name}=peak=sample:framelog=verbose[${name}]`;
  });
  const lengths = Object.values(inputs).map(measuredSeconds);
  const command = argv(
    ...spans.flatMap(([, own]) => own),
    LOGGED,
    ['-filter_complex', chains.join(';')],
    ...spans.map(([name]) => ['-map', `[${name}]`]),
    ['-f', 'null', '-'],
  );
  return {
    ...(lengths.every((seconds) => seconds !== undefined) ? { expectedSeconds: Math.max(...lengths) } : {}),
    commands: [command],
  };
}
