// The JavaScript interactive driver and its relay (protocol: drivers.h). node only.
#include "src/lang/drivers/drivers.h"

namespace corral::lang {

// One node process holding a session's state. Each run is a vm.Script run in the driver's
// own (persistent) context, so top-level var, let, const, function and class declarations
// stay for later runs; the completion value of the script is the run's value
// (util.inspect; undefined is not a value). A run whose value is a promise is awaited. Code
// with top-level await runs inside an async function: its value is kept when the code is a
// single expression, but its declarations are local to that run. Output goes to the relay
// as frames (node cannot take over the relay's descriptors): console and
// process.stdout/stderr are captured, subprocesses inheriting the driver's stdio are not.
// Runs get no stdin. Output written after a run ended (timers) is dropped.
extern const char kJavaScriptDriver[] = R"JS('use strict';
const fs = require('fs');
const net = require('net');
const path = require('path');
const util = require('util');
const vm = require('vm');
const { createRequire } = require('module');

const SOCKET = process.argv[2];
const MAX_VALUE = 1 << 20;
const pause = new Int32Array(new SharedArrayBuffer(4));
let cells = 0;
let current = null; // the relay connection of the run going on
let interrupt = null; // rejects the awaited value of the run going on

function frame(msg) {
  const data = Buffer.from(JSON.stringify(msg), 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32BE(data.length);
  return Buffer.concat([header, data]);
}

// Synchronous, so that a busy loop's output is not queued up in memory, and output stops
// when the relay is gone (killed at the output cap).
function send(conn, msg) {
  if (!conn || conn.gone) return;
  const buf = frame(msg);
  const fd = conn._handle && conn._handle.fd;
  for (let off = 0; off < buf.length;) {
    try {
      off += fs.writeSync(fd, buf, off);
    } catch (e) {
      if (e.code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 1);
        continue;
      }
      conn.gone = true;
      return;
    }
  }
}

for (const [stream, fd] of [[process.stdout, 1], [process.stderr, 2]]) {
  stream.write = function (chunk, encoding, callback) {
    if (typeof encoding === 'function') callback = encoding;
    const data = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (current) send(current, { op: 'out', fd, data });
    if (typeof callback === 'function') process.nextTick(callback);
    return true;
  };
}

class Exit {
  constructor(code) { this.code = code; }
}
process.exit = (code) => { throw new Exit(code === undefined ? process.exitCode || 0 : code); };
process.on('SIGINT', () => { if (interrupt) interrupt(); }); // between runs: ignored
process.on('uncaughtException', (e) => { if (current) process.stderr.write('Uncaught ' + describeStack(e) + '\n'); });
process.on('unhandledRejection', (e) => { if (current) process.stderr.write('Unhandled rejection ' + describeStack(e) + '\n'); });

// As for a script in the workdir: require() resolves from there.
globalThis.require = createRequire(path.join(process.cwd(), '[interactive]'));
globalThis.__dirname = process.cwd();

function describeStack(e) {
  if (!(e instanceof Error) || typeof e.stack !== 'string') return util.inspect(e);
  // The driver's own frames and node's vm internals are not the user's.
  return e.stack.split('\n').filter((l) => !l.includes(__filename) && !/\(node:|at node:/.test(l)).join('\n');
}

function compile(code, filename) {
  try {
    return new vm.Script(code, { filename });
  } catch (e) {
    if (!(e instanceof SyntaxError) || !code.includes('await')) throw e;
  }
  // Top-level await: a single expression keeps its value; statements run in an async body.
  try {
    return new vm.Script('(async () => (\n' + code + '\n))()', { filename });
  } catch (e) {
    return new vm.Script('(async () => {\n' + code + '\n})()', { filename });
  }
}

async function run(code) {
  cells += 1;
  try {
    let value = compile(code, '<cell-' + cells + '>').runInThisContext({ breakOnSigint: true });
    if (value && typeof value.then === 'function') {
      value = await new Promise((resolve, reject) => {
        interrupt = () => reject(Object.assign(new Error('Script execution interrupted.'), { code: 'ERR_SCRIPT_EXECUTION_INTERRUPTED' }));
        value.then(resolve, reject);
      }).finally(() => { interrupt = null; });
    }
    if (value === undefined) return { op: 'done', status: 'ok', value: null };
    globalThis._ = value;
    let text = util.inspect(value);
    if (text.length > MAX_VALUE) text = text.slice(0, MAX_VALUE) + '...<truncated>';
    return { op: 'done', status: 'ok', value: text };
  } catch (e) {
    if (e instanceof Exit) return { op: 'done', status: 'exit', exit_code: Number(e.code) | 0 };
    process.stderr.write(describeStack(e) + '\n');
    const error = e instanceof Error ? e.name + ': ' + e.message : 'Uncaught ' + util.inspect(e);
    return { op: 'done', status: 'error', error };
  }
}

async function serve(conn) {
  if (conn.destroyed) return;
  send(conn, { op: 'hello', pid: process.pid });
  const msg = await new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    conn.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
        try {
          resolve(JSON.parse(buf.subarray(4, 4 + buf.readUInt32BE(0)).toString('utf8')));
        } catch (e) {
          resolve(null);
        }
      }
    });
    conn.on('close', () => resolve(null));
  });
  if (!msg || msg.op !== 'run') return conn.destroy();
  current = conn;
  conn.on('close', () => { conn.gone = true; if (current === conn && interrupt) interrupt(); });
  let result;
  try {
    result = await run(String(msg.code || ''));
  } finally {
    current = null;
  }
  send(conn, result);
  conn.end();
}

