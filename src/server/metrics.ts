import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EngineObserver } from '../engine/engine.js';
import type { JobQueue } from '../engine/queue.js';

/** Prometheus metrics of one server: requests, queue, jobs and downloads. */
export function createMetrics() {
  const registry = new Registry();
  let queue: JobQueue | undefined;
  const requests = new Counter({ name: 'mediaflow_http_requests_total', help: 'HTTP requests by route and status', labelNames: ['method', 'route', 'status'], registers: [registry] });
  new Gauge({ name: 'mediaflow_queue_waiting', help: 'Jobs waiting for a slot', registers: [registry], collect() { this.set(queue?.waiting ?? 0); } });
  new Gauge({ name: 'mediaflow_queue_running', help: 'Jobs running', registers: [registry], collect() { this.set(queue?.running ?? 0); } });
  const jobs = new Histogram({
    name: 'mediaflow_job_duration_seconds',
    help: 'Job durations by operation and outcome',
    labelNames: ['operation', 'outcome'],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180, 600, 1800],
    registers: [registry],
  });
  const downloaded = new Counter({ name: 'mediaflow_downloaded_bytes_total', help: 'Bytes of inputs downloaded', registers: [registry] });

  const observer: EngineObserver = {
    jobEnded: (operation, seconds, outcome) => jobs.observe({ operation, outcome }, seconds),
    downloaded: (bytes) => downloaded.inc(bytes),
  };

  /** Counts every response and serves GET /metrics. */
  const install = (app: FastifyInstance) => {
    app.addHook('onResponse', async (request, reply) => {
      requests.inc({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) });
    });
    app.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));
  };
  /** The queue whose depth the gauges report (it is made after the observer is handed to the engine). */
  const watchQueue = (watched: JobQueue) => {
    queue = watched;
  };
  return { observer, install, watchQueue };
}
