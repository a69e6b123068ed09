// The official MCP SDK client against corral: over stdio (spawning `corral mcp`) or over
// Streamable HTTP (corral serve's /mcp with a bearer token). Prints one PASS/FAIL/SKIP
// line per check; exits 1 if any failed.
//   node client_checks.mjs stdio /path/to/corral
//   node client_checks.mjs http http://127.0.0.1:PORT/mcp TOKEN
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

const [mode, target, token] = process.argv.slice(2);
if (!["stdio", "http"].includes(mode) || !target) {
  console.error("usage: client_checks.mjs stdio CORRAL | http URL TOKEN");
  process.exit(2);
}
const prefix = `mcp-${mode}`;
let failed = 0;

async function check(name, fn) {
  try {
    const detail = await fn();
    console.log(`PASS ${prefix}: ${name}${detail ? ` (${detail})` : ""}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${prefix}: ${name}: ${String(e?.message ?? e).split("\n").slice(0, 3).join(" | ")}`);
  }
}

const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

// Rejects unless `promise` fails with a JSON-RPC error `code` whose message mentions `field`.
async function expectRpcError(promise, code, field) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof McpError, `expected an McpError, got ${e}`);
    assert.equal(e.code, code, e.message);
    if (field) assert.match(e.message, new RegExp(field.replace(/[[\]]/g, "\\$&")));
    return e.message;
  }
  throw new Error(`expected JSON-RPC error ${code}, the call succeeded`);
}

const client = new Client({ name: "corral-e2e", version: "1.0.0" });
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
let stderr = "";
let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args: ["mcp"], stderr: "pipe" });
  transport.stderr?.on("data", (d) => (stderr += d));
} else {
  transport = new StreamableHTTPClientTransport(new URL(target), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
}

try {
  await client.connect(transport);
} catch (e) {
  console.log(`FAIL ${prefix}: connect and initialize: ${e.message}${stderr ? ` | stderr: ${stderr.slice(-300)}` : ""}`);
  process.exit(1);
}

await check("initialize: server info and capabilities", async () => {
  const info = client.getServerVersion();
  assert.equal(info.name, "corral");
  const caps = client.getServerCapabilities();
  assert.ok(caps.tools, "no tools capability");
  assert.ok(caps.logging, "no logging capability");
  assert.match(client.getInstructions() ?? "", /sandbox/);
  return `corral ${info.version}`;
});

await check("ping", async () => assert.deepEqual(await client.ping(), {}));

await check("tools/list: the eight tools with input and output schemas", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ["create_session", "destroy_session", "execute_code", "get_language_details",
    "list_languages", "read_file", "run_in_session", "upload_file"]);
  for (const t of tools) {
    assert.equal(t.inputSchema.type, "object", t.name);
    assert.equal(t.inputSchema.additionalProperties, false, t.name);
    assert.equal(t.outputSchema?.type, "object", `${t.name} outputSchema`);
  }
  const exec = tools.find((t) => t.name === "execute_code");
  assert.deepEqual(exec.inputSchema.required.sort(), ["code", "language"]);
  return `${tools.length} tools`;
});

await check("execute_code: python print", async () => {
  const r = await client.callTool({ name: "execute_code", arguments: { language: "python", code: "print('hello', 6 * 7)" } });
  assert.equal(r.isError, false);
  assert.match(text(r), /hello 42/);
  assert.equal(r.structuredContent.status, "ok");
  assert.equal(r.structuredContent.stdout, "hello 42\n");
  assert.equal(r.structuredContent.exit_code, 0);
  return `${Math.round(r.structuredContent.usage.wall_ms)} ms`;
});

await check("execute_code: matplotlib plot comes back as a PNG image", async () => {
  const r = await client.callTool({
    name: "execute_code",
    arguments: { language: "python", code: "import matplotlib.pyplot as plt\nplt.plot([1, 4, 2, 3])\nplt.title('corral')\nplt.show()\n" },
  }, undefined, { timeout: 120000 });
  assert.equal(r.structuredContent.status, "ok", r.structuredContent.stderr);
  const images = r.content.filter((c) => c.type === "image");
  assert.equal(images.length, 1, `content types: ${r.content.map((c) => c.type)}`);
  assert.equal(images[0].mimeType, "image/png");
  const png = Buffer.from(images[0].data, "base64");
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.equal(r.structuredContent.artifacts[0].mime, "image/png");
  return `${png.length} bytes, ${r.structuredContent.artifacts[0].width}x${r.structuredContent.artifacts[0].height}`;
});

await check("execute_code: a failing program is an isError result with its status", async () => {
  const r = await client.callTool({ name: "execute_code", arguments: { language: "bash", code: "echo oops >&2; exit 3" } });
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent.status, "nonzero_exit");
  assert.equal(r.structuredContent.exit_code, 3);
  assert.equal(r.structuredContent.stderr, "oops\n");
});

await check("execute_code: timeout", async () => {
  const r = await client.callTool({ name: "execute_code", arguments: { language: "python", code: "while True: pass", timeout: 0.5 } });
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent.status, "timeout");
});

