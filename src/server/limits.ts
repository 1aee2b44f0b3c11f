/**
 * The limits on what a request says about its job, apart from its operation's fields: checked at submission
 * (job-submission.ts) and stated in the OpenAPI document, both from here.
 */

/** Largest `metadata`, in bytes of UTF-8 (of its JSON, for an object). */
export const MAX_METADATA_BYTES = 4096;

/** Longest Idempotency-Key: 1 to this many visible ASCII characters (`!` to `~`). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** The fields a request gives its job beside the operation's own (job-submission.ts reads them). */
export const JOB_FIELD_NAMES: readonly string[] = ['webhook_url', 'metadata'];
