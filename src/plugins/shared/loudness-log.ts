/**
 * What ffmpeg's loudness filters log about a whole stream (EBU R128 / ITU-R BS.1770), read back
 * from stderr at `-loglevel info`: the summary `ebur128` prints when it closes, and the JSON
 * `loudnorm=print_format=json` prints. Both come after everything else the run logged.
 */

/** A stream's loudness as `ebur128=peak=true` measures it. */
export interface LoudnessMeasure {
  /** Integrated loudness, LUFS; -70 (the absolute gate) for silence. */
  integrated: number;
  /** The relative gate of the integrated loudness, LUFS. */
  threshold: number;
  /** Loudness range, LU. */
  range: number;
  /** True peak, dBTP; -Infinity for silence. */
  truePeak: number;
}

/** A number as ffmpeg prints it, `-inf` and `inf` included. */
const LOGGED_NUMBER = String.raw`([-+]?inf|[-+]?\d+(?:\.\d+)?)`;

const numberOf = (text: string): number =>
  text === '-inf' ? -Infinity : text === 'inf' || text === '+inf' ? Infinity : Number(text);

/** Where the last `Summary:` that a filter named `ebur128@<name>` logged begins (the name is a generated word). */
function namedSummary(log: string, name: string): number {
  let start = -1;
  for (const match of log.matchAll(new RegExp(String.raw`^\[ebur128@${name} @ [^\]]*\] Summary:`, 'gm')))
    start = match.index;
  return start;
}

/**
 * The `Summary:` block of the last `ebur128` filter in `log`, or with `name`, of the last one named
 * `ebur128@<name>` (a run that measures several streams names each); undefined when there is none (the
 * run did not reach the end of the stream). The block names two thresholds: the first is the
 * integrated loudness's, the second the loudness range's.
 */
export function ebur128Summary(log: string, name?: string): LoudnessMeasure | undefined {
  const start = name === undefined ? log.lastIndexOf('Summary:') : namedSummary(log, name);
  if (start < 0) return undefined;
  const summary = log.slice(start);
  const field = (label: string, unit: string) =>
    new RegExp(String.raw`^\s*${label}:\s*${LOGGED_NUMBER} ${unit}\s*$`, 'm').exec(summary)?.[1];
  const integrated = field('I', 'LUFS');
  const threshold = field('Threshold', 'LUFS');
  const range = field('LRA', 'LU');
  const truePeak = field('Peak', 'dBFS');
  if ([integrated, threshold, range, truePeak].some((value) => value === undefined)) return undefined;
  return {
    integrated: numberOf(integrated!),
    threshold: numberOf(threshold!),
    range: numberOf(range!),
    truePeak: numberOf(truePeak!),
  };
}

/** What `loudnorm=print_format=json` logs when it closes. */
export interface LoudnormStats {
  /** Integrated loudness of what loudnorm wrote, LUFS. */
  outputIntegrated: number;
  /**
   * How far its output fell short of the target, LU: given back as `offset` to a second, dynamic run over
   * the same input with the same options, it makes up for what the limiter took.
   */
  targetOffset: number;
}

/** The last JSON object `loudnorm` logged, or undefined when there is none. */
export function loudnormStats(log: string): LoudnormStats | undefined {
  const start = log.lastIndexOf('{');
  const end = log.indexOf('}', start);
  if (start < 0 || end < 0) return undefined;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(log.slice(start, end + 1)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const { output_i: outputI, target_offset: offset } = json;
  if (typeof outputI !== 'string' || typeof offset !== 'string') return undefined;
  const stats = { outputIntegrated: numberOf(outputI), targetOffset: numberOf(offset) };
  return Number.isNaN(stats.outputIntegrated) || Number.isNaN(stats.targetOffset) ? undefined : stats;
}
