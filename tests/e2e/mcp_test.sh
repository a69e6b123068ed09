#!/usr/bin/env bash
# MCP with real clients from npm: the official SDK client (@modelcontextprotocol/sdk) over
# stdio (`corral mcp`) and over Streamable HTTP (`corral serve`'s /mcp with a bearer token),
# raw stdio framing and shutdown, and the generic server scenarios of the official
# conformance suite (@modelcontextprotocol/conformance 0.1.9). One PASS/FAIL/SKIP line per check.
#   tests/e2e/mcp_test.sh /path/to/corral
set -uo pipefail
CORRAL=${1:-}
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$HERE/mcp
# The conformance scenarios that apply to any server; the rest expect the SDKs' own test
# tools, resources and prompts (test_simple_text, test://static-text, ...).
SCENARIOS="server-initialize ping tools-list logging-set-level server-sse-multiple-streams"

skip_all() {
  for c in sdk-stdio stdio-raw sdk-http conformance; do echo "SKIP mcp: $c: $1"; done
  exit 0
}
[ -n "$CORRAL" ] && [ -x "$CORRAL" ] || { echo "FAIL mcp: usage: $0 /path/to/corral (got '${CORRAL}')"; exit 1; }
CORRAL=$(cd "$(dirname "$CORRAL")" && pwd)/$(basename "$CORRAL")
command -v node >/dev/null && command -v npm >/dev/null || skip_all "node and npm are not installed"
[ "$(id -u)" -eq 0 ] || skip_all "needs root: corral mcp runs native sandboxes"

# node_modules is installed from the lockfile (gitignored); reinstalled when the lockfile changes.
stamp=$DIR/node_modules/.corral-lock-stamp
if ! cmp -s "$DIR/package-lock.json" "$stamp" 2>/dev/null; then
  if (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error >/tmp/corral-mcp-npm.$$ 2>&1); then
    cp "$DIR/package-lock.json" "$stamp"
    echo "PASS mcp: npm ci (@modelcontextprotocol/sdk, @modelcontextprotocol/conformance)"
  else
    echo "FAIL mcp: npm ci: $(tail -3 /tmp/corral-mcp-npm.$$ | tr '\n' ' ')"
    rm -f /tmp/corral-mcp-npm.$$
    exit 1
  fi
  rm -f /tmp/corral-mcp-npm.$$
fi

# Runs a node script that prints its own PASS/FAIL lines; a crash without them is a FAIL.
run_node() {  # label, script, args...
  local label=$1 out; shift
  out=$(cd "$DIR" && timeout 600 node "$@" 2>&1)
  local rc=$?
  echo "$out" | grep -E '^(PASS|FAIL|SKIP) '
  if ! echo "$out" | grep -qE '^(PASS|FAIL|SKIP) ' || { [ $rc -ne 0 ] && ! echo "$out" | grep -q '^FAIL '; }; then
    echo "FAIL mcp: $label exited $rc: $(echo "$out" | tail -5 | tr '\n' ' ')"
  fi
  [ $rc -ne 0 ] && echo "$out" | grep -vE '^(PASS|FAIL|SKIP) ' | tail -20 >&2
}

run_node sdk-stdio client_checks.mjs stdio "$CORRAL"
run_node stdio-raw stdio_raw.mjs "$CORRAL"

# Streamable HTTP: corral serve on a loopback port with a bearer token.
if "$CORRAL" serve --help 2>&1 | grep -q "not built yet"; then
  echo "SKIP mcp: sdk-http: corral serve is not built yet"
  for s in $SCENARIOS; do echo "SKIP mcp: conformance $s: corral serve is not built yet"; done
  exit 0
fi
work=$(mktemp -d /tmp/corral-mcp-e2e.XXXXXX)
server_pid=""; proxy_pid=""
cleanup() {
  [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$server_pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$token" >"$work/token"
chmod 600 "$work/token"
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
"$CORRAL" serve --socket "$work/corral.sock" --listen "127.0.0.1:$port" --token-file "$work/token" >"$work/serve.log" 2>&1 &
server_pid=$!
up=0
for _ in $(seq 1 100); do
  if curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" -H "Authorization: Bearer $token" 2>/dev/null; then up=1; break; fi
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ $up -ne 1 ]; then
  echo "FAIL mcp: corral serve --listen 127.0.0.1:$port did not come up: $(tail -3 "$work/serve.log" | tr '\n' ' ')"
  exit 1
fi
url="http://127.0.0.1:$port/mcp"

code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}')
if [ "$code" = 401 ]; then echo "PASS mcp-http: /mcp without the bearer token is 401"
else echo "FAIL mcp-http: /mcp without the bearer token answered $code, expected 401"; fi

run_node sdk-http client_checks.mjs http "$url" "$token"

# The conformance client sends no credentials: a loopback proxy adds the token.
node "$DIR/auth_proxy.mjs" "http://127.0.0.1:$port" "$token" >"$work/proxy.port" 2>"$work/proxy.log" &
proxy_pid=$!
for _ in $(seq 1 50); do [ -s "$work/proxy.port" ] && break; sleep 0.1; done
proxy_port=$(head -1 "$work/proxy.port")
for s in $SCENARIOS; do
  out=$(cd "$work" && timeout 300 node "$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
    server --url "http://127.0.0.1:$proxy_port/mcp" --scenario "$s" 2>&1)
  rc=$?
  summary=$(echo "$out" | grep -E '^Passed: [0-9]+/[0-9]+' | tail -1)
  if [ $rc -eq 0 ] && echo "$summary" | grep -qE '^Passed: [1-9][0-9]*/'; then
    echo "PASS mcp-conformance: $s ($summary)"
  else
    echo "FAIL mcp-conformance: $s (exit $rc; ${summary:-no summary}): $(echo "$out" | grep -E 'Error:' | head -3 | tr '\n' ' ')"
  fi
done

# The README's "By hand" example, as written (sudo and the build path swapped for this binary).
readme=$HERE/../../README.md
example=$(sed -n '/^## MCP server/,/^## /p' "$readme" | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d' |
  sed "s#sudo build/src/cli/corral#\"\$CORRAL\"#")
if [ -z "$example" ]; then
  echo "FAIL mcp-readme: no sh example in the README's MCP section"
elif out=$(CORRAL=$CORRAL timeout 60 bash -c "$example" 2>/dev/null) && echo "$out" | grep -q '42\\n'; then
  echo "PASS mcp-readme: the README's by-hand example prints 42"
else
  echo "FAIL mcp-readme: the README's by-hand example: $(echo "$out" | tail -2 | cut -c1-300)"
fi
