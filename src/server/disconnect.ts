import type { FastifyReply } from 'fastify';

/**
 * Runs `work` with a signal that fires when the client hangs up before the answer is sent: its
 * job then leaves the queue, or its ffmpeg is stopped.
 */
export async function untilDisconnect<T>(reply: FastifyReply, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableEnded) controller.abort(new DOMException('Client disconnected', 'AbortError'));
  };
  reply.raw.on('close', onClose);
  try {
    return await work(controller.signal);
  } finally {
    reply.raw.off('close', onClose);
  }
}
