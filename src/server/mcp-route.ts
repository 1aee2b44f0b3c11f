import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../engine/config.js';
import { busyError, MediaflowError, paramError } from '../engine/errors.js';
import type { Registry } from '../engine/plugins/registry.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import type { JobService } from '../jobs/service.js';
import { createMcpServer } from '../mcp/server.js';
import type { SubmitContext } from './job-submission.js';

/** Sessions at once; a client past it gets a 503 until idle ones are closed. */
const MAX_SESSIONS = 1000;
/** A session with no request open and none for this long is closed (its client is gone, or forgot DELETE). */
const IDLE_MS = 30 * 60_000;

/** One client's session: its transport and server, whose key opened it, and its open requests. */
interface Session {
  transport: StreamableHTTPServerTransport;
  owner: string | undefined;
  open: number;
  lastSeen: number;
}

export interface McpRouteOptions {
  config: Config;
  registry: Registry;
  jobs: JobService;
  /** The API key check, run before the body is read. */
  onRequest: (request: FastifyRequest) => Promise<void>;
  submit: SubmitContext;
}

/**
 * `POST/GET/DELETE /mcp`: MCP's streamable HTTP transport, behind the API key like the operation routes.
 * Stateful: `initialize` opens a session (`Mcp-Session-Id`), so that a client's `notifications/cancelled`,
 * sent in a request of its own, reaches the call it cancels. A session is held in this process's memory
 * and belongs to the key that opened it (with several keys, another key's session is a 404). Tool calls
 * answer as an SSE stream, with progress notifications before the result.
 */
export function registerMcpRoutes(app: FastifyInstance, options: McpRouteOptions): void {
  const { config, registry, jobs, submit } = options;
  const sessions = new Map<string, Session>();

  async function open(request: FastifyRequest): Promise<StreamableHTTPServerTransport> {
    if (!isInitializeRequest(request.body))
      throw paramError('Expected an Mcp-Session-Id header, or an initialize request to open a session');
    if (sessions.size >= MAX_SESSIONS) throw busyError('Too many MCP sessions are open; retry later');
    const base = submit.baseUrl(request);
    const owner = submit.ownerOf(request);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, owner, open: 0, lastSeen: Date.now() }),
    });
    transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
    const server = createMcpServer(registry, {
      jobs,
      config,
      logger: app.log,
      baseUrl: base,
      ownBases: [...new Set([base, `${request.protocol}://${request.host}`])],
      ...(owner === undefined ? {} : { owner }),
    });
    await server.connect(transport);
    return transport;
  }

  /** The session a request names, or a 404 (unknown, closed, expired or another key's). */
  function sessionOf(request: FastifyRequest, id: string): Session {
    const session = sessions.get(id);
    if (!session || session.owner !== submit.ownerOf(request))
      throw new MediaflowError(
        'MF_ERR_NOT_FOUND',
        `Unknown MCP session '${id}' (it may have expired): initialize again`,
      );
    return session;
  }

  async function handle(request: FastifyRequest, reply: FastifyReply) {
    const id = request.headers['mcp-session-id'];
    if (Array.isArray(id)) throw paramError('Expected one Mcp-Session-Id header');
    let transport: StreamableHTTPServerTransport;
    if (id === undefined) {
      if (request.method !== 'POST') throw paramError('Expected an Mcp-Session-Id header');
      transport = await open(request);
    } else {
      const session = sessionOf(request, id);
      session.open += 1;
      session.lastSeen = Date.now();
      reply.raw.once('close', () => {
        session.open -= 1;
        session.lastSeen = Date.now();
      });
      transport = session.transport;
    }
    // The transport writes the answer (JSON or an SSE stream) on the raw response itself.
    reply.hijack();
    await transport.handleRequest(request.raw, reply.raw, request.body);
  }

  app.route({
    method: ['POST', 'GET', 'DELETE'],
    url: SERVER_PATHS.mcp,
    onRequest: options.onRequest,
    handler: handle,
  });

  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const session of sessions.values())
      if (session.open === 0 && now - session.lastSeen > IDLE_MS) void session.transport.close();
  }, 60_000).unref();
  app.addHook('onClose', async () => {
    clearInterval(sweeper);
    await Promise.all([...sessions.values()].map((session) => session.transport.close()));
  });
}
