import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isTerminal, type JobRecord } from '../jobs/job.js';
import type { JobService } from '../jobs/service.js';
import { MediaflowError } from '../engine/errors.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { errorContent, errorRefs } from './openapi/error-responses.js';
import { sampleJob } from './openapi/jobs.js';
import { apiKeySecurity, responseRef, SAMPLE_BASE, schemaRef, type Json } from './openapi/shared.js';
import { EXPECTED } from './validation.js';

/** A comment line now and then keeps proxies from closing a quiet event stream. */
const HEARTBEAT_MS = 15_000;

/** Jobs one page of `GET /jobs/` holds by default, and at most. */
const PAGE = { default: 20, max: 100 };

/** `limit` and `before` of `GET /jobs/`. */
const PAGE_QUERY = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: PAGE.max,
      default: PAGE.default,
      description: 'Jobs in the page',
      [EXPECTED]: `a whole number from 1 to ${PAGE.max}`,
    }),
  ),
  before: Type.Optional(
    Type.String({
      format: 'uuid',
      description: 'The `next` of the page before: the jobs older than this one (a 404 once it has expired)',
      [EXPECTED]: 'one job id',
    }),
  ),
});

/**
 * A job's id in its path. Its format is not checked (app.ts): an id that is no UUID is an unknown job, a 404 like
 * any other.
 */
const JOB_ID = Type.Object({ id: Type.String({ format: 'uuid', description: "The job's id (job_id)" }) });

