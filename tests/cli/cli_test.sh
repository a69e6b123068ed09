#!/usr/bin/env bash
# CLI behaviour: exit codes pass through, --json prints a parseable ExecResult, and bad input
# gets exit 2 with exactly one line on stderr naming the problem. Prints PASS/FAIL/SKIP lines.
set -u
C=${1:?usage: cli_test.sh path/to/corral}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
if [ "$(id -u)" -ne 0 ]; then echo "SKIP cli: needs root for the native backend"; exit 0; fi

# expect_rc NAME WANT_RC [STDERR_PATTERN] -- ARGS...
expect() {
  local name=$1 want=$2 pattern=$3; shift 4
  "$C" "$@" >"$T/out" 2>"$T/err" </dev/null
  local rc=$?
  if [ "$rc" -ne "$want" ]; then fail "$name" "exit $rc, want $want; stderr: $(head -c 300 "$T/err")"; return; fi
  if [ -n "$pattern" ]; then
    if [ "$(wc -l <"$T/err")" -ne 1 ]; then fail "$name" "stderr is not one line: $(cat "$T/err")"; return; fi
    if ! grep -qE "$pattern" "$T/err"; then fail "$name" "stderr '$(cat "$T/err")' lacks /$pattern/"; return; fi
  fi
  pass "$name"
}

expect exit_code_passes_through 7 "" -- exec -- /bin/sh -c 'exit 7'
expect exit_zero 0 "" -- exec -- /bin/true
expect signal_is_128_plus 137 "" -- exec -- /bin/sh -c 'kill -9 $$'
expect timeout_is_124 124 "timeout" -- exec --timeout 200 -- /bin/sleep 5
expect nonexistent_program 2 "execve /nonexistent/prog: No such file" -- exec -- /nonexistent/prog
expect program_not_in_path 2 "execve no-such-cmd" -- exec -- no-such-cmd
# corral-init fails to set the sandbox up (its workdir cannot be made on the read-only /usr):
# reported as such, though `corral exec` sends its request before init reports ready.
echo '{"workdir": "/usr/corral-no-such-dir/work"}' >"$T/bad_workdir.json"
expect setup_failure_reported 2 "sandbox setup failed at 'create workdir'.*Read-only" -- exec --policy "$T/bad_workdir.json" -- /bin/true
expect unreadable_policy 2 "/nonexistent.json: cannot read policy file" -- exec --policy /nonexistent.json -- /bin/true
echo '{"limits": {"wall_ms": ' >"$T/malformed.json"
expect malformed_policy 2 "not valid JSON" -- exec --policy "$T/malformed.json" -- /bin/true
echo '{"limits": {"memory_bytes": -5}}' >"$T/negative.json"
expect negative_limit 2 "limits.memory_bytes: must not be negative" -- exec --policy "$T/negative.json" -- /bin/true
echo '{"limits": {"pids": 0}}' >"$T/zero.json"
expect zero_limit 2 "limits.pids: must be at least 1" -- exec --policy "$T/zero.json" -- /bin/true
echo '{"limits": {"wall_ms": "soon"}}' >"$T/string.json"
expect non_numeric_limit 2 "limits.wall_ms: must be an integer" -- exec --policy "$T/string.json" -- /bin/true
echo '{"network": {"mode": "allowlist", "allow": ["example.org:443"]}}' >"$T/allow.json"
expect unsupported_feature 2 "network.mode" -- exec --policy "$T/allow.json" -- /bin/true
echo '{"surprise": true}' >"$T/unknown.json"
expect unknown_policy_key 2 "surprise: unknown field" -- exec --policy "$T/unknown.json" -- /bin/true
expect bad_timeout 2 "timeout" -- exec --timeout -3 -- /bin/true
expect zero_timeout 2 "timeout" -- exec --timeout 0 -- /bin/true
expect unknown_option 2 "unrecognised|unrecognized" -- exec --frobnicate -- /bin/true
expect no_program 2 "no program" -- exec
expect unknown_command 2 "unknown command" -- launch

