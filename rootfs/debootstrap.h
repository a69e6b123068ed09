// Built rootfs: a minimal Debian per language, made with debootstrap + apt, stored as two
// stacked layers so every language shares one base:
//
//   <rootfs_dir>/layers/debian-bookworm-base-v1/   debootstrap --variant=minbase, apt caches,
//                                                 lists, docs, man pages and locales removed
//   <rootfs_dir>/layers/<lang>-v1/                 only what `apt-get install PKGS` changed on
//                                                 top of the base: the upper dir of an overlay
//                                                 mounted (in a private mount namespace) over it
//   <rootfs_dir>/layers/<layer>.json               what the layer was built from (base build id,
//                                                 packages, size); a mismatch means rebuild
//   <rootfs_dir>/<lang>/rootfs.json                registered with layers [lang layer, base]
//
// Builds go into temp dirs beside the layers and are renamed into place only when complete,
// under an flock on <rootfs_dir>/layers/.build.lock (held by every build process until its
// last child exits). A failed build registers nothing and removes its temp dirs; temp dirs of
// a build that was killed are removed by the next one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "rootfs/store.h"
#include "src/core/status.h"

namespace corral::rootfs {

struct BuildOptions {
  bool rebuild = false;       // rebuild the language layer even when the cached one is current
  bool rebuild_base = false;  // rebuild the shared base too (implies rebuild)
  std::string mirror;         // Debian mirror; empty: the one apt on this host uses
};

// Languages `build_language_rootfs` knows, sorted.
std::vector<std::string> buildable_languages();

// The Debian packages a language's layer installs (empty for an unknown language).
std::vector<std::string> language_packages(const std::string& lang);

// Builds (or reuses the cached) base and language layers and registers rootfs `lang`.
// `progress` receives one line at a time: step-tagged tool output ("[base 1/2] I: ...",
// "[python 2/3] Unpacking ...") and a closing summary. Needs root. While it runs, SIGINT,
// SIGTERM and SIGHUP are forwarded to the running step, which then fails and is cleaned up.
// Builds in one process run one at a time; across processes an flock serialises them.
StatusOr<Rootfs> build_language_rootfs(const std::string& lang, const std::string& rootfs_dir,
                                       const BuildOptions& opts,
                                       const std::function<void(const std::string&)>& progress);

}  // namespace corral::rootfs
