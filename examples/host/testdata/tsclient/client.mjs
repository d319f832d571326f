// Connects the TypeScript MCP SDK client to an MCP endpoint, calls echo,
// and prints one JSON line: {protocolVersion, echo} or {error: {code,
// message, data}}.
//
//   node client.mjs <url> [token] [pinned revision]
//
// The SDK always asks initialize for its newest revision (2025-11-25 in
// 1.32.2); a pinned revision is put in the initialize request by the fetch
// below, as a client built for that revision would send it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, pinned] = process.argv.slice(2);
const wire = [];

async function pinnedFetch(input, init) {
  if ((init?.method ?? "GET") === "GET") {
    // The standalone event stream is opened without being awaited, so
    // whether it reaches the host before the client closes varies from run
    // to run. It is answered here as a server without one answers (405),
    // so that the requests the host sees are the same on every run.
    return new Response(null, { status: 405 });
  }
  let body = init?.body;
  if (pinned && typeof body === "string") {
    const msg = JSON.parse(body);
    if (msg.method === "initialize") {
      msg.params.protocolVersion = pinned;
      body = JSON.stringify(msg);
    }
  }
  const headers = new Headers(init?.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  let method;
  try { method = typeof body === "string" ? JSON.parse(body).method : undefined; } catch { method = undefined; }
  wire.push({ method: init?.method ?? "GET", rpc: method ?? "", header: headers.get("mcp-protocol-version") ?? "" });
  return fetch(input, { ...init, body, headers });
}

const client = new Client({ name: "ts-sdk-e2e", version: "1.32.2" });
const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: pinnedFetch });
try {
  await client.connect(transport);
  const res = await client.callTool({ name: "echo", arguments: { text: "hi" } });
  const out = { protocolVersion: transport.protocolVersion, echo: res.content?.[0]?.text ?? "", wire };
  await client.close();
  console.log(JSON.stringify(out));
} catch (e) {
  console.log(JSON.stringify({ error: { code: e.code ?? 0, message: String(e.message ?? e), data: e.data ?? null }, wire }));
  await client.close().catch(() => {});
}
