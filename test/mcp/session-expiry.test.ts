import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, scriptedProvider } from '../../src/index.js';
import { mcpTools, type McpTools } from '../../src/mcp/index.js';
import { recordEvents } from '../../src/testing/index.js';

/**
 * A small stateful Streamable HTTP server built from the SDK's server classes, with JSON answers
 * and no standalone stream (GET is 405), so that nothing tells the client a session is gone until
 * it calls. `forget()` drops every session, as a restarted server does; `unknownSession` says how
 * it answers a session it does not know: 404 as the spec asks, or 400 as server-everything does.
 */
function sessionServer() {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const state = { unknownSession: 404 as 404 | 400, started: 0, calls: 0 };
  const http: HttpServer = createServer(async (request, response) => {
    if (request.method === 'GET') return void response.writeHead(405).end();
    const id = request.headers['mcp-session-id'];
    const body = request.method === 'POST' ? JSON.parse(await text(request)) : undefined;
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (typeof id === 'string' && transport === undefined) {
      const message = state.unknownSession === 404 ? 'Session not found' : 'Bad Request: No valid session ID provided';
      return void response.writeHead(state.unknownSession, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
    }
    if (transport === undefined) {
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, enableJsonResponse: true, onsessioninitialized: (sid) => void sessions.set(sid, created) });
      const server = new Server({ name: 'sessions', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'whoami', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } }] }));
      server.setRequestHandler(CallToolRequestSchema, () => {
        state.calls++;
        return { content: [{ type: 'text', text: created.sessionId ?? '?' }] };
      });
      await server.connect(created);
      state.started++;
      transport = created;
    }
    await transport.handleRequest(request, response, body);
  });
  return { http, state, forget: () => sessions.clear() };
}

async function text(request: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of request) body += String(chunk);
  return body;
}

let fixture: ReturnType<typeof sessionServer>;
let tools: McpTools;
beforeAll(async () => {
  fixture = sessionServer();
  await new Promise<void>((resolve) => fixture.http.listen(0, '127.0.0.1', resolve));
  const { port } = fixture.http.address() as { port: number };
  tools = await mcpTools({ url: `http://127.0.0.1:${port}/mcp` });
}, 30_000);
afterAll(async () => {
  await tools?.close();
  fixture?.http.closeAllConnections();
  await new Promise((resolve) => fixture?.http.close(resolve));
});

async function whoami(): Promise<{ session: unknown; failures: number }> {
  const agent = createAgent({ name: 'tester', tools: tools.tools, provider: scriptedProvider(['<ACTION><sessions__whoami></sessions__whoami></ACTION>', 'Ok.']) });
  const events = recordEvents(agent.bus);
  await agent.run('who?');
  return { session: events.find('tool.completed')?.data.output, failures: events.filter('tool.failed').length };
}

describe('a session the server forgot', { timeout: 20_000 }, () => {
  it('is replaced by a new one and the call is sent again, on 404 as the spec says', async () => {
    const first = await whoami();
    fixture.forget();
    const calls = fixture.state.calls;
    const second = await whoami();
    expect(second.failures).toBe(0);
    expect(second.session).not.toBe(first.session);
    expect(fixture.state.calls).toBe(calls + 1); // the call ran once, in the new session
    expect(fixture.state.started).toBe(2);
  });

  it('is replaced too when the server answers 400 naming the session, as server-everything does', async () => {
    fixture.state.unknownSession = 400;
    const first = await whoami();
    fixture.forget();
    const second = await whoami();
    expect(second.failures).toBe(0);
    expect(second.session).not.toBe(first.session);
  });
});
