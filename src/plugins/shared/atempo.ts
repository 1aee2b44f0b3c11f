/**
 * atempo factors whose product is `speed`, each within 0.5 to 2: the range where atempo keeps
 * the pitch without audible artefacts (0.25 is 0.5 x 0.5; 4 is 2 x 2; 3 is 2 x 1.5).
 */
function atempoChain(speed: number): number[] {
  if (!(speed > 0 && Number.isFinite(speed))) throw new Error(`A speed of ${speed} cannot be played`);
  const factors: number[] = [];
  let rest = speed;
  while (rest > 2) {
    factors.push(2);
    rest /= 2;
  }
  while (rest < 0.5) {
    factors.push(0.5);
    rest /= 0.5;
  }
  return [...factors, rest];
}

/**
 * Samples of silence that put atempo's output back in step with the picture: atempo works in windows
 * of a power of two at or above a 24th of a second, and its output starts half a window late into
 * the input, so without them the sound leads the picture (by 40 ms at half speed, 100 ms at a quarter).
 */
function atempoLead(sampleRate: number): number {
  let window = 1;
  while (window < Math.floor(sampleRate / 24)) window *= 2;
  return window / 2;
}

/**
 * The filters that play a sound at `sampleRate` `speed` times faster, keeping its pitch and its step with the
 * picture: the lead of silence, then the atempo chain.
 */
export const tempoFilters = (speed: number, sampleRate: number): string[] => [
  `adelay=delays=${atempoLead(sampleRate)}S:all=1`,
  ...atempoChain(speed).map((factor) => `atempo=${factor}`),
];
