// `corral mcp` spoken to line by line, without an SDK: the framing (only JSON-RPC on stdout),
// parse and batch errors, and end of input closing every session — no sandbox process left.
//   node stdio_raw.mjs /path/to/corral
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

const corral = process.argv[2];
let failed = 0;
async function check(name, fn) {
  try {
    const detail = await fn();
    console.log(`PASS mcp-stdio-raw: ${name}${detail ? ` (${detail})` : ""}`);
  } catch (e) {
    failed++;
    console.log(`FAIL mcp-stdio-raw: ${name}: ${String(e?.message ?? e).split("\n")[0]}`);
  }
}

// Every process below `pid`, from /proc (sandboxes' init processes are children of corral).
function descendants(pid) {
  const children = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch {}
  }
  const out = [];
  const walk = (p) => (children.get(p) ?? []).forEach((c) => (out.push(c), walk(c)));
  walk(pid);
  return out;
}
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const child = spawn(corral, ["mcp"], { stdio: ["pipe", "pipe", "pipe"] });
let stderr = "";
child.stderr.on("data", (d) => (stderr += d));
const exited = new Promise((res) => child.on("exit", (code, signal) => res({ code, signal })));
const lines = [];
const nonJson = [];
let waiting = null;
let buf = "";
child.stdout.on("data", (d) => {
  buf += d;
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    try {
      lines.push(JSON.parse(line));
    } catch {
      nonJson.push(line);
    }
    if (waiting) waiting();
  }
});
const send = (m) => child.stdin.write((typeof m === "string" ? m : JSON.stringify(m)) + "\n");
async function next(ms = 60000) {
  const deadline = Date.now() + ms;
  while (!lines.length) {
    if (Date.now() > deadline) throw new Error(`no message within ${ms} ms; stderr: ${stderr.slice(-300)}`);
    await new Promise((res) => {
      waiting = res;
      setTimeout(res, 100);
    });
  }
  return lines.shift();
}
const request = async (id, method, params = {}) => {
  send({ jsonrpc: "2.0", id, method, params });
  const r = await next();
  assert.equal(r.id, id, `response to ${method}: ${JSON.stringify(r)}`);
  return r;
};

await check("malformed JSON is answered with -32700 and id null", async () => {
  send('{"jsonrpc": "2.0", "id": 1, "method": ');
  const r = await next();
  assert.equal(r.error?.code, -32700, JSON.stringify(r));
  assert.equal(r.id, null);
});

let sessions = [];
await check("initialize, then notifications/initialized gets no answer", async () => {
  const r = await request(1, "initialize", {
    protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" },
  });
  assert.equal(r.result.protocolVersion, "2025-06-18");
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const ping = await request(2, "ping");  // the next line is the ping's answer, nothing before it
  assert.deepEqual(ping.result, {});
});

await check("a batch is refused under 2025-06-18 with -32600", async () => {
  send([{ jsonrpc: "2.0", id: 3, method: "ping" }]);
  const r = await next();
  assert.equal(r.error?.code, -32600, JSON.stringify(r));
});

await check("unknown method is -32601", async () => {
  const r = await request(4, "prompts/list");
  assert.equal(r.error?.code, -32601);
});

await check("sessions open sandboxes below corral mcp", async () => {
  for (const [i, language] of [["python", 5], ["bash", 6]].map(([l, n]) => [n, l])) {
    const r = await request(i, "tools/call", { name: "create_session", arguments: { language } });
    assert.equal(r.result?.isError, false, JSON.stringify(r));
    sessions.push(r.result.structuredContent.session_id);
  }
  const run = await request(7, "tools/call", { name: "run_in_session", arguments: { session_id: sessions[0], code: "print('alive')" } });
  assert.equal(run.result.structuredContent.stdout, "alive\n");
  return `${descendants(child.pid).length} processes below corral mcp`;
});

const before = descendants(child.pid);
await check("end of input: exit 0, every session's sandbox gone", async () => {
  assert.ok(before.length >= 2, `expected sandbox processes below corral mcp, found ${before.length}`);
  child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), 30000);
  const { code, signal } = await exited;
  clearTimeout(timer);
  assert.equal(signal, null, `killed by ${signal} (did not exit within 30 s)`);
  assert.equal(code, 0, `exit code ${code}; stderr: ${stderr.slice(-300)}`);
  await new Promise((res) => setTimeout(res, 200));
  const left = before.filter(alive);
  assert.deepEqual(left, [], `still running: ${left}`);
  return `${before.length} processes gone`;
});

await check("stdout carried nothing but JSON-RPC lines", async () => {
  assert.deepEqual(nonJson, []);
  assert.ok(lines.every((m) => m.jsonrpc === "2.0"));
});

if (failed) console.error(`corral mcp stderr:\n${stderr.slice(-2000)}`);
process.exit(failed ? 1 : 0);
