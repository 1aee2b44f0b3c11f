import { ERRORS } from '../../engine/errors.js';
import { errorContent, errorRefs, PROBLEMS_SCHEMA } from './error-responses.js';
import { MAX_METADATA_BYTES } from '../limits.js';
import { JOB_STATUSES } from '../../jobs/job.js';
import { WARNINGS_SCHEMA } from './plugin-schemas.js';
import { apiKeySecurity, json, parameterRef, SAMPLE_BASE, SAMPLE_ID, schemaRef, type Json } from './shared.js';

/**
 * The asynchronous side of the document (docs/jobs.md): the `Job` and `JobAccepted` schemas, the `202`
 * answer, the `/jobs/{id}` routes and the `jobFinished` webhook.
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
function sampleJob(base: string): Json {
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

/** The routes of jobs: status, events and cancellation. */
export function jobRoutes(secured: boolean): Json {
  const security = apiKeySecurity(secured);
  const jobContent = (example: Json) => ({ 'application/json': { schema: schemaRef('Job'), example } });
  const notFound = { $ref: '#/components/responses/JobNotFound' };
  const job = sampleJob(SAMPLE_BASE);
  const running = { ...job, status: 'running', stage: 'process', progress: 42, finished_at: null, result: null };
  return {
    '/jobs/': {
      get: {
        operationId: 'listJobs',
        summary: "The key's asynchronous jobs, newest first, a page at a time",
        description:
          'The jobs submitted asynchronously (`Prefer: respond-async` or `webhook_url`) that this key may read: with ' +
          "one API key every job, with several (MEDIAFLOW_API_KEYS) only its own. A synchronous request's job is not " +
          'listed (its client had the answer, never the id). A server without an API key lists none (501): there a ' +
          'job is read only by whoever holds its id. Records go with their outputs (MEDIAFLOW_RETENTION).',
        tags: ['jobs'],
        ...security,
        parameters: [
          {
            name: 'limit',
            in: 'query',
            required: false,
            description: 'Jobs in the page',
            schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
          },
          {
            name: 'before',
            in: 'query',
            required: false,
            description: 'The `next` of the page before: the jobs older than this one (a 404 once it has expired)',
            schema: { type: 'string', format: 'uuid' },
          },
        ],
        responses: {
          '200': {
            description: 'A page of jobs',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['jobs', 'next'],
                  properties: {
                    jobs: { type: 'array', items: schemaRef('Job'), description: 'Newest first' },
                    next: {
                      type: ['string', 'null'],
                      format: 'uuid',
                      description: 'The `before` of the next page, or null when this is the last',
                    },
                  },
                },
                example: { jobs: [{ ...running, webhook: null }], next: null },
              },
            },
          },
          '404': notFound,
          ...errorRefs(['MF_ERR_PARAM', 'MF_ERR_AUTH', 'MF_ERR_UNAVAILABLE']),
        },
      },
    },
    '/jobs/{id}': {
      parameters: [parameterRef('JobId')],
      get: {
        operationId: 'getJob',
        summary: 'A job: its status, stage, progress, and its result or error',
        tags: ['jobs'],
        ...security,
        responses: {
          '200': { description: 'The job', content: jobContent(job) },
          '404': notFound,
          ...errorRefs(['MF_ERR_AUTH']),
        },
      },
      delete: {
        operationId: 'cancelJob',
        summary: 'Cancel a queued or running job: its ffmpeg is stopped and its files removed',
        tags: ['jobs'],
        ...security,
        responses: {
          '200': {
            description: 'The job, now cancelled',
            content: jobContent({
              ...job,
              status: 'cancelled',
              stage: 'cancelled',
              progress: 40,
              result: null,
              webhook: null,
            }),
          },
          '404': notFound,
          '409': {
            description: 'The job has already finished (succeeded, failed or cancelled)',
            content: errorContent,
          },
          ...errorRefs(['MF_ERR_AUTH']),
        },
      },
    },
    '/jobs/{id}/events': {
      parameters: [parameterRef('JobId')],
      get: {
        operationId: 'jobEvents',
        summary: "A job's changes as Server-Sent Events",
        description:
          'One event at each change of the job (progress at most every 500 ms), its `data:` line the Job ' +
          'object as JSON (see the Job schema); the stream ends after the job reaches succeeded, failed or ' +
          'cancelled.',
        tags: ['jobs'],
        ...security,
        responses: {
          '200': {
            description: 'An event stream of Job objects',
            content: {
              'text/event-stream': {
                schema: {
                  type: 'string',
                  description: 'Events, each a `data:` line holding a Job object (JSON) and an empty line',
                },
                example: `data: ${JSON.stringify({ ...running, webhook: null })}\n\n`,
              },
            },
          },
          '404': notFound,
          ...errorRefs(['MF_ERR_AUTH']),
        },
      },
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

/** The component parameter of a job's id in its path. */
export function jobParameters(): Json {
  return {
    JobId: {
      name: 'id',
      in: 'path',
      required: true,
      description: "The job's id (job_id)",
      schema: { type: 'string', format: 'uuid' },
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
