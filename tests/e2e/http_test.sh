#!/bin/bash
# The HTTP API of `corral serve` with curl, over the unix socket and TCP: every endpoint,
# bearer-token auth, rate limiting and admission control (429 + Retry-After), malformed input
# (400 with the error JSON naming the field), body size (413), SSE streaming, the /metrics
# text format, /mcp transport rules, bad flags, SIGTERM leaving no sandbox behind, and the
# README's HTTP examples. Prints PASS/FAIL/SKIP lines; exits 1 on a FAIL.
# Usage: tests/e2e/http_test.sh /path/to/corral   (from the repository root)
set -u
CORRAL=${1:?usage: $0 /path/to/corral}
CORRAL=$(readlink -f "$CORRAL")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
if [ "$(id -u)" != 0 ]; then echo "SKIP http: needs root (the native backend)"; exit 0; fi
command -v curl >/dev/null || { echo "SKIP http: curl is not installed"; exit 0; }

TMP=$(mktemp -d /tmp/corral-http-XXXXXX)
chmod 755 "$TMP"
FAILED=0
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && kill -TERM "$p" && wait "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT

pass() { echo "PASS http: $1"; }
fail() { echo "FAIL http: $1"; FAILED=1; }
# check NAME COMMAND...: PASS if the command succeeds.
check() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n"; fi; }

# start NAME ARGS...: a server on $TMP/NAME.sock; sets SOCK, PID, LOG.
start() {
  local name=$1; shift
  SOCK=$TMP/$name.sock LOG=$TMP/$name.log
  "$CORRAL" serve --socket "$SOCK" "$@" 2>"$LOG" &
  PID=$!
  PIDS+=("$PID")
  for _ in $(seq 100); do [ -S "$SOCK" ] && break; kill -0 "$PID" 2>/dev/null || break; sleep 0.05; done
  [ -S "$SOCK" ] || { fail "server $name did not start: $(cat "$LOG")"; return 1; }
}
stop() {  # PID: SIGTERM, wait, return its exit status
  kill -TERM "$1"; wait "$1"
}

