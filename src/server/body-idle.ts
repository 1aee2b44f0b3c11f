import type { IncomingMessage } from 'node:http';
import { MediaflowError } from '../engine/errors.js';

/** The 408 of a body that stopped arriving. */
export const bodyIdleError = (idleMs: number) =>
  new MediaflowError(
    'MF_ERR_REQUEST_TIMEOUT',
    `The request body stopped arriving: no byte for ${idleMs / 1000} s (MEDIAFLOW_BODY_IDLE_TIMEOUT)`,
  );

export interface IdleWatch {
  /** Aborts, with the 408 as its reason, once the body has gone `idleMs` without a byte. */
  signal: AbortSignal;
  stop: () => void;
}

/**
 * Watches a request body being read (call it once the body is piped to its parser: a 'data'
 * listener set earlier would let bytes flow past it). Only the client's silence counts: while the
 * server holds the body back itself (the stream paused, or bytes waiting for the parser, as when
 * the disk is slower than the network), the wait starts again. A slow upload that keeps arriving
 * is never cut; `idleMs` 0 turns the watch off.
 */
export function watchIdleBody(raw: IncomingMessage, idleMs: number): IdleWatch {
  const controller = new AbortController();
  if (idleMs <= 0 || raw.complete) return { signal: controller.signal, stop: () => {} };
  const timer = setTimeout(() => {
    if (raw.complete) return;
    if (raw.isPaused() || raw.readableLength > 0) timer.refresh();
    else controller.abort(bodyIdleError(idleMs));
  }, idleMs);
  const arrived = () => timer.refresh();
  const stop = () => {
    clearTimeout(timer);
    raw.off('data', arrived);
    raw.off('end', stop);
    raw.off('close', stop);
  };
  raw.on('data', arrived);
  raw.once('end', stop);
  raw.once('close', stop);
  return { signal: controller.signal, stop };
}

/** Reads and drops the rest of a body already answered, closing its connection if it stops arriving. */
export function dropWhenIdle(raw: IncomingMessage, idleMs: number): void {
  watchIdleBody(raw, idleMs).signal.addEventListener('abort', () => raw.socket.destroy(), { once: true });
}
