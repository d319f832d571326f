// Drives the A2A JS SDK against an A2A host: resolves its agent card,
// builds a JSON-RPC client the way the SDK's README does, sends one
// message, and prints one JSON line:
// {reply, error: {name, message}, wire: [{method, path, sent, served, rpc, status, code}]}.
//
//   node client.mjs <sdk> <base url> [token]
//
// sdk is "0.3" (@a2a-js/sdk 0.3.14, which sends no A2A-Version) or "1.3"
// (@a2a-js/sdk 1.3.0, which sends A2A-Version: 1.0). The wire is recorded
// by the fetch below, which also presents the token as a bearer credential.
import * as sdk03 from "a2a-sdk-03/client";
import * as sdk13 from "a2a-sdk-13/client";

const [which, base, token] = process.argv.slice(2);
const wire = [];

async function recordingFetch(input, init) {
  const headers = new Headers(init?.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  let rpc = "";
  try { rpc = typeof init?.body === "string" ? JSON.parse(init.body).method ?? "" : ""; } catch { rpc = ""; }
  const res = await fetch(input, { ...init, headers });
  let code = 0;
  try { code = JSON.parse(await res.clone().text())?.error?.code ?? 0; } catch { code = 0; }
  wire.push({
    method: init?.method ?? "GET",
    path: new URL(typeof input === "string" ? input : input.url ?? String(input)).pathname,
    sent: headers.get("a2a-version"),
    served: res.headers.get("a2a-version"),
    rpc,
    status: res.status,
    code,
  });
  return res;
}

function text(result) {
  // 0.3: a Message {kind: "message", parts: [{kind: "text", text}]};
  // 1.x: a Message {parts: [{content: {$case: "text", value}}]}.
  const part = result?.parts?.[0];
  return part?.text ?? part?.content?.value ?? JSON.stringify(result);
}

// The message to send, in each SDK's shape: 0.3's JSON Schema types, 1.x's
// proto-generated ones.
const hello = {
  "0.3": { kind: "message", messageId: "m-1", role: "user", parts: [{ kind: "text", text: "hello" }] },
  "1.3": { messageId: "m-1", role: 1, parts: [{ content: { $case: "text", value: "hello" } }] },
};
const sdks = { "0.3": sdk03, "1.3": sdk13 };

let out;
try {
  if (!(which in sdks)) throw new Error(`unknown sdk ${which}`);
  const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, DefaultAgentCardResolver } = sdks[which];
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: recordingFetch })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: recordingFetch }),
  }));
  const client = await factory.createFromUrl(base);
  const result = await client.sendMessage({ message: hello[which] });
  out = { reply: text(result), wire };
} catch (e) {
  out = { error: { name: e?.constructor?.name ?? "Error", message: String(e?.message ?? e) }, wire };
}
console.log(JSON.stringify(out));
