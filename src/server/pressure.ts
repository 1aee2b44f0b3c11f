import { monitorEventLoopDelay } from 'node:perf_hooks';
import v8 from 'node:v8';
import type { FastifyInstance } from 'fastify';
import { busyError } from '../engine/errors.js';

/** How often the event-loop delay and the heap are sampled. */
const SAMPLE_MS = 1000;
/** The delay histogram's resolution; its own timer adds about this much to every sample. */
const RESOLUTION_MS = 10;
/** Seconds a client refused under pressure is asked to wait. */
const RETRY_AFTER_S = 10;

/**
 * Refuses requests with a 503 and Retry-After while the event loop lags or the heap is nearly full,
 * rather than fall over. This replaces @fastify/under-pressure, whose timer calls
 * process.memoryUsage(): that opens /proc/self/statm and throws EMFILE, uncaught, once a flood of
 * connections has taken every descriptor. The heap figure here comes from V8 and opens nothing.
 */
export function installPressureCheck(app: FastifyInstance, maxEventLoopDelayMs: number): void {
  const maxHeapBytes = Math.floor(v8.getHeapStatistics().heap_size_limit * 0.9);
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  let delayMs = 0;
  let heapBytes = 0;
  const timer = setInterval(() => {
    // No samples yet (the loop was blocked the whole interval) reads as NaN: as lagging as can be.
    const mean = histogram.mean / 1e6 - RESOLUTION_MS;
    delayMs = Number.isNaN(mean) ? Infinity : Math.max(0, mean);
    histogram.reset();
    heapBytes = v8.getHeapStatistics().used_heap_size;
  }, SAMPLE_MS).unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    histogram.disable();
  });
  app.addHook('onRequest', async () => {
    if ((maxEventLoopDelayMs > 0 && delayMs > maxEventLoopDelayMs) || heapBytes > maxHeapBytes) {
      throw busyError('Server is under heavy load; retry later', RETRY_AFTER_S);
    }
  });
}
