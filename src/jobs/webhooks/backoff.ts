/**
 * Spacing of webhook retries. With the defaults (MEDIAFLOW_WEBHOOK_BACKOFF 5m, 8 attempts in all)
 * the 7 retries wait 5m * (1 + 2 + 4 + 8 + 16 + 32 + 64) = 5m * 127 = 635 min ≈ 10.6 h in all,
 * the "about ten hours" docs/jobs.md promises; the longest single wait is 5m * 64 ≈ 5.3 h (6.4 h
 * with jitter).
 */

/** ±20%: spreads retries of many jobs that failed together, and 0.8 * 2 > 1.2 keeps each wait longer than the last. */
const JITTER = 0.2;

/**
 * Milliseconds to wait before the next attempt after `failedAttempts` (>= 1) failures:
 * `baseMs * 2^(failedAttempts-1)`, ±20%.
 */
export function retryDelayMs(failedAttempts: number, baseMs: number, random: () => number = Math.random): number {
  if (!Number.isInteger(failedAttempts) || failedAttempts < 1) {
    throw new RangeError(`Expected \`failedAttempts\` to be an integer of at least 1, got \`${failedAttempts}\``);
  }
  const factor = 1 + JITTER * (2 * random() - 1);
  return Math.round(baseMs * 2 ** (failedAttempts - 1) * factor);
}