/** The documentation of the job routes: summaries, the sample answers, the errors. */
function jobDocs(secured: boolean) {
  const security = apiKeySecurity(secured);
  const jobContent = (example: Json) => ({ 'application/json': { schema: schemaRef('Job'), example } });
  const notFound = responseRef('JobNotFound');
  const job = sampleJob(SAMPLE_BASE);
  const running = { ...job, status: 'running', stage: 'process', progress: 42, finished_at: null, result: null };
  return {
    list: {
      operationId: 'listJobs',
      summary: "The key's asynchronous jobs, newest first, a page at a time",
      description:
        'The jobs submitted asynchronously (`Prefer: respond-async` or `webhook_url`) that this key may read: with ' +
        "one API key every job, with several (MEDIAFLOW_API_KEYS) only its own. A synchronous request's job is not " +
        'listed (its client had the answer, never the id). A server without an API key lists none (501): there a ' +
        'job is read only by whoever holds its id. Records go with their outputs (MEDIAFLOW_RETENTION).',
      tags: ['jobs'],
      ...security,
      querystring: PAGE_QUERY,
      response: {
        200: {
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
        404: notFound,
        ...errorRefs(['MF_ERR_PARAM', 'MF_ERR_AUTH', 'MF_ERR_UNAVAILABLE']),
      },
    },
    get: {
      operationId: 'getJob',
      summary: 'A job: its status, stage, progress, and its result or error',
      tags: ['jobs'],
      ...security,
      params: JOB_ID,
      response: {
        200: { description: 'The job', content: jobContent(job) },
        404: notFound,
        ...errorRefs(['MF_ERR_AUTH']),
      },
    },
    cancel: {
      operationId: 'cancelJob',
      summary: 'Cancel a queued or running job: its ffmpeg is stopped and its files removed',
      tags: ['jobs'],
      ...security,
      params: JOB_ID,
      response: {
        200: {
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
        404: notFound,
        409: { description: 'The job has already finished (succeeded, failed or cancelled)', content: errorContent },
        ...errorRefs(['MF_ERR_AUTH']),
      },
    },
    events: {
      operationId: 'jobEvents',
      summary: "A job's changes as Server-Sent Events",
      description:
        'One event at each change of the job (progress at most every 500 ms), its `data:` line the Job ' +
        'object as JSON (see the Job schema); the stream ends after the job reaches succeeded, failed or ' +
        'cancelled.',
      tags: ['jobs'],
      ...security,
      params: JOB_ID,
      response: {
        200: {
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
        404: notFound,
        ...errorRefs(['MF_ERR_AUTH']),
      },
    },
  };
}

/**
 * `GET /jobs/` (a key's asynchronous jobs, newest first, by pages), `GET /jobs/<id>`, `GET /jobs/<id>/events`
 * (Server-Sent Events) and `DELETE /jobs/<id>`, behind the API key like every route that holds data; with several
 * keys, each sees only its own jobs (`ownerOf`), another key's being a 404. The list needs a key on the server
 * (`keyed`): without one, a job is read only by whoever holds its id, so no route hands the ids out.
 */
export function registerJobRoutes(
  fastify: FastifyInstance,
  jobs: JobService,
  onRequest: (request: FastifyRequest) => Promise<void>,
  ownerOf: (request: FastifyRequest) => string | undefined,
  keyed: boolean,
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const docs = jobDocs(keyed);
  // Open streams end when the server closes; otherwise they would hold it open.
  const streams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const close of streams) close();
  });

  // Without a key the list is refused before its query is checked.
  const needsKey = async () => {
    if (!keyed)
      throw new MediaflowError(
        'MF_ERR_UNAVAILABLE',
        'Listing jobs needs an API key: set MEDIAFLOW_API_KEY (without one, a job is read only by whoever holds ' +
          'its id)',
      );
  };
  app.get(`${SERVER_PATHS.jobs}/`, { onRequest, preValidation: needsKey, schema: docs.list }, async (request) => {
    const { limit = PAGE.default, before } = request.query;
    const page = await jobs.list(ownerOf(request), limit, before);
    return {
      jobs: await Promise.all(page.jobs.map((record) => jobs.view(record))),
      next: page.more ? page.jobs.at(-1)!.id : null,
    };
  });

  app.get(`${SERVER_PATHS.jobs}/:id`, { onRequest, schema: docs.get }, async (request) =>
    jobs.view(await jobs.require(request.params.id, ownerOf(request))),
  );

  app.delete(`${SERVER_PATHS.jobs}/:id`, { onRequest, schema: docs.cancel }, async (request) =>
    jobs.view(await jobs.cancel(request.params.id, ownerOf(request))),
  );

  app.get(`${SERVER_PATHS.jobs}/:id/events`, { onRequest, schema: docs.events }, async (request, reply) => {
    const { id } = request.params;
    // Unknown ids are a 404 in the usual shape, before the stream starts.
    const first = await jobs.require(id, ownerOf(request));
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      // nginx would otherwise buffer the stream and deliver it in lumps.
      'x-accel-buffering': 'no',
    });
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      streams.delete(close);
      unsubscribe();
      clearInterval(heartbeat);
      res.end();
    };
    // An event per change: a record published again unchanged (or read, then heard) is not sent twice.
    // Views are made one after another (result URLs may be signed), so events leave in the order they came.
    let last = '';
    // The stored progress never goes down, but an event can arrive after a newer record was sent (Redis
    // pub/sub delivers late, or the stream read the store first): one with a lower progress is stale, not sent.
    let sent = 0;
    let chain = Promise.resolve();
    const send = (record: JobRecord) => {
      chain = chain.then(async () => {
        if (closed || (record.progress < sent && !isTerminal(record.status))) return;
        sent = Math.max(sent, record.progress);
        const data = JSON.stringify(await jobs.view(record));
        if (closed) return;
        if (data !== last) res.write(`data: ${data}\n\n`);
        last = data;
        if (isTerminal(record.status)) close();
      });
    };
    // Events that arrive while the current state is read are kept, then sent after it in order.
    const early: JobRecord[] = [];
    let ready = false;
    const unsubscribe = jobs.subscribe(id, (record) => (ready ? send(record) : early.push(record)));
    const heartbeat = setInterval(() => !closed && res.write(': keep-alive\n\n'), HEARTBEAT_MS).unref();
    res.on('close', close);
    streams.add(close);
    const current = (await jobs.get(id)) ?? first;
    send(current);
    ready = true;
    for (const record of early) send(record);
  });
}
