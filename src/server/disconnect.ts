import type { FastifyReply } from 'fastify';

/** Why work for a client stops when it hangs up (an abort: nobody reads the answer). */
export const clientGone = () => new DOMException('Client disconnected', 'AbortError');

/**
 * Runs `work` with a signal that fires when the client hangs up before the answer is sent: its
 * job then leaves the queue, or its ffmpeg is stopped.
 */
export async function untilDisconnect<T>(reply: FastifyReply, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableEnded) controller.abort(clientGone());
  };
  reply.raw.on('close', onClose);
  try {
    return await work(controller.signal);
  } finally {
    reply.raw.off('close', onClose);
  }
}
