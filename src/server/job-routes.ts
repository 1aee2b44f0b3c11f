import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isTerminal, type JobRecord } from '../jobs/job.js';
import type { JobService } from '../jobs/service.js';
import { MediaflowError, paramError } from '../engine/errors.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';

/** A comment line now and then keeps proxies from closing a quiet event stream. */
const HEARTBEAT_MS = 15_000;

/** Jobs one page of `GET /jobs/` holds by default, and at most. */
const PAGE = { default: 20, max: 100 };

/** `limit` and `before` of `GET /jobs/`, checked. */
function pageOf(request: FastifyRequest): { limit: number; before?: string } {
  const { limit, before } = request.query as { limit?: unknown; before?: unknown };
  if (limit !== undefined && (typeof limit !== 'string' || !/^\d+$/.test(limit) || +limit < 1 || +limit > PAGE.max))
    throw paramError(`Expected \`limit\` to be a whole number from 1 to ${PAGE.max}, got \`${String(limit)}\``);
  if (before !== undefined && typeof before !== 'string') throw paramError('Expected `before` to be one job id');
  return { limit: limit === undefined ? PAGE.default : Number(limit), ...(before === undefined ? {} : { before }) };
}

/**
 * `GET /jobs/` (a key's asynchronous jobs, newest first, by pages), `GET /jobs/<id>`, `GET /jobs/<id>/events`
 * (Server-Sent Events) and `DELETE /jobs/<id>`, behind the API key like every route that holds data; with several
 * keys, each sees only its own jobs (`ownerOf`), another key's being a 404. The list needs a key on the server
 * (`keyed`): without one, a job is read only by whoever holds its id, so no route hands the ids out.
 */
export function registerJobRoutes(
  app: FastifyInstance,
  jobs: JobService,
  onRequest: (request: FastifyRequest) => Promise<void>,
  ownerOf: (request: FastifyRequest) => string | undefined,
  keyed: boolean,
): void {
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  // Open streams end when the server closes; otherwise they would hold it open.
  const streams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const close of streams) close();
  });

  app.get(`${SERVER_PATHS.jobs}/`, { onRequest }, async (request) => {
    if (!keyed)
      throw new MediaflowError(
        'MF_ERR_UNAVAILABLE',
        'Listing jobs needs an API key: set MEDIAFLOW_API_KEY (without one, a job is read only by whoever holds ' +
          'its id)',
      );
    const { limit, before } = pageOf(request);
    const page = await jobs.list(ownerOf(request), limit, before);
    return {
      jobs: await Promise.all(page.jobs.map((record) => jobs.view(record))),
      next: page.more ? page.jobs.at(-1)!.id : null,
    };
  });

  app.get(`${SERVER_PATHS.jobs}/:id`, { onRequest }, async (request) =>
    jobs.view(await jobs.require(idOf(request), ownerOf(request))),
  );

  app.delete(`${SERVER_PATHS.jobs}/:id`, { onRequest }, async (request) =>
    jobs.view(await jobs.cancel(idOf(request), ownerOf(request))),
  );

  app.get(`${SERVER_PATHS.jobs}/:id/events`, { onRequest }, async (request, reply) => {
    const id = idOf(request);
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