await check("sessions: files persist across runs, upload_file/read_file, destroy_session", async () => {
  const created = await client.callTool({ name: "create_session", arguments: { language: "python" } });
  const id = created.structuredContent.session_id;
  assert.match(id, /^[0-9a-f]{32}$/);
  const w = await client.callTool({ name: "run_in_session", arguments: { session_id: id, code: "open('state.txt', 'w').write('kept')" } });
  assert.equal(w.structuredContent.status, "ok", w.structuredContent.stderr);
  const r = await client.callTool({ name: "run_in_session", arguments: { session_id: id, code: "print(open('state.txt').read())" } });
  assert.equal(r.structuredContent.stdout, "kept\n");
  await client.callTool({ name: "upload_file", arguments: { session_id: id, path: "in/data.csv", content: "x,y\n1,2\n" } });
  const sum = await client.callTool({
    name: "run_in_session",
    arguments: { session_id: id, code: "import csv\nrows = list(csv.DictReader(open('in/data.csv')))\nprint(int(rows[0]['x']) + int(rows[0]['y']))" },
  });
  assert.equal(sum.structuredContent.stdout, "3\n");
  await client.callTool({ name: "run_in_session", arguments: { session_id: id, code: "open('/sandbox/result.txt', 'w').write('from the sandbox')" } });
  const read = await client.callTool({ name: "read_file", arguments: { session_id: id, path: "result.txt" } });
  assert.equal(text(read), "from the sandbox");
  assert.equal(read.structuredContent.encoding, "utf-8");
  const bin = Buffer.from([0, 255, 1, 254, 7]);
  await client.callTool({ name: "upload_file", arguments: { session_id: id, path: "b.bin", content: bin.toString("base64"), encoding: "base64" } });
  const binBack = await client.callTool({ name: "read_file", arguments: { session_id: id, path: "b.bin" } });
  assert.deepEqual(Buffer.from(binBack.structuredContent.content, "base64"), bin);
  const d = await client.callTool({ name: "destroy_session", arguments: { session_id: id } });
  assert.equal(d.structuredContent.destroyed, true);
  const after = await client.callTool({ name: "run_in_session", arguments: { session_id: id, code: "print(1)" } });
  assert.equal(after.isError, true);
  assert.match(text(after), /no session/);
});

await check("list_languages and get_language_details", async () => {
  const r = await client.callTool({ name: "list_languages", arguments: {} });
  const python = r.structuredContent.languages.find((l) => l.name === "python");
  assert.ok(python?.available, "python not available");
  assert.match(python.version, /^Python 3/);
  const cpp = await client.callTool({ name: "get_language_details", arguments: { language: "c++" } });
  assert.equal(cpp.structuredContent.name, "cpp");
  assert.equal(cpp.structuredContent.compiled, true);
  return `${r.structuredContent.languages.filter((l) => l.available).length} available`;
});

await check("bad input: JSON-RPC -32602 naming the field", async () => {
  await expectRpcError(client.callTool({ name: "execute_code", arguments: { language: "python" } }), -32602, "code");
  await expectRpcError(client.callTool({ name: "execute_code", arguments: { language: "python", code: "1", timeout: "5" } }), -32602, "timeout");
  await expectRpcError(client.callTool({ name: "execute_code", arguments: { language: "python", code: "1", shell: true } }), -32602, "shell");
  await expectRpcError(client.callTool({ name: "execute_code", arguments: { language: "cobol", code: "1" } }), -32602, "language");
  return await expectRpcError(client.callTool({ name: "no_such_tool", arguments: {} }), -32602, "unknown tool");
});

await check("a ping is answered while a tool call runs", async () => {
  const slow = client.callTool({ name: "execute_code", arguments: { language: "python", code: "import time; time.sleep(2); print('slept')" } });
  let finished = false;
  slow.then(() => (finished = true), () => (finished = true));
  await new Promise((res) => setTimeout(res, 400));
  const t0 = Date.now();
  await client.ping();
  const pingMs = Date.now() - t0;
  assert.equal(finished, false, "the slow call finished before the ping was answered");
  assert.ok(pingMs < 1000, `ping took ${pingMs} ms`);
  assert.equal((await slow).structuredContent.stdout, "slept\n");
  return `ping ${pingMs} ms`;
});

await check("a cancelled call gets no response, and the server goes on", async () => {
  const errors = [];
  const previous = client.onerror;
  client.onerror = (e) => errors.push(String(e?.message ?? e));
  const abort = new AbortController();
  const call = client.callTool({ name: "execute_code", arguments: { language: "python", code: "import time; time.sleep(1)" } },
    undefined, { signal: abort.signal });
  setTimeout(() => abort.abort("the e2e test cancels"), 300);
  await assert.rejects(call);
  await new Promise((res) => setTimeout(res, 1500));  // past the end of the run
  client.onerror = previous;
  // The SDK reports a response whose request it no longer knows ("unknown message ID").
  assert.deepEqual(errors.filter((e) => /unknown message ID/i.test(e)), []);
  const r = await client.callTool({ name: "execute_code", arguments: { language: "python", code: "print('still here')" } });
  assert.equal(r.structuredContent.stdout, "still here\n");
});

await check("logging/setLevel, then log records for tool calls", async () => {
  assert.deepEqual(await client.setLoggingLevel("info"), {});
  if (mode !== "stdio") return "setLevel only: records over HTTP depend on the transport's streaming";
  logs.length = 0;
  await client.callTool({ name: "execute_code", arguments: { language: "python", code: "print(1)" } });
  await new Promise((res) => setTimeout(res, 100));
  assert.ok(logs.some((l) => l.level === "info" && /execute_code/.test(l.data)), `records: ${JSON.stringify(logs)}`);
  await client.setLoggingLevel("error");
  return `${logs.length} record(s)`;
});

await client.close();
if (failed && stderr) console.error(`corral mcp stderr:\n${stderr.slice(-2000)}`);
process.exit(failed ? 1 : 0);