let queue = Promise.resolve(); // one run at a time
const server = net.createServer((conn) => {
  conn.on('error', () => {});
  queue = queue.then(() => serve(conn)).catch(() => {});
});
try { fs.unlinkSync(SOCKET); } catch (e) {}
server.listen(SOCKET, () => {
  fs.writeFileSync(SOCKET + '.pid', String(process.pid));
  // Closing stdout and stderr tells exec_detached that the driver is ready; /dev/null
  // takes fds 0-2 so nothing else lands there.
  for (const fd of [0, 1, 2]) fs.closeSync(fd);
  for (let i = 0; i < 3; i++) fs.openSync('/dev/null', 'r+');
});
)JS";

// One run's exec: hands the code to the driver, writes its output frames to this process's
// stdout and stderr, and enforces the timeout (SIGINT, then SIGKILL after the grace period).
extern const char kJavaScriptRelay[] = R"JS('use strict';
const fs = require('fs');
const net = require('net');

const [sockPath, codePath, resultPath, timeoutArg, graceArg] = process.argv.slice(2);
const code = fs.readFileSync(codePath, 'utf8');
try { fs.unlinkSync(resultPath); } catch (e) {}
let pid = 0;
let interrupted = false;
let killed = false;
let finished = false;

function finish(result) {
  if (finished) return;
  finished = true;
  fs.writeFileSync(resultPath + '.tmp', JSON.stringify(result));
  fs.renameSync(resultPath + '.tmp', resultPath);
  process.exit(0);
}

function write(fd, data) {
  const buf = Buffer.from(data, 'utf8');
  for (let off = 0; off < buf.length;) off += fs.writeSync(fd, buf, off);
}

const conn = net.connect(sockPath);
const hello = setTimeout(() => {
  // Still busy with a run whose relay is gone: it is stuck.
  try { process.kill(Number(fs.readFileSync(sockPath + '.pid', 'utf8')), 'SIGKILL'); } catch (e) {}
  finish({ status: 'no_driver', error: 'the driver did not answer; it was killed' });
}, 5000);

function handle(msg) {
  if (msg.op === 'hello') {
    clearTimeout(hello);
    pid = msg.pid;
    const data = Buffer.from(JSON.stringify({ op: 'run', code }), 'utf8');
    const header = Buffer.alloc(4);
    header.writeUInt32BE(data.length);
    conn.write(Buffer.concat([header, data]));
    setTimeout(() => {
      interrupted = true;
      try { process.kill(pid, 'SIGINT'); } catch (e) {}
      setTimeout(() => {
        killed = true;
        try { process.kill(pid, 'SIGKILL'); } catch (e) {}
        setTimeout(() => finish({ status: 'killed' }), 2000);
      }, Number(graceArg));
    }, Math.min(Number(timeoutArg), 2 ** 31 - 1));
  } else if (msg.op === 'out') {
    write(msg.fd === 2 ? 2 : 1, msg.data);
  } else if (msg.op === 'done') {
    if (interrupted) msg.status = 'timeout';
    finish(msg);
  }
}

let buf = Buffer.alloc(0);
conn.on('data', (d) => {
  buf = Buffer.concat([buf, d]);
  while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
    const n = buf.readUInt32BE(0);
    const msg = JSON.parse(buf.subarray(4, 4 + n).toString('utf8'));
    buf = buf.subarray(4 + n);
    handle(msg);
  }
});
function gone(error) {
  if (!pid) finish({ status: 'no_driver', error: error ? error.message : 'connection closed' });
  else finish({ status: killed ? 'killed' : 'died' });
}
conn.on('error', gone);
conn.on('close', () => gone(null));
)JS";

}  // namespace corral::lang
