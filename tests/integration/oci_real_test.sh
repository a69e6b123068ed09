#!/usr/bin/env bash
# `corral rootfs import` on images made by real tools, then used by real sandboxes:
#   umoci   builds an OCI layout (two layers; the second deletes a file and replaces a
#           directory, so it carries whiteouts) with Env and WorkingDir in its config;
#   skopeo  converts it to a docker-save tarball (docker-archive:) and an OCI archive;
#   docker  `docker import` + `docker save` (Docker's own format), when a daemon can run.
# Each image is imported and `corral exec` runs busybox in it to check files, whiteouts,
# env and cwd. Prints PASS/FAIL/SKIP lines; run as root: tests/integration/oci_real_test.sh
# build/src/cli/corral
set -u
C=$(readlink -f "${1:?usage: oci_real_test.sh path/to/corral}")
T=$(mktemp -d /tmp/corral-oci-real.XXXXXX)
P=corral-test-oci-$$   # rootfs name prefix: every rootfs this test makes is removed at exit
DOCKERD_PID=
DOCKER_SOCK=/run/corral-test-docker.sock

cleanup() {
  local n
  for n in $(ls /var/lib/corral/rootfs 2>/dev/null | grep -E "^$P-"); do "$C" rootfs rm "$n" >/dev/null 2>&1; done
  if [ -n "$DOCKERD_PID" ]; then
    kill "$DOCKERD_PID" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$DOCKERD_PID" 2>/dev/null
    rm -f "$DOCKER_SOCK"
  fi
  umount -R "$T/docker" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "SKIP $1: $2"; }

if [ "$(id -u)" -ne 0 ]; then skip oci_real "needs root (sandboxes and umoci unpack)"; exit 0; fi
BUSYBOX=$(command -v busybox || true)
if [ -z "$BUSYBOX" ] || ldd "$BUSYBOX" >/dev/null 2>&1; then
  skip oci_real "needs a static busybox (Debian: busybox-static)"; exit 0
fi

# import NAME SOURCE: prints the seconds the import took.
import() {
  local name=$1 src=$2 t0 t1
  t0=$(date +%s.%N)
  "$C" rootfs import "$src" --name "$name" >"$T/import.out" 2>"$T/import.err" || return 1
  t1=$(date +%s.%N)
  [ "$(cat "$T/import.out")" = "$name" ] || return 1
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f s", b - a }'
}

# probe NAME: runs the check script in a sandbox on rootfs NAME; output in $T/probe.out.
probe() {
  printf '{"rootfs": "%s"}\n' "$1" >"$T/policy.json"
  "$C" exec --policy "$T/policy.json" -- /bin/busybox sh -c '
    B=/bin/busybox
    echo "greeting=$($B cat /etc/greeting)"
    echo "deleted=$($B test -e /etc/deleted && echo present || echo absent)"
    echo "sub=$($B ls /data/sub | $B tr "\n" " ")"
    echo "foo=$FOO"
    echo "spaced=$GREETING"
    echo "cwd=$(pwd)"
    echo "uid=$($B id -u)"
    echo "sh=$(/bin/sh -c "echo via-symlink")"
    echo "ro=$( (echo x >/etc/greeting) 2>/dev/null && echo writable || echo read-only)"
  ' >"$T/probe.out" 2>"$T/probe.err" </dev/null
}

# expect_probe TEST NAME KEY=VALUE...: every line given must be in the probe's output.
expect_probe() {
  local test=$1 name=$2; shift 2
  if ! probe "$name"; then fail "$test" "exec failed: $(head -c 300 "$T/probe.err")"; return; fi
  local want
  for want in "$@"; do
    if ! grep -qxF "$want" "$T/probe.out"; then
      fail "$test" "want '$want', got: $(tr '\n' ';' <"$T/probe.out")"; return
    fi
  done
  pass "$test"
}

STANDARD=("greeting=v2" "deleted=absent" "sub=b " "foo=bar" "spaced=hello world" "cwd=/work"
          "uid=1000" "sh=via-symlink" "ro=read-only")

# ---- (a) umoci: an OCI layout with a whiteout-carrying second layer --------------------
if ! command -v umoci >/dev/null; then
  skip umoci "umoci is not installed (apt-get install umoci)"
