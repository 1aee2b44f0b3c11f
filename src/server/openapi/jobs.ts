import { ERRORS } from '../../engine/errors.js';
import { errorContent, PROBLEMS_SCHEMA } from './error-responses.js';
import { MAX_METADATA_BYTES } from '../limits.js';
import { JOB_STATUSES } from '../../jobs/job.js';
import { WARNINGS_SCHEMA } from './plugin-schemas.js';
import { json, SAMPLE_BASE, SAMPLE_ID, schemaRef, type Json } from './shared.js';

/**
 * The asynchronous side of the document (docs/jobs.md): the `Job` and `JobAccepted` schemas, the `202`
 * answer and the `jobFinished` webhook; the `/jobs/` routes declare theirs in job-routes.ts.
 */

const JOB_STATUS = { type: 'string', enum: [...JOB_STATUSES] };

/** The component schemas of jobs: `JobAccepted` (the 202 body) and `Job`. */
export function jobSchemas(): Json {
  const dateTime = (description: string, nullable: boolean) => ({
    type: nullable ? ['string', 'null'] : 'string',
    format: 'date-time',
    description,
  });
  return {
    JobAccepted: {
      type: 'object',
      description: 'The answer of an asynchronous request (202)',
      required: ['job_id', 'status', 'status_url'],
      properties: {
        job_id: { type: 'string', format: 'uuid', description: "The job's id, a random UUID v4" },
        status: {
          ...JOB_STATUS,
          description: "`queued` for a new job; a request that repeats an Idempotency-Key gets the job's status now",
        },
        status_url: {
          type: 'string',
          format: 'uri',
          description:
            '`{base_url}/jobs/<job_id>`: GET it for the job, `/events` after it for its changes, DELETE it to cancel',
        },
      },
      examples: [{ job_id: SAMPLE_ID, status: 'queued', status_url: `${SAMPLE_BASE}/jobs/${SAMPLE_ID}` }],
    },
    Job: {
      type: 'object',
      description:
        'An operation or pipeline run as a job: GET /jobs/{id}, each event of /jobs/{id}/events, and the body ' +
        'of the jobFinished webhook',
      required: [
        'job_id',
        'kind',
        'name',
        'status',
        'stage',
        'progress',
        'created_at',
        'started_at',
        'finished_at',
        'result',
        'error',
        'metadata',
        'webhook',
      ],
      properties: {
        job_id: { type: 'string', format: 'uuid', description: "The job's id, a random UUID v4" },
        kind: { type: 'string', enum: ['operation', 'pipeline'] },
        name: { type: 'string', description: "The operation's name (as GET /health lists it) or the pipeline's" },
        status: { ...JOB_STATUS, description: 'succeeded, failed and cancelled are terminal' },
        stage: {
          type: 'string',
          description:
            'What the job is doing now, such as `download`, `probe`, `process` or `publish` (in a pipeline, ' +
            "prefixed by the step's name), and its status once it has finished",
        },
        progress: { type: 'integer', minimum: 0, maximum: 100, description: 'Percent done; it never goes down' },
        created_at: dateTime('When the job was accepted (ISO 8601, UTC)', false),
        started_at: dateTime('When it started running, or null', true),
        finished_at: dateTime('When it reached its terminal status, or null', true),
        result: {
          type: ['object', 'null'],
          description:
            "Exactly the synchronous success body once succeeded: an operation's `{message, <output field>: " +
            'url}` (or `output_file` and `output_files`, and its answer fields; with `warnings` when there are ' +
            "some), a pipeline's `{message, outputs}` (and `answers`); else null",
          required: ['message'],
          properties: { message: { type: 'string' }, warnings: WARNINGS_SCHEMA },
          additionalProperties: true,
        },
        error: {
          type: ['object', 'null'],
          description:
            'Once failed, the status, text and code the synchronous request would have answered with; else null',
          required: ['status', 'error', 'code'],
          properties: {
            status: { type: 'integer', minimum: 400, maximum: 599 },
            error: { type: 'string' },
            code: { type: 'string', enum: Object.keys(ERRORS), description: 'As in an error answer (docs/errors.md)' },
            errors: PROBLEMS_SCHEMA,
          },
        },
        metadata: {
          type: ['string', 'object', 'null'],
          maxLength: MAX_METADATA_BYTES,
          additionalProperties: true,
          description: 'The `metadata` field of the request, unchanged, or null',
        },
        webhook: {
          type: ['object', 'null'],
          description: 'The delivery to `webhook_url`, or null when the request had none',
          required: ['url', 'attempts', 'last_status', 'delivered_at', 'next_attempt_at'],
          properties: {
            url: {
              type: 'string',
              description:
                'The `webhook_url` as scheme, host and path: its user info is left out and a query shows as ' +
                "`?(query redacted)` (it often holds the receiver's token). Deliveries go to the full URL.",
              examples: ['https://hooks.example.com/zap?(query redacted)'],
            },
            attempts: { type: 'integer', minimum: 0, description: 'Deliveries tried so far' },
            last_status: {
              type: ['integer', 'null'],
              description: "The HTTP status of the last attempt's answer, or null (none yet, or no answer)",
            },
            delivered_at: dateTime('When a 2xx answer came, or null', true),
            next_attempt_at: dateTime(
              'When the next attempt is due (the first one: when the job ended), or null once delivered or given up',
              true,
            ),
          },
        },
      },
    },
  };
}

