// OCI image import: an image becomes a named rootfs (store.h) that any sandbox can use.
//
// Sources (IMAGE, optionally IMAGE:REF to pick one image when the source holds several):
//   - an OCI image layout directory (oci-layout, index.json, blobs/sha256/...);
//   - a tarball of one (skopeo's oci-archive:);
//   - a `docker save` tarball, old format (manifest.json, <id>/layer.tar, <config>.json) or
//     Docker 25+ (an OCI layout plus manifest.json; the index is used).
// REF matches an index's org.opencontainers.image.ref.name / io.containerd.image.name
// annotation or a docker RepoTag. Indexes are followed to the manifest for this host's
// platform (linux/<arch>); an image for another os/architecture is refused.
//
// The layers (tar, gzip, zstd, xz or bzip2; decoded by libarchive) are applied bottom-up
// into one flattened tree <rootfs_dir>/<name>/layers/0, with whiteouts as the OCI image
// spec says: .wh.NAME removes NAME of the lower layers, .wh..wh..opq hides everything the
// lower layers had in its directory; neither touches what the same layer adds, whatever
// the order of entries. The image config's Env and WorkingDir are recorded in rootfs.json
// (a relative WorkingDir is taken from the root; a missing one is left for the runtime to
// create, as docker does at container start). Entrypoint/Cmd/User are not used.
//
// Integrity: every blob whose digest the source states (OCI descriptors, Docker 25+
// blobs/sha256 paths) is checked (size and sha256) before a byte of it is parsed; an old
// docker-save layer.tar is checked against the config's rootfs.diff_ids. Only sha256 is
// supported.
//
// Safety (images are untrusted; the tree is written by root on the host):
//   - entry paths are relative to the rootfs root: a leading '/' is dropped, and any '..'
//     component is an error;
//   - nothing already on disk is ever followed: each parent directory is opened component
//     by component with O_NOFOLLOW, so an entry (or whiteout, or hardlink target) whose
//     path goes through a symlink — from this layer or an earlier one — is an error, and a
//     final component that exists is replaced, never written through;
//   - symlinks: absolute targets are allowed and mean "from the rootfs root" (that is what
//     they mean inside a sandbox, whose root is this tree). Host code must never follow
//     links inside a layer directory without RESOLVE_IN_ROOT. A relative target that climbs
//     above the root is an error, checked when the entry is written (lexically) and again
//     on the finished tree, following the tree's own links (absolute ones from the root),
//     so chains of individually harmless links cannot escape either; a hardlink to a
//     symlink is checked at its new place;
//   - hardlink targets must be a non-directory already in the tree (same path rules);
//   - character and block devices are errors; FIFOs and sockets are skipped (a FIFO in a
//     read-only lower layer shared by every sandbox would be a channel between them);
//   - setuid/setgid bits are stripped (the tree is owned by root on the host; a setuid-root
//     binary there would be a host hazard, and sandboxes mount nosuid anyway); extended
//     attributes (security.capability included), ACLs and owners are not applied: the
//     tree is owned by the importing user (root; inside a sandbox: nobody, read-only),
//     modes and mtimes are kept; parent directories a layer implies are made 0755.
//
// Atomic: the tree is built in <rootfs_dir>/.import-<name>.XXXXXX and the rootfs is
// registered only when complete; on any error nothing is left behind. A temp dir left by a
// killed import is removed by the next import (it is flock()ed while in use).
#pragma once

#include <functional>
#include <string>

#include "rootfs/store.h"
#include "src/core/status.h"

namespace corral::rootfs {

// Imports `source_path` as rootfs `name`. `progress` (may be empty) receives one line per
// step: the layer being applied (i/n, digest, size) and what it wrote. Fails, with
// nothing created, if a rootfs (or any directory) named `name` already exists.
StatusOr<Rootfs> import_oci(const std::string& source_path, const std::string& name,
                            const std::string& rootfs_dir,
                            const std::function<void(const std::string&)>& progress);

// Removes registered rootfs `name` (its rootfs.json first, so it vanishes at once, then
// its directory, never following links). Refuses "host", unregistered names, and a rootfs
// whose layers another registered rootfs stacks on.
Status remove_rootfs(const std::string& name, const std::string& rootfs_dir);

}  // namespace corral::rootfs
