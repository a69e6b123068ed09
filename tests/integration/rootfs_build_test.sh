#!/usr/bin/env bash
# `corral rootfs build`: builds the python and bash rootfs for real (debootstrap + apt; the
# cached base is reused when present), then checks that the base is shared, the language
# layer holds only the difference, sandboxes really run on the built rootfs, a second build
# is a cache hit, --rebuild works, builds are serialised by the lock, and failures leave
# nothing behind. Prints PASS/FAIL/SKIP lines.
#
#   rootfs_build_test.sh path/to/corral [path/to/build-driver]
#
# The driver, when given, is called as `DRIVER LANG [options]` in place of
# `corral rootfs build LANG [options]`.
set -u
C=${1:?usage: rootfs_build_test.sh path/to/corral [build-driver]}
if [ -n "${2:-}" ]; then BUILD=("$2"); else BUILD=("$C" rootfs build); fi
DIR=/var/lib/corral/rootfs
LAYERS=$DIR/layers
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "SKIP $1: $2"; }
if [ "$(id -u)" -ne 0 ]; then skip rootfs_build "needs root (debootstrap, mounts, chroot)"; exit 0; fi
if ! "${BUILD[@]}" --help >/dev/null 2>&1; then
  skip rootfs_build "'${BUILD[*]} --help' fails: rootfs build is not wired into this binary (pass a driver as \$2)"; exit 0
fi
if [ ! -f "$LAYERS/debian-bookworm-base-v1.json" ] && ! command -v debootstrap >/dev/null; then
  skip rootfs_build "debootstrap is not installed (apt-get install debootstrap) and no base is cached"; exit 0
fi
mounts() { grep -c ' overlay ' /proc/self/mountinfo; }
mounts_before=$(mounts)

# Unknown language: exit 2, one line naming the valid ones.
"${BUILD[@]}" klingon >"$T/out" 2>"$T/err"; rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "unknown language 'klingon'.*python" "$T/err"; then
  pass unknown_language_exit_2
else fail unknown_language_exit_2 "rc=$rc stderr=$(cat "$T/err")"; fi

# build NAME LANG [options]: a build that must succeed; skips everything on a network failure.
build() {
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "${BUILD[@]}" "$@" >"$T/$name.out" 2>"$T/$name.err"; local rc=$?
  t1=$(date +%s.%N)
  ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  if [ $rc -ne 0 ] && grep -q "network:" "$T/$name.err"; then
    skip rootfs_build "the Debian mirror is unreachable: $(tail -1 "$T/$name.err")"; exit 0
  fi
  if [ $rc -ne 0 ]; then fail "$name" "rc=$rc: $(tail -3 "$T/$name.err")"; return 1; fi
  pass "$name (${ELAPSED}s: $(grep '^\[done\]' "$T/$name.err"))"
}

build build_python python || exit 0
build build_bash bash || exit 0

layers_of() { python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["layers"]))' "$DIR/$1/rootfs.json"; }
py_layers=$(layers_of python); bash_layers=$(layers_of bash)
py_base=$(echo "$py_layers" | tail -1); bash_base=$(echo "$bash_layers" | tail -1)
py_top=$(echo "$py_layers" | head -1)
if [ "$(echo "$py_layers" | wc -l)" -eq 2 ] && [ "$py_base" = "$bash_base" ] && [ "$py_base" = "$LAYERS/debian-bookworm-base-v1" ] &&
   [ "$py_top" = "$LAYERS/python-v1" ]; then
  pass base_layer_shared
else fail base_layer_shared "python: $py_layers / bash: $bash_layers"; fi

