import { Option } from 'commander';

/**
 * The key commander stores a `--flag`'s value under, by commander's own camelCase (`line-2` → `line2`,
 * `s3-bucket` → `s3Bucket`). Asking commander instead of converting by hand keeps the two from ever disagreeing.
 */
export const flagKey = (flag: string): string => new Option(`--${flag}`).attributeName();
