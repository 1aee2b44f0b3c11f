import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { closest } from '../engine/edit-distance.js';
import { shortened } from '../engine/errors.js';
import type { Registry } from '../engine/plugins/registry.js';
import { VERSION } from '../engine/version.js';
import { callTool, type CallContext } from './call.js';
import { listTools, type Tool } from './tools.js';

/**
 * The protocol error for a tool that does not exist, naming the closest one when a name was misspelt. The name is
 * any length a body allows: the search skips what it cannot be near, and the message quotes it shortened.
 */
function unknownTool(name: string, tools: readonly Tool[]): McpError {
  const near = closest(
    name,
    tools.map((tool) => tool.name),
  );
  return new McpError(
    ErrorCode.InvalidParams,
    `Unknown tool '${shortened(name)}'${near ? ` (did you mean '${near}'?)` : ''}`,
  );
}

/**
 * mediaflow as an MCP server, on any transport: `tools/list` gives every operation and pipeline
 * (tools.ts), `tools/call` runs one as a job (call.ts). The low-level `Server` rather than `McpServer`:
 * the input schemas are JSON Schema made from the plugins at run time, where `McpServer` wants zod.
 */
export function createMcpServer(registry: Registry, context: CallContext): Server {
  const server = new Server(
    { name: 'mediaflow', version: VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        'Each tool runs a mediaflow operation or pipeline on media given by URL and answers with the URLs of ' +
        'its outputs; long ones report progress and can be cancelled.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await listTools(registry, context.config)).map(({ name, description, inputSchema }) => ({
      name,
      description,
      inputSchema: inputSchema as { type: 'object' },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tools = await listTools(registry, context.config);
    const tool = tools.find((candidate) => candidate.name === request.params.name);
    if (!tool) throw unknownTool(request.params.name, tools);
    return callTool(context, tool, request.params.arguments ?? {}, extra);
  });
  return server;
}