# u METHOD PATH [curl args...]: over the unix socket; prints the body, then the status on
# the last line.
u() { local m=$1 p=$2; shift 2; curl -s --path-as-is -X "$m" --unix-socket "$SOCK" -w '\n%{http_code}' "$@" "http://corral$p"; }
status_of() { tail -n1 <<<"$1"; }
body_of() { sed '$d' <<<"$1"; }
# jq-free JSON field access: json_get BODY EXPR (python expression over `j`).
json_get() { $PY -c 'import json,sys; j=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
# expect_error NAME RESPONSE STATUS FIELD: the status and {"error":{code,message,field}}.
expect_error() {
  local n=$1 r=$2 want=$3 field=$4 got b
  got=$(status_of "$r"); b=$(body_of "$r")
  if [ "$got" = "$want" ] && $PY -c '
import json, sys
e = json.loads(sys.argv[1])["error"]
assert isinstance(e["code"], str) and e["code"] and isinstance(e["message"], str) and e["message"]
assert e["field"] == sys.argv[2], e' "$b" "$field" 2>/dev/null; then
    pass "$n"
  else
    fail "$n: wanted $want naming '$field', got $got: $b"
  fi
}

# ---------------------------------------------------------------- bad flags
for bad in "--max-concurrent 0" "--rate fast" "--max-body 1" "--listen nonsense" "--bogus" "--backend nope"; do
  out=$("$CORRAL" serve --socket "$TMP/never.sock" $bad 2>&1); code=$?
  if [ $code = 2 ] && [ "$(wc -l <<<"$out")" = 1 ]; then pass "serve $bad: exit 2 with one line"
  else fail "serve $bad: exit $code: $out"; fi
done
out=$("$CORRAL" serve --socket "$TMP/never.sock" --listen 0.0.0.0:0 2>&1); code=$?
if [ $code = 2 ] && grep -q "token" <<<"$out"; then pass "TCP off loopback without a token refuses to start"
else fail "TCP off loopback without a token: exit $code: $out"; fi
out=$("$CORRAL" serve --socket "$TMP/never.sock" --listen 127.0.0.1:0 2>&1); code=$?
if [ $code = 2 ] && grep -q "token" <<<"$out"; then pass "TCP on loopback without a token refuses to start too"
else fail "TCP on loopback without a token: exit $code: $out"; fi

# ---------------------------------------------------------------- the unix socket
mkdir -p "$TMP/libs"
printf 'secret-token-for-tests-0123456789\n' >"$TMP/token"; chmod 600 "$TMP/token"
start main --listen 127.0.0.1:0 --token-file "$TMP/token" --max-body 65536 --library-dir "$TMP/libs" || exit 1
MAIN_PID=$PID MAIN_SOCK=$SOCK MAIN_LOG=$LOG
check "socket mode is 0660" test "$(stat -c %a "$SOCK")" = 660

r=$(u GET /healthz); check "GET /healthz" test "$(status_of "$r")" = 200 -a "$(json_get "$(body_of "$r")" 'j["status"]')" = ok
r=$(u GET /v1/languages)
check "GET /v1/languages lists python" test "$(json_get "$(body_of "$r")" '[l["name"] for l in j["languages"] if l["available"]].count("python")')" = 1
r=$(u GET /v1/pool); check "GET /v1/pool" test "$(status_of "$r")" = 200
r=$(u POST /v1/execute -H 'Content-Type: application/json' -d '{"language":"python","code":"import sys; print(sys.stdin.read() + open(\"in.txt\").read())","stdin":"a","files":[{"path":"in.txt","content":"b"}]}')
check "POST /v1/execute with stdin and files" test "$(json_get "$(body_of "$r")" 'j["stdout"]')" = ab

# Sessions: open, files in and out, run, command, info, list, close.
r=$(u POST /v1/sessions -d '{"language":"python"}')
SID=$(json_get "$(body_of "$r")" 'j["id"]')
check "POST /v1/sessions -> 201 with a 128-bit id" test "$(status_of "$r")" = 201 -a ${#SID} = 32
r=$(u PUT "/v1/sessions/$SID/files/data/x.csv?mode=0600" --data-binary $'a,b\n1,2\n')
check "PUT a file" test "$(status_of "$r")" = 201
r=$(u POST "/v1/sessions/$SID/run" -d '{"code":"import csv\nrows = list(csv.reader(open(\"data/x.csv\")))\nopen(\"out.txt\",\"w\").write(str(len(rows)))\nprint(rows[1])"}')
check "run in the session" test "$(json_get "$(body_of "$r")" 'j["stdout"]')" = "['1', '2']"
r=$(u POST "/v1/sessions/$SID/command" -d '{"command":"cat out.txt; stat -c %a data/x.csv"}')
check "command in the session" test "$(json_get "$(body_of "$r")" 'j["stdout"]')" = $'2600'
r=$(u GET "/v1/sessions/$SID/files/out.txt")
check "GET a file back (raw bytes)" test "$(body_of "$r")" = 2
r=$(u GET "/v1/sessions/$SID/files/%2Fsandbox/out.txt")
check "GET by absolute sandbox path" test "$(body_of "$r")" = 2
r=$(u GET "/v1/sessions/$SID"); check "GET session info counts runs" test "$(json_get "$(body_of "$r")" 'j["runs"]')" = 2
r=$(u GET "/v1/sessions"); check "GET /v1/sessions lists it" test "$(json_get "$(body_of "$r")" 'len(j["sessions"])')" = 1

# Bad input: the field is named, nothing crashes.
expect_error "malformed JSON" "$(u POST /v1/execute -d '{"language":')" 400 body
expect_error "a JSON array body" "$(u POST /v1/execute -d '[1]')" 400 body
expect_error "missing code" "$(u POST /v1/execute -d '{"language":"python"}')" 400 code
expect_error "unknown field" "$(u POST /v1/execute -d '{"language":"python","code":"1","colour":"red"}')" 400 colour
expect_error "wrong type" "$(u POST /v1/execute -d '{"language":"python","code":"1","timeout_ms":"soon"}')" 400 timeout_ms
expect_error "unknown language" "$(u POST /v1/execute -d '{"language":"cobol","code":"1"}')" 400 language
expect_error "nested field" "$(u POST /v1/execute -d '{"language":"python","code":"1","files":[{"path":"a","mode":"rw"}]}')" 400 'files[0].mode'
expect_error "traversal in files[].path" "$(u POST /v1/execute -d '{"language":"python","code":"1","files":[{"path":"../../etc/x","content":""}]}')" 400 'files[0].path'
expect_error "traversal in a URL file path" "$(u GET "/v1/sessions/$SID/files/../../../etc/passwd")" 400 path
expect_error "encoded traversal in a URL file path" "$(u GET "/v1/sessions/$SID/files/a/%2e%2e/%2E%2E/etc/passwd")" 400 path
expect_error "library given as a path" "$(u POST /v1/execute -d '{"language":"python","code":"1","libraries":["/etc"]}')" 400 'libraries[0]'
expect_error "oversize body -> 413" "$(head -c 100000 /dev/zero | tr '\0' ' ' | u POST /v1/execute --data-binary @-)" 413 body
expect_error "unknown session" "$(u POST /v1/sessions/0123456789abcdef0123456789abcdef/run -d '{"code":"1"}')" 404 session_id
expect_error "unknown endpoint" "$(u GET /v2/nothing)" 404 path
expect_error "wrong method" "$(u GET /v1/execute)" 405 method
r=$(u POST /v1/execute -d '{"language":"python","code":"import time; time.sleep(5)","timeout_ms":300}')
check "a timeout is a result (200, status timeout)" test "$(json_get "$(body_of "$r")" 'j["status"]')" = timeout
r=$(u POST /v1/execute -d '{"language":"python","code":"import subprocess","security_preset":"strict"}')
check "a security refusal is a result (status policy_violation)" test "$(json_get "$(body_of "$r")" 'j["status"]')" = policy_violation
check "the server survived all of it" kill -0 "$MAIN_PID"

# SSE: events arrive as the program writes; the last event is the result.
sse=$(curl -sN --unix-socket "$SOCK" -H 'Accept: text/event-stream' "http://corral/v1/sessions/$SID/run" \
  -d '{"code":"import sys, time\nprint(\"first\", flush=True)\ntime.sleep(0.3)\nprint(\"oops\", file=sys.stderr)"}')
if grep -q '^event: stdout$' <<<"$sse" && grep -q '^data: {"data":"first\\n"}$' <<<"$sse" &&
   grep -q '^event: stderr$' <<<"$sse" && [ "$(grep '^event:' <<<"$sse" | tail -1)" = "event: result" ]; then
  pass "SSE streaming of a session run"
else fail "SSE streaming: $sse"; fi
sse=$(curl -sN --unix-socket "$SOCK" "http://corral/v1/execute" -d '{"language":"bash","code":"echo streamed","stream":true}')
check "SSE for /v1/execute with \"stream\":true" grep -q '^data: {"data":"streamed\\n"}$' <<<"$sse"

r=$(u DELETE "/v1/sessions/$SID"); check "DELETE the session" test "$(status_of "$r")" = 200
expect_error "the closed session is gone" "$(u GET "/v1/sessions/$SID/files/out.txt")" 404 session_id

# /metrics: Prometheus text format, every sample line well formed.
m=$(u GET /metrics)
if [ "$(status_of "$m")" = 200 ] && $PY - "$(body_of "$m")" <<'EOF'
import re, sys
text = sys.argv[1]
sample = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? ([-+]?[0-9.]+([eE][-+]?[0-9]+)?|[-+]?Inf|NaN)$')
for line in text.splitlines():
    if line.startswith("# HELP ") or line.startswith("# TYPE "):
        continue
    assert sample.match(line), line
for need in ['corral_executions_total{status="ok"}', 'corral_executions_total{status="timeout"}',
             'corral_executions_running 0', 'corral_sessions_active 0', '# TYPE corral_http_request_duration_seconds histogram',
             'corral_http_request_duration_seconds_bucket{route="/v1/execute",le="+Inf"}',
             'corral_http_requests_total{route="/v1/execute",code="400"}']:
    assert need in text, need
EOF
then pass "/metrics in the Prometheus text format"; else fail "/metrics: $(body_of "$m" | head -20)"; fi

# Raw HTTP on the socket: garbage, huge headers, pipelining, a client that vanishes.
if $PY - "$SOCK" <<'EOF'
import json, socket, sys
def talk(data):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.settimeout(10)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    out = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
    s.close()
    return out
def body(resp):
    return json.loads(resp.split(b"\r\n\r\n", 1)[1])
r = talk(b"GARBAGE\r\n\r\n")
assert r.startswith(b"HTTP/1.1 400"), r
assert body(r)["error"]["field"] == "request", r
r = talk(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n")
assert r.startswith(b"HTTP/1.1 431"), r[:100]
r = talk(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/pool HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
assert r.count(b"HTTP/1.1 200") == 2, r
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"POST /v1/execute HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"langu")
s.close()
r = talk(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
assert r.startswith(b"HTTP/1.1 200"), r
EOF
then pass "raw HTTP: garbage 400, huge header 431, pipelining, vanished client"; else fail "raw HTTP handling"; fi

# ---------------------------------------------------------------- TCP and the token
ADDR=$(grep -o 'http://[0-9.]*:[0-9]*' "$MAIN_LOG" | head -1)
TOKEN=$(cat "$TMP/token")
code=$(curl -s -o /dev/null -w '%{http_code}' "$ADDR/v1/languages")
check "TCP without the token: 401" test "$code" = 401
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer wrong-token" "$ADDR/v1/languages")
check "TCP with a wrong token: 401" test "$code" = 401
r=$(curl -s -H "Authorization: Bearer $TOKEN" "$ADDR/v1/execute" -d '{"language":"bash","code":"echo over tcp"}')
check "TCP with the token runs code" test "$(json_get "$r" 'j["stdout"]')" = "over tcp"
code=$(curl -s -o /dev/null -w '%{http_code}' "$ADDR/healthz")
check "TCP /healthz needs no token" test "$code" = 200

# /mcp: Streamable HTTP transport rules (the MCP test drives it with the official SDK).
H=(-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json')
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
hdrs=$(curl -s -D - -o "$TMP/init.json" "${H[@]}" -H 'Accept: application/json, text/event-stream' "$ADDR/mcp" -d "$init")
MSID=$(grep -i '^mcp-session-id:' <<<"$hdrs" | tr -d '\r' | awk '{print $2}')
check "/mcp initialize assigns Mcp-Session-Id" test ${#MSID} = 32
code=$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" -H 'Accept: application/json, text/event-stream' "$ADDR/mcp" -d '{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
check "/mcp without Mcp-Session-Id: 400" test "$code" = 400
r=$(curl -s "${H[@]}" -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $MSID" "$ADDR/mcp" -d '{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
check "/mcp tools/list in the session" test "$(json_get "$r" 'len(j["result"]["tools"]) > 0')" = True
code=$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" -H 'Accept: text/html' -H "Mcp-Session-Id: $MSID" "$ADDR/mcp" -d '{"jsonrpc":"2.0","id":3,"method":"ping"}')
check "/mcp with an Accept of neither JSON nor SSE: 406" test "$code" = 406
code=$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $MSID" "$ADDR/mcp" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}')
check "/mcp notification: 202" test "$code" = 202
code=$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" -H 'Accept: text/event-stream' "$ADDR/mcp")
check "GET /mcp: 405" test "$code" = 405
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "${H[@]}" -H "Mcp-Session-Id: $MSID" "$ADDR/mcp")
check "DELETE /mcp ends the session" test "$code" = 200
code=$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $MSID" "$ADDR/mcp" -d '{"jsonrpc":"2.0","id":4,"method":"ping"}')
check "/mcp after DELETE: 404" test "$code" = 404

# ---------------------------------------------------------------- README examples
if grep -q '^## HTTP API' "$ROOT/README.md" 2>/dev/null; then
  $PY - "$ROOT/README.md" >"$TMP/readme.sh" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
section = re.split(r"\n## ", text.split("\n## HTTP API", 1)[1], maxsplit=1)[0]
for i, block in enumerate(re.findall(r"```sh\n(.*?)```", section, re.S)):
    print("#--- example %d" % (i + 1))
    print(block)
EOF
  n=0
  while IFS= read -r -d '' block; do
    n=$((n + 1))
    # The examples use the default socket; here they talk to this test's server.
    script=$(sed -e "s#/run/corral/corral.sock#$MAIN_SOCK#g" <<<"$block")
    if out=$(cd "$TMP" && bash -e -o pipefail -c "$script" 2>&1); then pass "README HTTP example $n"
    else fail "README HTTP example $n: $out"; fi
  done < <($PY - "$TMP/readme.sh" <<'EOF'
import sys
parts = open(sys.argv[1]).read().split("#--- example ")[1:]
for p in parts:
    sys.stdout.write(p.split("\n", 1)[1] + "\0")
EOF
)
  [ $n -gt 0 ] || fail "README HTTP API section has no sh examples"
else
  echo "SKIP http: README.md has no '## HTTP API' section yet"
fi

# Nothing leaks across requests: the server's fds and threads are back where they were.
sleep 0.3
fds0=$(ls /proc/$MAIN_PID/fd | wc -l); thr0=$(awk '/^Threads/{print $2}' /proc/$MAIN_PID/status)
for i in $(seq 60); do
  u GET /healthz >/dev/null
  u POST /v1/execute -d '{"language":' >/dev/null
  u GET "/v1/sessions/x/files/../../etc/passwd" >/dev/null
done
for i in $(seq 8); do
  u POST /v1/execute -d '{"language":"bash","code":"echo '$i'"}' >/dev/null
  r=$(u POST /v1/sessions -d '{"language":"bash"}'); id=$(json_get "$(body_of "$r")" 'j["id"]')
  u POST "/v1/sessions/$id/command" -d '{"command":"true"}' >/dev/null
  u DELETE "/v1/sessions/$id" >/dev/null
done
sleep 0.5
fds1=$(ls /proc/$MAIN_PID/fd | wc -l); thr1=$(awk '/^Threads/{print $2}' /proc/$MAIN_PID/status)
check "no fd or thread leak over 200 requests (fds $fds0 -> $fds1, threads $thr0 -> $thr1)" test "$fds1" -le "$fds0" -a "$thr1" -le "$thr0"

check "main server: SIGTERM exits 0" stop "$MAIN_PID"
check "main server: the socket file is removed" test ! -e "$MAIN_SOCK"

# ---------------------------------------------------------------- rate limit
start rate --rate 2/s || exit 1
codes=""; retry=""
for _ in $(seq 8); do
  codes+="$(curl -s -o /dev/null -D "$TMP/h" -w '%{http_code} ' --unix-socket "$SOCK" http://corral/v1/pool)"
  grep -qi '^retry-after:' "$TMP/h" && retry=yes
done
if grep -q 200 <<<"$codes" && grep -q 429 <<<"$codes" && [ "$retry" = yes ]; then pass "rate limit: 429 with Retry-After ($codes)"
else fail "rate limit: $codes"; fi
stop "$PID" >/dev/null

# ---------------------------------------------------------------- admission control
start admit --max-concurrent 1 || exit 1
u POST /v1/execute -d '{"language":"bash","code":"sleep 2"}' >"$TMP/slow" &
SLOW=$!
sleep 0.7
r=$(curl -s -D "$TMP/h" -w '\n%{http_code}' --unix-socket "$SOCK" http://corral/v1/execute -d '{"language":"bash","code":"echo hi"}')
expect_error "admission control: 429 while max-concurrent runs" "$r" 429 max_concurrent
check "admission control: Retry-After" grep -qi '^retry-after: ' "$TMP/h"
wait $SLOW
check "the admitted run finished" test "$(json_get "$(body_of "$(cat "$TMP/slow")")" 'j["status"]')" = ok
stop "$PID" >/dev/null

# ---------------------------------------------------------------- a pool of ready sandboxes
start pool --pool 1 || exit 1
for _ in $(seq 50); do
  r=$(u GET /v1/pool)
  [ "$(json_get "$(body_of "$r")" '[p["idle"] for p in j["pools"] if p["language"] == "python"][0]')" = 1 ] && break
  sleep 0.1
done
check "--pool: /v1/pool shows a warm python pool" test "$(json_get "$(body_of "$r")" 'j["enabled"] and [p["idle"] for p in j["pools"] if p["language"] == "python"][0]')" = 1
r=$(u POST /v1/execute -d '{"language":"python","code":"print(\"pooled\")"}')
check "--pool: a run on a pooled sandbox" test "$(json_get "$(body_of "$r")" 'j["stdout"]')" = pooled
m=$(u GET /metrics)
check "--pool: pool gauges in /metrics" grep -q '^corral_pool_sandboxes{language="python",state="idle"} ' <<<"$(body_of "$m")"
POOL_PID=$PID
pool_kids=$(pgrep -P "$POOL_PID" | tr '\n' ' ')
check "--pool: SIGTERM exits 0" stop "$POOL_PID"
alive=0; for k in $pool_kids; do kill -0 "$k" 2>/dev/null && alive=$((alive + 1)); done
check "--pool: no pooled sandbox left after SIGTERM ($pool_kids)" test $alive = 0

# ---------------------------------------------------------------- interactive sessions on the engines
# With the engines up (tools/engines start): `--backend docker|podman` sessions keep one
# interpreter, as on native. Skipped, saying why, where an engine or its image is missing.
image=${CORRAL_TEST_IMAGE:-corral-test:latest}
for engine in docker podman; do
  esock=/var/run/docker.sock
  [ $engine = podman ] && esock=/run/podman/podman.sock
  if ! curl -sf --max-time 3 --unix-socket "$esock" "http://engine/images/$image/json" >/dev/null 2>&1; then
    echo "SKIP http: $engine interactive session: engine or image $image not available (tools/engines start)"
    continue
  fi
  start "$engine" --backend "$engine" --image "$image" || continue
  r=$(u POST /v1/sessions -d '{"language":"python","interactive":true}'); id=$(json_get "$(body_of "$r")" 'j["id"]')
  check "$engine: interactive session -> 201" test "$(status_of "$r")" = 201
  r=$(u POST "/v1/sessions/$id/run" -d '{"code":"import math\nx = 41\ndef f(v):\n    return v + 1\nf(x)"}')
  check "$engine: a run's last expression comes back as its value" test "$(json_get "$(body_of "$r")" 'j["value"]')" = 42
  r=$(u POST "/v1/sessions/$id/run" -d '{"code":"print(f(x) * 2, math.floor(2.5))"}')
  check "$engine: variables, functions and imports persist" test "$(json_get "$(body_of "$r")" 'j["stdout"]')" = "84 2"
  r=$(u POST "/v1/sessions/$id/run" -d '{"code":"while True: pass","timeout_ms":500}')
  check "$engine: a run past its timeout is interrupted" test "$(json_get "$(body_of "$r")" 'j["status"]')" = timeout
  r=$(u POST "/v1/sessions/$id/run" -d '{"code":"x"}')
  check "$engine: the state survives the timeout" test "$(json_get "$(body_of "$r")" 'j["value"]')" = 41
  r=$(u DELETE "/v1/sessions/$id"); check "$engine: DELETE the interactive session" test "$(status_of "$r")" = 200
  check "$engine: SIGTERM exits 0" stop "$PID"
done

# ---------------------------------------------------------------- SIGTERM leaves nothing
start term || exit 1
TERM_PID=$PID
r=$(u POST /v1/sessions -d '{"language":"python"}'); S1=$(json_get "$(body_of "$r")" 'j["id"]')
r=$(u POST /v1/sessions -d '{"language":"bash"}')
u POST "/v1/sessions/$S1/run" -d '{"code":"import time; time.sleep(1.5); print(\"finished\")"}' >"$TMP/inflight" &
INFLIGHT=$!
sleep 0.5
# The sandboxes' processes (children of the server) and their cgroups, before the signal.
kids=$(pgrep -P "$TERM_PID" | tr '\n' ' ')
cgroups=()
for k in $kids; do
  while IFS=: read -r _ ctrl path; do
    case "$path" in */corral/*) ;; *) continue ;; esac
    if [ -z "$ctrl" ]; then cgroups+=("/sys/fs/cgroup$path"); else
      c=${ctrl%%,*}; c=${c#name=}; for d in /sys/fs/cgroup/$c /sys/fs/cgroup/${ctrl}; do [ -d "$d$path" ] && cgroups+=("$d$path"); done
    fi
  done < "/proc/$k/cgroup"
done
check "sandboxes were running under the server before SIGTERM" test -n "$kids"
kill -TERM "$TERM_PID"
wait "$TERM_PID"; code=$?
wait $INFLIGHT
check "SIGTERM: exit 0" test "$code" = 0
check "SIGTERM: the run in flight finished" test "$(json_get "$(body_of "$(cat "$TMP/inflight")")" 'j["stdout"]')" = finished
alive=0; for k in $kids; do kill -0 "$k" 2>/dev/null && alive=$((alive + 1)); done
check "SIGTERM: no sandbox process left ($kids)" test $alive = 0
left=0; for c in "${cgroups[@]}"; do [ -d "$c" ] && { left=$((left + 1)); echo "  left: $c"; }; done
check "SIGTERM: no sandbox cgroup left (${#cgroups[@]} checked)" test $left = 0
check "SIGTERM: socket removed" test ! -e "$SOCK"

exit $FAILED
