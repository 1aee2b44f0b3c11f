import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import type { EngineObserver } from '../engine/run/engine-deps.js';
import { JOB_STATUSES } from '../jobs/job.js';
import type { JobObserver, JobService } from '../jobs/service.js';
import { errorRefs } from './openapi/error-responses.js';

/** Who may read /metrics: the metrics token, or the API key in either header (auth.ts' metricsCheck). */
export interface MetricsAccess {
  metricsToken: boolean;
  secured: boolean;
}

/** The route's schema: Prometheus text, behind any one of the schemes that apply. */
function metricsDocs({ metricsToken, secured }: MetricsAccess) {
  const guarded = metricsToken || secured;
  return {
    operationId: 'metrics',
    summary: 'Prometheus metrics',
    description:
      'Needs `Authorization: Bearer <MEDIAFLOW_METRICS_TOKEN>` when the server has a metrics token, else ' +
      'the API key (as `X-API-Key` or a Bearer token) when it has one; open otherwise.',
    tags: ['server'],
    ...(guarded
      ? {
          security: [...(metricsToken ? ['metricsToken'] : []), ...(secured ? ['apiKey', 'apiKeyBearer'] : [])].map(
            (scheme) => ({ [scheme]: [] }),
          ),
        }
      : {}),
    response: {
      200: {
        description: 'Metrics in the Prometheus text format',
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      ...(guarded ? errorRefs(['MF_ERR_AUTH']) : {}),
    },
  };
}

/** Prometheus metrics of one server: requests, queue, jobs, webhooks and downloads. */
export function createMetrics() {
  const registry = new Registry();
  let jobService: JobService | undefined;
  const requests = new Counter({
    name: 'mediaflow_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  new Gauge({
    name: 'mediaflow_queue_waiting',
    help: 'Jobs waiting for a worker',
    registers: [registry],
    async collect() {
      this.set((await jobService?.queue.depth())?.waiting ?? 0);
    },
  });
  new Gauge({
    name: 'mediaflow_queue_running',
    help: 'Jobs being worked',
    registers: [registry],
    async collect() {
      this.set((await jobService?.queue.depth())?.running ?? 0);
    },
  });
  new Gauge({
    name: 'mediaflow_queue_stalled',
    help: 'Jobs this process found abandoned by a dead worker and put back (Redis mode)',
    registers: [registry],
    async collect() {
      this.set((await jobService?.queue.depth())?.stalled ?? 0);
    },
  });
  new Gauge({
    name: 'mediaflow_jobs',
    help: 'Job records by status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const counts = jobService ? await jobService.counts() : undefined;
      for (const status of JOB_STATUSES) this.set({ status }, counts?.[status] ?? 0);
    },
  });
  const queueWait = new Histogram({
    name: 'mediaflow_job_queue_wait_seconds',
    help: 'Time jobs waited in the queue before they started',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'mediaflow_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (delivered, retry, failed)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const jobs = new Histogram({
    name: 'mediaflow_job_duration_seconds',
    help: 'Job durations by operation and outcome',
    labelNames: ['operation', 'outcome'],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180, 600, 1800],
    registers: [registry],
  });
  const downloaded = new Counter({
    name: 'mediaflow_downloaded_bytes_total',
    help: 'Bytes of inputs downloaded',
    registers: [registry],
  });

  const observer: EngineObserver = {
    jobEnded: (operation, seconds, outcome) => jobs.observe({ operation, outcome }, seconds),
    downloaded: (bytes) => downloaded.inc(bytes),
  };

  /** Counts every response and serves GET /metrics, behind `access` (its token or the API key, as `schemes` say). */
  const install = (app: FastifyInstance, access: onRequestHookHandler, schemes: MetricsAccess) => {
    app.addHook('onResponse', async (request, reply) => {
      requests.inc({
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: String(reply.statusCode),
      });
    });
    app.get(SERVER_PATHS.metrics, { onRequest: access, schema: metricsDocs(schemes) }, async (_request, reply) =>
      reply.type(registry.contentType).send(await registry.metrics()),
    );
  };
  const jobObserver: JobObserver = {
    started: (seconds) => queueWait.observe(seconds),
    delivery: (outcome) => deliveries.inc({ outcome }),
  };
  /** The jobs whose queue and records the gauges report (made after the observers are handed over). */
  const watchJobs = (watched: JobService) => {
    jobService = watched;
  };
  return { observer, jobObserver, install, watchJobs };
}
