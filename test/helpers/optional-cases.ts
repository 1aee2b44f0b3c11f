/** What a test file's cases need that an install may lack (an optional package), and how they skip without it. */
export interface OptionalCases {
  /** Why the cases cannot run here, if they cannot. */
  missing?: string;
  /** Skips a case, saying why, when they cannot run; answers whether it did. */
  skipped: (context: unknown) => boolean;
}

/** Cases of `what` that need something `missing` names when absent: said once on the console. */
export function optionalCases(what: string, missing: string | undefined): OptionalCases {
  if (missing) console.warn(`skipping the ${what} cases: ${missing}`);
  const skipped = (context: unknown) => {
    if (missing) (context as { skip?: (why: string) => void }).skip?.(missing);
    return missing !== undefined;
  };
  return { missing, skipped };
}