/** A sample job, for the documents' examples. */
export function sampleJob(base: string): Json {
  return {
    job_id: SAMPLE_ID,
    kind: 'operation',
    name: 'merge-audios',
    status: 'succeeded',
    stage: 'succeeded',
    progress: 100,
    created_at: '2025-01-01T12:00:00.000Z',
    started_at: '2025-01-01T12:00:00.120Z',
    finished_at: '2025-01-01T12:00:04.870Z',
    result: { message: 'Audios merged successfully', output_file: `${base}/uploads/${SAMPLE_ID}/merged_output.mp3` },
    error: null,
    metadata: 'order 1234',
    webhook: {
      url: 'https://example.com/hooks/mediaflow',
      attempts: 1,
      last_status: 204,
      delivered_at: '2025-01-01T12:00:05.010Z',
      next_attempt_at: null,
    },
  };
}

/** The top-level `webhooks` of the document: `jobFinished`, the POST to a job's `webhook_url`. */
export function webhooks(): Json {
  return {
    jobFinished: {
      post: {
        operationId: 'jobFinished',
        summary: 'A job succeeded, failed or was cancelled: mediaflow POSTs it to its webhook_url',
        description:
          'The body is the Job as JSON. A 2xx answer within 15 s is a delivery; anything else is retried with ' +
          'exponential back-off and jitter, across restarts: the first retry after MEDIAFLOW_WEBHOOK_BACKOFF ' +
          '(default 5m), each later one after about twice the previous delay, MEDIAFLOW_WEBHOOK_ATTEMPTS ' +
          'attempts in all (default 8). Redirects are not followed. ' +
          'With MEDIAFLOW_WEBHOOK_SECRET (`whsec_` + base64) set, verify `webhook-signature` as the Standard ' +
          'Webhooks specification says: the base64 HMAC-SHA256, keyed with the decoded secret, of ' +
          '`<webhook-id>.<webhook-timestamp>.<body>`.',
        tags: ['jobs'],
        parameters: [
          {
            name: 'webhook-id',
            in: 'header',
            required: true,
            description:
              "The delivery's id, the same on every attempt, so a receiver can drop repeats (Standard Webhooks)",
            schema: { type: 'string' },
          },
          {
            name: 'webhook-timestamp',
            in: 'header',
            required: true,
            description: 'Unix time of the attempt, in seconds (part of what is signed)',
            schema: { type: 'string', pattern: '^[0-9]+$' },
          },
          {
            name: 'webhook-signature',
            in: 'header',
            required: false,
            description:
              'Present when the server has MEDIAFLOW_WEBHOOK_SECRET set: `v1,<base64 HMAC-SHA256 of ' +
              '"<webhook-id>.<webhook-timestamp>.<body>">` (Standard Webhooks; receivers accept any of several ' +
              'space-separated signatures)',
            schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$' },
          },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: schemaRef('Job'), example: sampleJob('https://mediaflow.example.com') },
          },
        },
        responses: {
          '2XX': { description: 'Delivered: no more attempts' },
          default: { description: 'Not delivered (as is no answer within 15 s, or a redirect): retried later' },
        },
      },
    },
  };
}

/** The component responses of jobs: `Accepted` (202) and `JobNotFound`. */
export function jobResponses(): Json {
  return {
    Accepted: {
      description:
        'Accepted as a job (a `webhook_url` field or `Prefer: respond-async`), once the fields are valid: ' +
        'follow `status_url`',
      headers: {
        Location: {
          required: true,
          description: "The job's URL, as `status_url`",
          schema: { type: 'string', format: 'uri' },
        },
      },
      content: json(schemaRef('JobAccepted')),
    },
    JobNotFound: {
      description: 'No such job (unknown, or its record expired with its outputs)',
      content: errorContent,
    },
  };
}