# stdin passes through, stdout and stderr stay separate.
out=$(printf 'ping' | "$C" exec -- /bin/sh -c 'cat; echo err >&2' 2>"$T/err")
[ "$out" = "ping" ] && [ "$(cat "$T/err")" = "err" ] && pass stdin_and_streams || fail stdin_and_streams "out='$out' err='$(cat "$T/err")'"

# --json is one parseable ExecResult.
"$C" exec --json -- /bin/sh -c 'echo hi; exit 3' >"$T/json" </dev/null
if /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "nonzero_exit", r
assert r["exit_code"] == 3 and r["stdout"] == "hi\n", r
assert r["usage"]["wall_ms"] > 0, r
' "$T/json"; then pass json_result; else fail json_result "$(cat "$T/json")"; fi

# A failed run leaves nothing mounted on the host (but for the network namespaces kept
# prepared for the next run, checked below).
count_mounts() { grep corral /proc/self/mountinfo | grep -vc " /run/corral/netns"; }
before=$(count_mounts)
"$C" exec -- /nonexistent >/dev/null 2>&1 </dev/null
"$C" exec --timeout 100 -- /bin/sleep 5 >/dev/null 2>&1 </dev/null
after=$(count_mounts)
[ "$before" = "$after" ] && pass no_mounts_left || fail no_mounts_left "before=$before after=$after"

# Prepared network namespaces (CORRAL_PREPARED_NETNS=1): a run's teardown stashes one for the
# next run, which takes it. Two sandboxes alive at once never share one; at most two per
# flavor wait, whatever number of runs came before; `corral doctor --cleanup` removes them.
# Without the variable nothing is stashed.
stash_mounts() { grep -c " /run/corral/netns/" /proc/self/mountinfo; }
settle() { for _ in $(seq 1 40); do pgrep -f "$C exec" >/dev/null || break; sleep 0.05; done; }
"$C" doctor --cleanup >/dev/null 2>&1
"$C" exec -- /bin/true </dev/null; "$C" exec -- /bin/true </dev/null
settle; sleep 0.3
[ "$(stash_mounts)" = 0 ] && ! grep -q " /run/corral/netns " /proc/self/mountinfo && pass netns_not_stashed_by_default ||
  fail netns_not_stashed_by_default "$(stash_mounts) stashed"
export CORRAL_PREPARED_NETNS=1
"$C" exec -- /bin/sh -c 'readlink /proc/self/ns/net; sleep 1.5' </dev/null >"$T/ns1" 2>&1 &
first=$!
for _ in $(seq 1 20); do [ -s "$T/ns1" ] && break; sleep 0.05; done
ns2=$("$C" exec -- /usr/bin/readlink /proc/self/ns/net </dev/null 2>&1)
ns1=$(cat "$T/ns1")
wait $first
case "$ns2" in net:\[*\]) ;; *) ns2="";; esac
[ -n "$ns2" ] && [ -n "$ns1" ] && [ "$ns1" != "$ns2" ] && [ "$ns2" != "$(readlink /proc/self/ns/net)" ] &&
  pass netns_never_shared || fail netns_never_shared "first=$ns1 second=$ns2"
for _ in 1 2 3 4 5; do "$C" exec -- /bin/true </dev/null; done
"$C" exec --policy <(echo '{"network": {"mode": "none"}}') -- /bin/true </dev/null
settle; sleep 0.3
n=$(stash_mounts)
[ "$n" -ge 1 ] && [ "$n" -le 4 ] && pass netns_stash_bounded || fail netns_stash_bounded "$n stashed namespaces"
out=$("$C" doctor --cleanup 2>&1)
[ "$(stash_mounts)" = 0 ] && ! grep -q " /run/corral/netns " /proc/self/mountinfo && echo "$out" | grep -q "prepared network namespace" && pass doctor_cleanup_unstashes ||
  fail doctor_cleanup_unstashes "left $(stash_mounts): $out"
