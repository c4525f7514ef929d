// An MCP client we did not write (the official TypeScript SDK's) driving `phonebench mcp-server`:
// lists its tools, plays the starter task settings.flight_mode to success by reading each
// screen's text and tapping the element that holds a label, reads the verdict, and checks that
// bad arguments get an MCP error while the server keeps serving. Used by
// crates/cli/tests/mcp_interop.rs; prints one JSON object with what it saw.
//
//   node phone_client.mjs stdio PHONEBENCH_BINARY [ARGS...]
//   node phone_client.mjs http URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...rest] = process.argv.slice(2);
const transport =
  mode === "stdio"
    ? new StdioClientTransport({ command: target, args: rest, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: "phonebench-interop-test", version: "1.0.0" });
await client.connect(transport);

const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
const call = async (name, args = {}) => client.callTool({ name, arguments: args });

// The index of the clickable element whose subtree shows `label` (SPHINX tree format: each
// element line is indented; clickable ones carry `[N]`).
function indexOf(screen, label) {
  const lines = screen.split("\n");
  const at = lines.findIndex((l) => l.includes(`text: ${label},`) || l.includes(`content-desc: ${label},`));
  if (at < 0) throw new Error(`no "${label}" on the screen:\n${screen}`);
  const depth = (l) => l.length - l.trimStart().length;
  for (let i = at, d = depth(lines[at]) + 1; i >= 0; i--) {
    if (depth(lines[i]) < d || i === at) {
      const m = lines[i].match(/^\s*\[(\d+)\]/);
      if (m) return Number(m[1]);
      d = Math.min(d, depth(lines[i]));
    }
  }
  throw new Error(`"${label}" is not inside a clickable element`);
}

const report = {};
const tools = await client.listTools();
report.tools = tools.tools.map((t) => t.name).sort();
report.schemas_are_objects = tools.tools.every((t) => t.inputSchema && t.inputSchema.type === "object");

const listed = JSON.parse(text(await call("list_tasks", { pattern: "settings.*" })));
report.listed_flight_mode = listed.tasks.some((t) => t.id === "settings.flight_mode");

let screen = text(await call("start_task", { task_id: "settings.flight_mode" }));
report.goal_shown = screen.includes("airplane mode");
const plan = [
  "Network & internet", "Airplane mode", "back",
  "Connected devices", "Bluetooth", "Use Bluetooth", "back", "back",
  "Battery", "Battery Saver", "Use Battery Saver", "back", "back",
  "Sound & vibration", "Do Not Disturb", "Use Do Not Disturb",
];
for (const step of plan) {
  const result = step === "back" ? await call("press_key", { key: "back" }) : await call("tap", { index: indexOf(screen, step) });
  if (result.isError) throw new Error(`${step}: ${text(result)}`);
  screen = text(result);
}
const shot = await call("screenshot", { som: true });
report.screenshot = shot.content.map((c) => `${c.type}:${c.mimeType ?? ""}:${(c.data ?? "").length > 1000}`);

const finished = text(await call("finish"));
report.finished_says_over = finished.includes("The episode is over (finished).");
const verdict = JSON.parse(text(await call("get_verdict")));
report.success = verdict.success;
report.acp = verdict.acp;

// Bad arguments: an MCP error (the SDK throws), and the server still answers afterwards.
try {
  await call("tap", { index: "seven" });
  report.bad_arguments = "accepted";
} catch (e) {
  report.bad_arguments = `error ${e.code}`;
}
try {
  await call("no_such_tool");
  report.unknown_tool = "accepted";
} catch (e) {
  report.unknown_tool = `error ${e.code}`;
}
const after = await call("tap", { index: 0 });
report.acting_after_the_end = after.isError ? text(after) : "accepted";

// An MCP task: its own tools are reachable through the phone server.
await call("start_task", { task_id: "mcp.convert_and_text" });
const taskTools = JSON.parse(text(await call("task_tools")));
report.task_tools = taskTools.map((t) => t.name);
const converted = await call("call_task_tool", { tool: "finance_convert", arguments: { amount: 10, from: "USD", to: "EUR" } });
report.task_tool_result = text(converted).includes('"result": 9.2');

console.log(JSON.stringify(report));
await client.close();
