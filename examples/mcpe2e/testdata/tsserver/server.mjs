// The TypeScript MCP SDK 1.32.2 streamable-HTTP server, wired as the
// SDK's own examples/server/simpleStreamableHttp wires it: a transport per
// session, made by an initialize without a session; any other request
// without a known session answered HTTP 400, -32000 "Bad Request: No valid
// session ID provided" (server/discover included); GET and DELETE on the
// session's transport. One tool, echo. It listens on a loopback port of
// its own and prints {"url": ...} once it does.
import { randomUUID } from 'node:crypto';
import * as z from 'zod/v4';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

function getServer() {
  const server = new McpServer({ name: 'ts-simple-streamable-http', version: '1.32.2' });
  server.registerTool('echo', {
    description: 'Echoes its text',
    inputSchema: { text: z.string() },
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}

const transports = new Map();
const app = createMcpExpressApp();

app.post('/mcp', async (req, res) => {
  const sessionId = req.headers['mcp-session-id'];
  try {
    if (sessionId && transports.has(sessionId)) {
      await transports.get(sessionId).handleRequest(req, res, req.body);
      return;
    }
    if (!sessionId && isInitializeRequest(req.body)) {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => { transports.set(id, transport); },
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
      };
      await getServer().connect(transport);
      await transport.handleRequest(req, res, req.body);
      return;
    }
    if (sessionId) {
      res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
      return;
    }
    res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null });
  } catch (error) {
    if (!res.headersSent) {
      res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
    }
  }
});

const onSession = async (req, res) => {
  const sessionId = req.headers['mcp-session-id'];
  if (!sessionId) {
    res.status(400).send('Missing session ID');
    return;
  }
  if (!transports.has(sessionId)) {
    res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
    return;
  }
  await transports.get(sessionId).handleRequest(req, res);
};
app.get('/mcp', onSession);
app.delete('/mcp', onSession);

const listener = app.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${listener.address().port}/mcp` }));
});
