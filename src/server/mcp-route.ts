import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../engine/config.js';
import { busyError, MediaflowError, paramError, shortened } from '../engine/errors.js';
import type { Registry } from '../engine/plugins/registry.js';
import { SERVER_PATHS } from '../engine/plugins/reserved.js';
import type { JobService } from '../jobs/service.js';
import type { CallExtra } from '../mcp/call.js';
import { createMcpServer } from '../mcp/server.js';
import type { SubmitContext } from './job-submission.js';
import { handlerValidates } from './validation.js';
import { errorRefs } from './openapi/error-responses.js';
import { apiKeySecurity, type Json } from './openapi/shared.js';

/** Sessions at once, whatever their keys; past it, the server's least recently used idle session is closed. */
const MAX_SESSIONS = 1000;
/** A session with no request open and none for this long is closed (its client is gone, or forgot DELETE). */
const IDLE_MS = 30 * 60_000;

/** One client's session: its transport and server, whose key opened it, and what it has under way. */
interface Session {
  id: string;
  transport: StreamableHTTPServerTransport;
  owner: string | undefined;
  /** Its HTTP requests open, GET streams included: the idle sweep leaves a session with any alone. */
  open: number;
  /** Its tool calls under way: a session with none is idle, and may be closed to make room for another. */
  calls: number;
  lastSeen: number;
}

export interface McpRouteOptions {
  config: Config;
  registry: Registry;
  jobs: JobService;
  /** The API key check, run before the body is read. */
  onRequest: (request: FastifyRequest) => Promise<void>;
  submit: SubmitContext;
  /** Whether the server has an API key: the route's `security`. */
  secured: boolean;
}

/** What each method of /mcp does, for its schema. */
const MCP_METHODS = {
  POST: {
    operationId: 'mcpMessage',
    summary: 'Send MCP messages: `initialize` opens a session, tool calls answer as an event stream',
  },
  GET: { operationId: 'mcpStream', summary: "A session's stream of messages from the server (Server-Sent Events)" },
  DELETE: { operationId: 'mcpClose', summary: 'Close a session' },
} as const;

