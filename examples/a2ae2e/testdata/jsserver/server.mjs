// An A2A agent made with the A2A JS SDK's own server (its Express
// handlers, DefaultRequestHandler and an in-memory task store), as a peer
// for the host's outbound side. It listens on 127.0.0.1, on a port of the
// system's choosing, prints one JSON line {"url": <base URL>} once it
// listens, and answers every message with one agent message,
// "served at <version>".
//
//   node server.mjs <sdk>
//
// sdk is "0.3" (@a2a-js/sdk 0.3.14: an A2A 0.3 card, protocolVersion
// "0.3.0", and 0.3 JSON-RPC), "1.3" (@a2a-js/sdk 1.3.0: a 1.0 card,
// supportedInterfaces[].protocolVersion "1.0", and 1.0 JSON-RPC, which
// validates A2A-Version against the card) or "grpc" (@a2a-js/sdk 1.3.0's
// gRPC server, on a port of its own, which its 1.0 card names as the GRPC
// interface).
import express from "express";
import * as sdk03 from "a2a-sdk-03/server";
import * as express03 from "a2a-sdk-03/server/express";
import * as sdk13 from "a2a-sdk-13/server";
import * as express13 from "a2a-sdk-13/server/express";
import * as grpc13 from "a2a-sdk-13/server/grpc";
import * as grpc from "@grpc/grpc-js";

const [which] = process.argv.slice(2);
const app = express();
const server = app.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  const base = `http://127.0.0.1:${port}`;
  if (which === "grpc") {
    mountGRPC(base);
    return;
  }
  mount(base);
  console.log(JSON.stringify({ url: base }));
});

// executor13 answers every message "served at 1.0", as @a2a-js/sdk 1.3.0
// writes a message.
const executor13 = {
  async execute(ctx, bus) {
    bus.publish(sdk13.AgentEvent.message({ messageId: `${ctx.userMessage.messageId}-reply`, contextId: ctx.contextId, taskId: "",
      role: 2, parts: [{ content: { $case: "text", value: "served at 1.0" } }], metadata: undefined, extensions: [], referenceTaskIds: [] }));
    bus.finished();
  },
  async cancelTask() {},
};

function mountGRPC(base) {
  const server = new grpc.Server();
  server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      console.error(err);
      process.exit(2);
    }
    const card = {
      name: "wopneg a2ae2e gRPC peer (1.3.0)", description: "answers every message", version: "1.0.0",
      supportedInterfaces: [{ url: `127.0.0.1:${port}`, protocolBinding: "GRPC", protocolVersion: "1.0", tenant: "" }],
      capabilities: {}, securitySchemes: {}, securityRequirements: [],
      defaultInputModes: ["text"], defaultOutputModes: ["text"], skills: [], signatures: [],
    };
    const handler = new sdk13.DefaultRequestHandler(card, new sdk13.InMemoryTaskStore(), executor13);
    server.addService(grpc13.A2AService, grpc13.grpcService({ requestHandler: handler, userBuilder: grpc13.UserBuilder.noAuthentication }));
    app.use("/.well-known/agent-card.json", express13.agentCardHandler({ agentCardProvider: handler }));
    console.log(JSON.stringify({ url: base, grpc: `127.0.0.1:${port}` }));
  });
}

function mount(base) {
  if (which === "0.3") {
    const card = {
      name: "wopneg a2ae2e peer (0.3.14)", description: "answers every message", version: "1.0.0",
      url: `${base}/a2a`, protocolVersion: "0.3.0", preferredTransport: "JSONRPC",
      capabilities: {}, defaultInputModes: ["text"], defaultOutputModes: ["text"], skills: [],
    };
    const executor = {
      async execute(ctx, bus) {
        bus.publish({ kind: "message", messageId: `${ctx.userMessage.messageId}-reply`, role: "agent",
          parts: [{ kind: "text", text: "served at 0.3" }], contextId: ctx.contextId });
        bus.finished();
      },
      async cancelTask() {},
    };
    const handler = new sdk03.DefaultRequestHandler(card, new sdk03.InMemoryTaskStore(), executor);
    app.use("/.well-known/agent-card.json", express03.agentCardHandler({ agentCardProvider: handler }));
    app.use("/a2a", express03.jsonRpcHandler({ requestHandler: handler, userBuilder: express03.UserBuilder.noAuthentication }));
    return;
  }
  if (which === "1.3") {
    const card = {
      name: "wopneg a2ae2e peer (1.3.0)", description: "answers every message", version: "1.0.0",
      supportedInterfaces: [{ url: `${base}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" }],
      capabilities: {}, securitySchemes: {}, securityRequirements: [],
      defaultInputModes: ["text"], defaultOutputModes: ["text"], skills: [], signatures: [],
    };
    const executor = {
      async execute(ctx, bus) {
        bus.publish(sdk13.AgentEvent.message({ messageId: `${ctx.userMessage.messageId}-reply`, contextId: ctx.contextId, taskId: "",
          role: 2, parts: [{ content: { $case: "text", value: "served at 1.0" } }], metadata: undefined, extensions: [], referenceTaskIds: [] }));
        bus.finished();
      },
      async cancelTask() {},
    };
    const handler = new sdk13.DefaultRequestHandler(card, new sdk13.InMemoryTaskStore(), executor);
    app.use("/.well-known/agent-card.json", express13.agentCardHandler({ agentCardProvider: handler }));
    app.use("/a2a", express13.jsonRpcHandler({ requestHandler: handler, userBuilder: express13.UserBuilder.noAuthentication }));
    return;
  }
  console.error(`unknown sdk ${which}`);
  process.exit(2);
}