# The python layer is only the difference: none of the base's files (apart from the few apt
# and dpkg rewrite, like var/lib/dpkg/status), so base + layer cost about their sum once.
base_kb=$(du -skx "$py_base" | cut -f1); py_kb=$(du -skx "$py_top" | cut -f1)
overlap=$(python3 - "$py_top" "$py_base" <<'PY'
import os, sys
top, base = sys.argv[1], sys.argv[2]
n = size = 0
for root, dirs, files in os.walk(top):
    for f in files:
        rel = os.path.relpath(os.path.join(root, f), top)
        b = os.path.join(base, rel)
        if os.path.isfile(os.path.join(root, f)) and os.path.lexists(b) and not os.path.isdir(b):
            n += 1
            size += os.lstat(os.path.join(root, f)).st_size
print(n, size // 1024)
PY
)
read -r overlap_files overlap_kb <<<"$overlap"
if [ ! -e "$py_top/usr/bin/dpkg" ] && [ ! -e "$py_top/usr/bin/bash" ] && [ -x "$py_top/usr/bin/python3.11" ] &&
   [ "$overlap_files" -lt 100 ] && [ "$overlap_kb" -lt $(( base_kb / 20 )) ]; then
  pass "python_layer_is_a_diff (layer ${py_kb} KiB on base ${base_kb} KiB; ${overlap_files} files/${overlap_kb} KiB shadow the base)"
else fail python_layer_is_a_diff "layer ${py_kb} KiB, base ${base_kb} KiB, overlap ${overlap_files} files/${overlap_kb} KiB"; fi
bash_kb=$(du -skx "$(echo "$bash_layers" | head -1)" | cut -f1)
[ "$bash_kb" -lt 64 ] && pass "bash_layer_empty (${bash_kb} KiB)" || fail bash_layer_empty "${bash_kb} KiB"

# Sandboxes run on the built rootfs.
echo '{"rootfs": "python"}' >"$T/py.json"
echo '{"rootfs": "bash"}' >"$T/bash.json"
out=$("$C" exec --policy "$T/py.json" -- /usr/bin/python3 -c 'import numpy, pandas, matplotlib, sys; print(sys.version)' 2>"$T/err" </dev/null); rc=$?
[ $rc -eq 0 ] && [[ "$out" == 3.* ]] && pass "python_rootfs_runs_numpy ($out)" || fail python_rootfs_runs_numpy "rc=$rc out=$out err=$(head -c 300 "$T/err")"

probe='cat /etc/os-release; echo; test -f /etc/dpkg/dpkg.cfg.d/90corral-slim && echo built-base-marker;
       test -e /usr/bin/g++ && echo has-gxx; test -e /usr/bin/python3 && echo has-python; id -un'
out=$("$C" exec --policy "$T/py.json" -- /bin/sh -c "$probe" 2>"$T/err" </dev/null); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -qx 'VERSION_CODENAME=bookworm' && echo "$out" | grep -qx built-base-marker &&
   echo "$out" | grep -qx has-python && ! echo "$out" | grep -qx has-gxx && echo "$out" | grep -qx sandbox; then
  host_gxx=$([ -e /usr/bin/g++ ] && echo "the host has /usr/bin/g++" || echo "no g++ on the host either")
  pass "python_sandbox_on_built_rootfs (no g++; $host_gxx)"
else fail python_sandbox_on_built_rootfs "rc=$rc out=$out err=$(head -c 300 "$T/err")"; fi
out=$("$C" exec --policy "$T/bash.json" -- /bin/bash -c "$probe"' ; echo "bash $BASH_VERSION"' 2>"$T/err" </dev/null); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -qx built-base-marker && ! echo "$out" | grep -qx has-python && echo "$out" | grep -q '^bash 5'; then
  pass bash_sandbox_on_built_rootfs
else fail bash_sandbox_on_built_rootfs "rc=$rc out=$out err=$(head -c 300 "$T/err")"; fi

# A second build is a cache hit: fast, and says so.
build build_python_again python || exit 0
if grep -q "cache hit" "$T/build_python_again.err" && awk -v e="$ELAPSED" 'BEGIN { exit !(e < 2) }'; then
  pass "second_build_cache_hit (${ELAPSED}s)"
else fail second_build_cache_hit "${ELAPSED}s: $(cat "$T/build_python_again.err")"; fi

# Builds are serialised: while another holds the lock, a build waits and says so.
(flock "$LAYERS/.build.lock" sleep 2) &
sleep 0.3
build build_bash_waits bash || exit 0
wait
grep -q "^\[lock\].*waiting" "$T/build_bash_waits.err" && awk -v e="$ELAPSED" 'BEGIN { exit !(e >= 1.5) }' &&
  pass "build_waits_for_lock (${ELAPSED}s)" || fail build_waits_for_lock "${ELAPSED}s: $(cat "$T/build_bash_waits.err")"

# --rebuild builds the language layer again, re-registers it, and sandboxes keep working.
built_before=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["built"])' "$LAYERS/python-v1.json")
sleep 1
build build_python_rebuild python --rebuild || exit 0
built_after=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["built"])' "$LAYERS/python-v1.json")
out=$("$C" exec --policy "$T/py.json" -- /usr/bin/python3 -c 'import numpy; print(numpy.__version__)' 2>&1 </dev/null); rc=$?
if ! grep -q "cache hit" "$T/build_python_rebuild.err" && grep -q "^\[python 2/3\]" "$T/build_python_rebuild.err" &&
   [ "$built_before" != "$built_after" ] && [ $rc -eq 0 ]; then
  pass "rebuild (numpy $out)"
else fail rebuild "built $built_before -> $built_after, exec rc=$rc out=$out"; fi

# A failed build (unreachable mirror, in a scratch store) names the step and leaves nothing.
S=$T/store
if ! command -v debootstrap >/dev/null; then skip failed_build_leaves_nothing "debootstrap is not installed"; else
"${BUILD[@]}" bash --rebuild-base --mirror http://127.0.0.1:9/debian --rootfs-dir "$S" >"$T/out" 2>"$T/err"; rc=$?
leftovers=$(find "$S" -mindepth 1 -not -path "$S/layers" -not -name .build.lock 2>/dev/null)
if [ $rc -eq 1 ] && tail -1 "$T/err" | grep -q "base 1/2.*debootstrap.*failed" && [ -z "$leftovers" ]; then
  pass "failed_build_leaves_nothing ($(tail -1 "$T/err" | cut -c1-160))"
else fail failed_build_leaves_nothing "rc=$rc leftovers=[$leftovers] err=$(tail -2 "$T/err")"; fi
fi

ls -a "$LAYERS" | grep -q '^\.tmp-' && fail no_temp_dirs "$(ls -a "$LAYERS")" || pass no_temp_dirs
[ "$(mounts)" = "$mounts_before" ] && pass no_mounts_left || fail no_mounts_left "overlay mounts $mounts_before -> $(mounts)"