else
  L=$T/layout
  if ! {
    umoci init --layout "$L" &&
    umoci new --image "$L:base" &&
    umoci unpack --image "$L:base" "$T/b1" >/dev/null &&
    mkdir -p "$T/b1/rootfs/bin" "$T/b1/rootfs/etc" "$T/b1/rootfs/data/sub" &&
    cp "$BUSYBOX" "$T/b1/rootfs/bin/busybox" && ln -s busybox "$T/b1/rootfs/bin/sh" &&
    echo v1 >"$T/b1/rootfs/etc/greeting" && echo old >"$T/b1/rootfs/etc/deleted" &&
    echo a >"$T/b1/rootfs/data/sub/a" &&
    umoci repack --image "$L:l1" "$T/b1" &&
    umoci config --image "$L:l1" --tag l1 --config.env FOO=bar --config.env "GREETING=hello world" \
      --config.workingdir /work &&
    umoci unpack --image "$L:l1" "$T/b2" >/dev/null &&
    rm "$T/b2/rootfs/etc/deleted" && rm -rf "$T/b2/rootfs/data/sub" && mkdir "$T/b2/rootfs/data/sub" &&
    echo b >"$T/b2/rootfs/data/sub/b" && echo v2 >"$T/b2/rootfs/etc/greeting" &&
    umoci repack --image "$L:l2" "$T/b2"
  } >"$T/umoci.log" 2>&1; then
    fail umoci_build "umoci failed: $(tail -3 "$T/umoci.log")"
  else
    # The top layer must really carry whiteouts, or the test proves nothing about them.
    top=$(python3 -c '
import json, sys
L = sys.argv[1]
idx = json.load(open(L + "/index.json"))
m = [d for d in idx["manifests"] if d.get("annotations", {}).get("org.opencontainers.image.ref.name") == "l2"][0]
man = json.load(open(L + "/blobs/sha256/" + m["digest"][7:]))
print(L + "/blobs/sha256/" + man["layers"][-1]["digest"][7:])' "$L")
    if tar tzf "$top" | grep -q '\.wh\.'; then pass umoci_layer_has_whiteouts
    else fail umoci_layer_has_whiteouts "no .wh. entry in $(tar tzf "$top" | tr '\n' ' ')"; fi

    if secs=$(import "$P-umoci" "$L:l2"); then
      pass "umoci_import ($secs)"
      expect_probe umoci_sandbox "$P-umoci" "${STANDARD[@]}"
    else
      fail umoci_import "$(tail -2 "$T/import.err")"
    fi

    # Several tags and no REF: refused in one line naming the tags.
    "$C" rootfs import "$L" --name "$P-noref" >/dev/null 2>"$T/err"; rc=$?
    if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "l1, l2" "$T/err"; then pass layout_needs_ref
    else fail layout_needs_ref "exit $rc: $(cat "$T/err")"; fi

    # A corrupted layer blob is caught by its digest and nothing is registered.
    cp -a "$L" "$T/corrupt"
    blob="$T/corrupt/blobs/sha256/$(basename "$top")"
    # Flip every bit of byte 100 (writing a fixed value would leave the blob intact
    # whenever that byte already had it).
    b=$(od -An -tu1 -j100 -N1 "$blob" | tr -d ' ')
    printf "\\$(printf '%03o' $((255 - b)))" | dd of="$blob" bs=1 seek=100 conv=notrunc status=none
    "$C" rootfs import "$T/corrupt:l2" --name "$P-corrupt" >/dev/null 2>"$T/err"; rc=$?
    if [ $rc -eq 2 ] && grep -q "digest mismatch" "$T/err" && ! "$C" rootfs inspect "$P-corrupt" >/dev/null 2>&1 &&
       ! ls -a /var/lib/corral/rootfs | grep -q -- "$P-corrupt"; then
      pass corrupt_blob_rejected
    else
      fail corrupt_blob_rejected "exit $rc: $(tail -1 "$T/err")"
    fi

    # ---- skopeo: the same image as docker-archive (docker save format) and oci-archive --
    if ! command -v skopeo >/dev/null; then
      skip skopeo "skopeo is not installed (apt-get install skopeo)"
    elif ! skopeo copy -q "oci:$L:l2" "docker-archive:$T/save.tar:corral/test:l2" >"$T/skopeo.log" 2>&1 ||
         ! skopeo copy -q "oci:$L:l2" "oci-archive:$T/oci.tar:l2" >>"$T/skopeo.log" 2>&1; then
      fail skopeo_convert "$(tail -3 "$T/skopeo.log")"
    else
      if tar tf "$T/save.tar" | grep -qx manifest.json; then
        if secs=$(import "$P-dockerarchive" "$T/save.tar"); then
          pass "skopeo_docker_archive_import ($secs)"
          expect_probe skopeo_docker_archive_sandbox "$P-dockerarchive" "${STANDARD[@]}"
        else
          fail skopeo_docker_archive_import "$(tail -2 "$T/import.err")"
        fi
      else
        fail skopeo_docker_archive "no manifest.json in $T/save.tar"
      fi
      if secs=$(import "$P-ociarchive" "$T/oci.tar"); then
        pass "skopeo_oci_archive_import ($secs)"
        expect_probe skopeo_oci_archive_sandbox "$P-ociarchive" "${STANDARD[@]}"
      else
        fail skopeo_oci_archive_import "$(tail -2 "$T/import.err")"
      fi
    fi

    # list shows it; rm removes it; host cannot be removed.
    if "$C" rootfs list | grep -q "^$P-umoci .*oci:$L:l2 *1 "; then pass rootfs_list
    else fail rootfs_list "$("$C" rootfs list)"; fi
    if "$C" rootfs rm "$P-umoci" 2>/dev/null && ! "$C" rootfs inspect "$P-umoci" >/dev/null 2>&1 &&
       [ ! -e "/var/lib/corral/rootfs/$P-umoci" ]; then pass rootfs_rm
    else fail rootfs_rm "still there"; fi
    "$C" rootfs rm host >/dev/null 2>&1; rc=$?
    [ $rc -eq 2 ] && pass rootfs_rm_host_refused || fail rootfs_rm_host_refused "exit $rc"

    # A WorkingDir the image itself has (root-owned, like every Dockerfile WORKDIR) is the
    # sandbox's cwd.
    if umoci config --image "$L:l2" --tag l3 --config.workingdir /data >>"$T/umoci.log" 2>&1 &&
       secs=$(import "$P-workdir" "$L:l3"); then
      expect_probe image_workdir_exists "$P-workdir" "cwd=/data" "greeting=v2"
    else
      fail image_workdir_exists "umoci config or import failed: $(tail -2 "$T/import.err")"
    fi
  fi
fi

# ---- (b) Docker: docker import + docker save, with a daemon of our own if none runs -----
if ! command -v docker >/dev/null; then
  skip docker "no docker CLI"
else
  if ! docker info >/dev/null 2>&1; then
    if ! command -v dockerd >/dev/null; then
      skip docker "no docker daemon running and no dockerd to start (the docker CLI alone cannot save images)"
      exit 0
    fi
    mkdir -p "$T/docker"
    dockerd --host="unix://$DOCKER_SOCK" --data-root="$T/docker/data" --exec-root="$T/docker/exec" \
      --pidfile="$T/docker/dockerd.pid" --bridge=none --iptables=false --ip6tables=false \
      >"$T/dockerd.log" 2>&1 &
    DOCKERD_PID=$!
    export DOCKER_HOST="unix://$DOCKER_SOCK"
    for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.5; done
    if ! docker info >/dev/null 2>&1; then
      skip docker "dockerd did not start here: $(grep -iE 'error|fatal|fail' "$T/dockerd.log" | tail -1 | cut -c1-200)"
      exit 0
    fi
  fi
  R=$T/drootfs
  mkdir -p "$R/bin" "$R/etc" "$R/data/sub"
  cp "$BUSYBOX" "$R/bin/busybox" && ln -s busybox "$R/bin/sh"
  echo v2 >"$R/etc/greeting"; echo b >"$R/data/sub/b"
  TAG=corral-test/oci-real:$$
  if ! tar -C "$R" -c . | docker import -c 'ENV FOO=bar' -c 'ENV GREETING="hello world"' -c 'WORKDIR /work' - "$TAG" \
       >"$T/docker.log" 2>&1 || ! docker save -o "$T/docker-save.tar" "$TAG" >>"$T/docker.log" 2>&1; then
    fail docker_save "$(tail -3 "$T/docker.log")"
  else
    docker rmi "$TAG" >/dev/null 2>&1
    if secs=$(import "$P-docker" "$T/docker-save.tar"); then
      pass "docker_save_import ($secs)"
      expect_probe docker_save_sandbox "$P-docker" "greeting=v2" "deleted=absent" "sub=b " "foo=bar" \
        "spaced=hello world" "cwd=/work" "uid=1000" "sh=via-symlink"
    else
      fail docker_save_import "$(tail -2 "$T/import.err")"
    fi
  fi
fi
