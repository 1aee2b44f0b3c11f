import type { Json } from './shared.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH, MAX_METADATA_BYTES } from '../limits.js';

/**
 * What every operation and pipeline run takes to run as a job: the `webhook_url` and `metadata` fields, two headers.
 */

/** The fields every operation and pipeline takes besides its own, for running as a job. */
export function jobFields(encoding: 'form' | 'json'): Json {
  const metadata = `Echoed unchanged in the job and its webhook: a string of at most ${MAX_METADATA_BYTES} bytes`;
  return {
    webhook_url: {
      type: 'string',
      format: 'uri',
      description:
        'Run as a job (answer 202) and POST the job to this URL when it succeeds, fails or is cancelled (see ' +
        'the jobFinished webhook). It passes the same address policy as the input URLs, checked at submission (400).',
    },
    metadata:
      encoding === 'form'
        ? { type: 'string', maxLength: MAX_METADATA_BYTES, description: metadata }
        : {
            description: `${metadata}, or an object whose JSON is at most ${MAX_METADATA_BYTES} bytes`,
            oneOf: [
              { type: 'string', maxLength: MAX_METADATA_BYTES },
              { type: 'object', additionalProperties: true },
            ],
          },
  };
}

/**
 * The headers every operation and pipeline run takes: `Prefer` and `Idempotency-Key`, documented here and checked by
 * job-submission.ts (whose refusals name them).
 */
export const JOB_HEADERS: Json = {
  type: 'object',
  properties: {
    Prefer: {
      type: 'string',
      description:
        '`respond-async` (RFC 7240) runs the request as a job and answers 202 (as a `webhook_url` field ' +
        'does); without it (or the field) the request is answered when done',
      examples: ['respond-async'],
    },
    'Idempotency-Key': {
      type: 'string',
      minLength: 1,
      maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
      pattern: '^[\\x21-\\x7E]+$',
      description:
        "A second request with the same key and the same fields gets the first request's answer (202 with the " +
        'same job_id, or the same synchronous answer) and runs nothing; the same key with other fields is a ' +
        "422. A key lives as long as its job's record.",
      examples: ['order-1234-thumbnail'],
    },
  },
};
