import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import { matches } from './auth.js';

/** Where the queue dashboard lives. */
export const DASHBOARD_PATH = `${SERVER_PATHS.admin}/queues`;

/**
 * Whether a request carries the API key: the X-API-Key header, or (so a browser can open the
 * page) HTTP Basic authentication with the key as the password.
 */
function carriesKey(request: FastifyRequest, key: string): boolean {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string') return matches(header, key);
  const basic = /^Basic\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (!basic) return false;
  const decoded = Buffer.from(basic, 'base64').toString('utf8');
  return matches(decoded.slice(decoded.indexOf(':') + 1), key);
}

/**
 * The BullMQ dashboard (@bull-board) at /admin/queues: the job and webhook queues, their waiting,
 * active, failed and delayed jobs. Only with an API key, which every one of its requests needs.
 */
export async function registerDashboard(app: FastifyInstance, queues: Queue[], apiKey: string): Promise<void> {
  const adapter = new FastifyAdapter();
  adapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue)),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'mediaflow' } },
  });
  await app.register(async (scope) => {
    scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (carriesKey(request, apiKey)) return;
      await reply
        .status(401)
        .header('www-authenticate', 'Basic realm="mediaflow", charset="UTF-8"')
        .send({ error: 'Invalid or missing API key', code: 'MF_ERR_AUTH' });
    });
    await scope.register(adapter.registerPlugin(), { prefix: DASHBOARD_PATH, basePath: DASHBOARD_PATH } as {
      prefix: string;
    });
  });
}