/** The schema of one method of /mcp: MCP's streamable HTTP transport, whose JSON-RPC messages docs/mcp.md describes. */
function mcpDocs(method: keyof typeof MCP_METHODS, secured: boolean): Json {
  return {
    ...MCP_METHODS[method],
    description:
      "MCP's streamable HTTP transport (docs/mcp.md): every operation and pipeline as a tool. A session belongs to " +
      'the API key that opened it; the transport answers malformed JSON-RPC with JSON-RPC errors.',
    tags: ['server'],
    ...apiKeySecurity(secured),
    headers: {
      type: 'object',
      properties: {
        'Mcp-Session-Id': {
          type: 'string',
          description: 'The session, from the answer to `initialize`; every request but that one carries it',
        },
      },
    },
    ...(method === 'POST'
      ? { body: { type: ['object', 'array'], description: 'A JSON-RPC message of MCP, or a batch of them' } }
      : {}),
    response: {
      200: {
        description: 'JSON-RPC answers, as JSON or as an event stream',
        content: { 'application/json': { schema: {} }, 'text/event-stream': { schema: { type: 'string' } } },
      },
      ...(method === 'POST' ? { 202: { description: 'Notifications or responses accepted', type: 'null' } } : {}),
      ...errorRefs(['MF_ERR_PARAM', 'MF_ERR_AUTH', 'MF_ERR_NOT_FOUND', 'MF_ERR_BUSY']),
    },
  };
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

  /** Closes a session at once: its slot is free from now, its client's next request a 404. */
  function close(session: Session): void {
    sessions.delete(session.id);
    void session.transport.close();
  }

  /**
   * Room for another session of `owner`: its least recently used idle session is closed when it holds its limit
   * (MEDIAFLOW_MCP_SESSIONS_PER_KEY), the server's when the server holds MAX_SESSIONS; a 503 when none is idle. So one
   * key that opens sessions without end closes its own, never another key's.
   */
  function makeRoom(owner: string | undefined): void {
    const all = [...sessions.values()];
    const own = all.filter((session) => session.owner === owner);
    if (config.mcpSessionsPerKey > 0 && own.length >= config.mcpSessionsPerKey)
      closeLeastUsed(own, 'Every MCP session of this API key is busy; retry later');
    if (sessions.size >= MAX_SESSIONS) closeLeastUsed(all, 'Too many MCP sessions are busy; retry later');
  }

  function closeLeastUsed(candidates: readonly Session[], busy: string): void {
    const idle = candidates.filter((session) => session.calls === 0);
    if (idle.length === 0) throw busyError(busy);
    close(idle.reduce((least, session) => (session.lastSeen < least.lastSeen ? session : least)));
  }

  /** Counts a request against its session while it is open. */
  function track(session: Session, reply: FastifyReply): void {
    session.open += 1;
    session.lastSeen = Date.now();
    reply.raw.once('close', () => {
      session.open -= 1;
      session.lastSeen = Date.now();
    });
  }

  /**
   * Counts a tool call against its session while it runs. A call the client cancelled gets no answer (MCP), so its
   * SSE stream would stay open until the client hung up: it is closed once the job has stopped.
   */
  function callOf(session: Session) {
    return (extra: CallExtra) => {
      session.calls += 1;
      return () => {
        session.calls -= 1;
        session.lastSeen = Date.now();
        if (extra.signal.aborted) session.transport.closeSSEStream(extra.requestId);
      };
    };
  }

  /**
   * A new session for an initialize request, counted at once (its id chosen here rather than by the transport), so
   * that initializes sent together cannot pass the limits side by side.
   */
  async function open(request: FastifyRequest, reply: FastifyReply): Promise<Session> {
    if (!isInitializeRequest(request.body))
      throw paramError('Expected an Mcp-Session-Id header, or an initialize request to open a session');
    const owner = submit.ownerOf(request);
    makeRoom(owner);
    const base = submit.baseUrl(request);
    const id = randomUUID();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => id });
    const session: Session = { id, transport, owner, open: 0, calls: 0, lastSeen: Date.now() };
    sessions.set(id, session);
    track(session, reply);
    transport.onclose = () => sessions.get(id) === session && sessions.delete(id);
    const server = createMcpServer(registry, {
      jobs,
      config,
      logger: app.log,
      baseUrl: base,
      ownBases: [...new Set([base, `${request.protocol}://${request.host}`])],
      ...(owner === undefined ? {} : { owner }),
      onCall: callOf(session),
    });
    await server.connect(transport);
    return session;
  }

  /** The session a request names, or a 404 (unknown, closed, expired or another key's). */
  function sessionOf(request: FastifyRequest, id: string): Session {
    const session = sessions.get(id);
    if (!session || session.owner !== submit.ownerOf(request))
      throw new MediaflowError(
        'MF_ERR_NOT_FOUND',
        `Unknown MCP session '${shortened(id)}' (it may have expired): initialize again`,
      );
    return session;
  }

  async function handle(request: FastifyRequest, reply: FastifyReply) {
    const id = request.headers['mcp-session-id'];
    if (Array.isArray(id)) throw paramError('Expected one Mcp-Session-Id header');
    let session: Session;
    if (id === undefined) {
      if (request.method !== 'POST') throw paramError('Expected an Mcp-Session-Id header');
      session = await open(request, reply);
    } else {
      session = sessionOf(request, id);
      track(session, reply);
    }
    // The transport writes the answer (JSON or an SSE stream) on the raw response itself.
    reply.hijack();
    try {
      await session.transport.handleRequest(request.raw, reply.raw, request.body);
    } finally {
      // An initialize the transport refused opened nothing.
      if (id === undefined && session.transport.sessionId === undefined) close(session);
    }
  }

  for (const method of ['POST', 'GET', 'DELETE'] as const)
    app.route({
      method,
      url: SERVER_PATHS.mcp,
      onRequest: options.onRequest,
      schema: mcpDocs(method, options.secured),
      // The transport reads and answers the JSON-RPC messages itself; `handle` checks the session header.
      validatorCompiler: handlerValidates,
      handler: handle,
    });

  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const session of sessions.values()) if (session.open === 0 && now - session.lastSeen > IDLE_MS) close(session);
  }, 60_000).unref();
  app.addHook('onClose', async () => {
    clearInterval(sweeper);
    await Promise.all([...sessions.values()].map((session) => session.transport.close()));
  });
}
