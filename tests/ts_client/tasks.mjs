// The TypeScript SDK's experimental tasks client against a generated server with task tools
// (tests/fixtures/tasks), handshake era over streamable HTTP:
//   node tasks.mjs URL TOKEN
// Prints one JSON line: what callToolStream yielded for a task that completes, one that
// fails and one cancelled on creation, plus getTask and listTasks.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "mcpgen-ts-tasks", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const tasks = client.experimental.tasks;

async function run(name, args, onCreated) {
  const seen = [];
  let taskId = null;
  for await (const message of tasks.callToolStream({ name, arguments: args })) {
    if (message.type === "taskCreated") {
      taskId = message.task.taskId;
      seen.push({ type: "taskCreated", status: message.task.status });
      if (onCreated) await onCreated(taskId);
    } else if (message.type === "taskStatus") {
      seen.push({ type: "taskStatus", status: message.task.status, message: message.task.statusMessage ?? null });
    } else if (message.type === "result") {
      seen.push({ type: "result", result: message.result });
    } else {
      seen.push({ type: message.type, error: String(message.error?.message ?? message.error) });
    }
  }
  return { taskId, seen };
}

const report = await run("report", { steps: 2, delay: 0.2 });
const failing = await run("report", { steps: 0, fail: "tool" });
const cancelled = await run("export", { seconds: 30 }, (id) => tasks.cancelTask(id));
let plainRequired = null;
try {
  await client.callTool({ name: "export", arguments: {} });
} catch (error) {
  plainRequired = String(error.message);
}
const got = await tasks.getTask(report.taskId);
const listed = await tasks.listTasks();
console.log(
  JSON.stringify({
    capabilities: client.getServerCapabilities(),
    execution: Object.fromEntries(tools.map((t) => [t.name, t.execution ?? null])),
    report,
    failing,
    cancelled,
    plainRequired,
    got,
    listed: listed.tasks.map((t) => t.taskId),
  }),
);
await client.close();
