// The official TypeScript SDK client against a generated server: list the tools, call one.
//   node client.mjs stdio PYTHON MODULE       (spawns `PYTHON -m MODULE`, env as given)
//   node client.mjs http URL [TOKEN]
// Prints one JSON line: {"protocolVersion", "tools": [...], "result": {...}}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [kind, target, extra] = process.argv.slice(2);
let transport;
if (kind === "stdio") {
  transport = new StdioClientTransport({
    command: target,
    args: ["-m", extra, "--transport", "stdio"],
    env: process.env,
    stderr: "ignore",
  });
} else {
  const headers = extra ? { Authorization: `Bearer ${extra}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
}

const client = new Client({ name: "mcpgen-ts-check", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const result = await client.callTool({ name: "add", arguments: { numbers: [1.5, 2.5] } });
const divided = await client.callTool({ name: "divide", arguments: { a: 1, b: 0 } });
console.log(
  JSON.stringify({
    server: client.getServerVersion(),
    protocolVersion: transport.protocolVersion ?? null,
    tools: tools.map((tool) => tool.name),
    result,
    divideByZero: divided,
  }),
);
await client.close();