unset CORRAL_PREPARED_NETNS

# The sandbox is taken apart after corral has exited (its answer does not wait for that):
# within 2 s none of its cgroups is left. They are named after the supervisor's pid.
"$C" exec -- /bin/true </dev/null & sup=$!
wait $sup; rc=$?
left=1
for _ in $(seq 1 40); do
  left=$(find /sys/fs/cgroup -maxdepth 9 -type d -name "n$sup-*" 2>/dev/null | wc -l)
  [ "$left" = 0 ] && break
  sleep 0.05
done
[ $rc -eq 0 ] && [ "$left" = 0 ] && pass teardown_after_exit || fail teardown_after_exit "rc=$rc cgroups left=$left"

# Two corral processes at once, each making and ending sandboxes: each removes the shared
# corral cgroup subtree whenever it finds it empty, the other puts it back. No run may fail.
loop() { local n=0; for _ in $(seq 1 25); do "$C" exec -- /bin/true </dev/null || n=$((n + 1)); done; echo $n >"$1"; }
loop "$T/race1" & l1=$!
loop "$T/race2" & l2=$!
wait $l1 $l2
[ "$(cat "$T/race1")" = 0 ] && [ "$(cat "$T/race2")" = 0 ] && pass concurrent_cli_runs ||
  fail concurrent_cli_runs "failed runs: $(cat "$T/race1") and $(cat "$T/race2")"

# libcurl is loaded on first use by the container backends only: a native run never
# resolves it (LD_DEBUG lists every library the supervisor loads, dlopen included), a
# docker one does (whether or not an engine answers).
n_native=$(LD_DEBUG=files "$C" exec -- /bin/true 2>&1 </dev/null | grep -c "file=libcurl")
n_docker=$(DOCKER_HOST=unix:///nonexistent.sock LD_DEBUG=files "$C" exec --backend docker --image none -- /bin/true 2>&1 </dev/null | grep -c "file=libcurl")
[ "$n_native" = 0 ] && [ "$n_docker" -ge 1 ] && pass libcurl_only_for_containers ||
  fail libcurl_only_for_containers "native loads=$n_native docker loads=$n_docker"

# A host without usable cgroup controllers (simulated: a private mount namespace with the
# cgroup filesystems unmounted): refused with a clear error, unless the policy accepts
# per-process rlimits.
if command -v unshare >/dev/null; then
  echo '{"allow_rlimit_fallback": true}' >"$T/fallback.json"
  out=$(unshare -m --propagation private sh -c "umount -R /sys/fs/cgroup && $C exec -- /bin/true" 2>&1 </dev/null); rc=$?
  if [ $rc -eq 2 ] && echo "$out" | grep -q "no usable cgroup controllers.*allow_rlimit_fallback"; then pass no_cgroups_refused
  else fail no_cgroups_refused "rc=$rc out=$out"; fi
  out=$(unshare -m --propagation private sh -c "umount -R /sys/fs/cgroup && $C exec --policy $T/fallback.json -- /bin/echo fallback" 2>&1 </dev/null); rc=$?
  [ $rc -eq 0 ] && [ "$out" = "fallback" ] && pass no_cgroups_rlimit_fallback || fail no_cgroups_rlimit_fallback "rc=$rc out=$out"
  out=$(unshare -m --propagation private sh -c "umount -R /sys/fs/cgroup && $C doctor" 2>&1 </dev/null)
  echo "$out" | grep -q "allow_rlimit_fallback" && pass doctor_explains_no_cgroups || fail doctor_explains_no_cgroups "$out"
else
  echo "SKIP no_cgroups: unshare(1) missing"
fi

# A killed supervisor leaves a stale cgroup that doctor --cleanup removes.
"$C" doctor --cleanup >"$T/cleanup" 2>&1 && grep -q "removed [0-9]* stale" "$T/cleanup" && pass doctor_cleanup_runs || fail doctor_cleanup_runs "$(cat "$T/cleanup")"
