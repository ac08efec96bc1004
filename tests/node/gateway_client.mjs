// gateway_client.mjs - drives an MCP Streamable HTTP URL with the official
// TypeScript SDK client, for tests/integration/test_gateway_sdk.py.
//
//   node gateway_client.mjs MODE URL [ARGS...]
//
// Prints one JSON object on stdout ({"error": ...} and exit 1 on failure).
// Modes:
//   basic                          connect, list tools, call echo, end the session
//   sequential N TOOL ARGS_JSON    N x (connect, call TOOL, DELETE, close)
//   concurrent N M TOOL ARGS_JSON  N sessions open at once, M rounds of calls on all
//   sampling TOOL                  call TOOL with a client that answers sampling
//   roots TOOL                     call TOOL with a client that lists roots
//   progress TOOL ARGS_JSON        call TOOL with a progress handler
//   logging TOOL                   call TOOL, collecting log notifications
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [mode, url, ...rest] = process.argv.slice(2);

async function open(capabilities = {}) {
  const client = new Client({ name: "mcpbox-gateway-test", version: "1.0.0" }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, transport };
}

async function end({ client, transport }) {
  await transport.terminateSession();
  await client.close();
}

const textOf = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");

async function main() {
  if (mode === "basic") {
    const c = await open();
    const tools = (await c.client.listTools()).tools.map((t) => t.name);
    const echo = await c.client.callTool({ name: "echo", arguments: { message: "hello gateway" } });
    const info = c.client.getServerVersion();
    const out = {
      sessionId: c.transport.sessionId,
      protocolVersion: c.transport.protocolVersion,
      serverInfo: info,
      tools,
      echo: textOf(echo),
    };
    await end(c);
    return out;
  }
  if (mode === "sequential") {
    const n = Number(rest[0]);
    const tool = rest[1];
    const args = JSON.parse(rest[2] || "{}");
    const texts = [];
    const sessions = [];
    for (let i = 0; i < n; i++) {
      const c = await open();
      sessions.push(c.transport.sessionId);
      texts.push(textOf(await c.client.callTool({ name: tool, arguments: args })));
      await end(c);
    }
    return { texts, sessions };
  }
  if (mode === "concurrent") {
    const n = Number(rest[0]);
    const rounds = Number(rest[1]);
    const tool = rest[2];
    const args = JSON.parse(rest[3] || "{}");
    const clients = await Promise.all(Array.from({ length: n }, () => open()));
    const texts = [];
    for (let r = 0; r < rounds; r++) {
      const got = await Promise.all(
        clients.map((c) => c.client.callTool({ name: tool, arguments: args })),
      );
      texts.push(...got.map(textOf));
    }
    const sessions = clients.map((c) => c.transport.sessionId);
    await Promise.all(clients.map(end));
    return { texts, sessions };
  }
  if (mode === "sampling") {
    const c = await open({ sampling: {} });
    let asked = null;
    c.client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      asked = req.params;
      return { model: "test-model", role: "assistant", content: { type: "text", text: "sampled-by-client" } };
    });
    const r = await c.client.callTool({ name: rest[0], arguments: JSON.parse(rest[1] || "{}") });
    await end(c);
    return { text: textOf(r), asked };
  }
  if (mode === "roots") {
    const c = await open({ roots: { listChanged: true } });
    c.client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [{ uri: "file:///data", name: "data" }],
    }));
    const r = await c.client.callTool({ name: rest[0], arguments: {} });
    await end(c);
    return { text: textOf(r) };
  }
  if (mode === "progress") {
    const c = await open();
    const progress = [];
    const r = await c.client.callTool(
      { name: rest[0], arguments: JSON.parse(rest[1] || "{}") },
      undefined,
      { onprogress: (p) => progress.push(p) },
    );
    await end(c);
    return { text: textOf(r), progress };
  }
  if (mode === "logging") {
    const c = await open();
    const logs = [];
    c.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
    const r = await c.client.callTool({ name: rest[0], arguments: {} });
    await end(c);
    return { text: textOf(r), logs };
  }
  throw new Error(`unknown mode ${mode}`);
}

try {
  const out = await main();
  process.stdout.write(JSON.stringify(out) + "\n");
  process.exit(0);
} catch (e) {
  process.stdout.write(JSON.stringify({ error: String(e && e.message ? e.message : e) }) + "\n");
  process.exit(1);
}
