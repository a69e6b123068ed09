// corral rootfs build LANG: a Debian rootfs for one language (debootstrap base shared by
// every language + a layer with the language's packages), cached and registered as LANG.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "rootfs/debootstrap.h"
#include "src/cli/commands.h"

namespace corral::cli {
namespace {

constexpr char kDefaultRootfsDir[] = "/var/lib/corral/rootfs";

std::string language_list() {
  std::string out;
  for (const std::string& l : rootfs::buildable_languages()) out += (out.empty() ? "" : ", ") + l;
  return out;
}

void print_help() {
  printf(
      "usage: corral rootfs build LANG [--rebuild] [--rebuild-base] [--mirror URL] [--rootfs-dir DIR]\n"
      "\n"
      "Builds a minimal Debian %s rootfs for LANG with debootstrap and apt and registers it as\n"
      "rootfs LANG (use it with {\"rootfs\": \"LANG\"} in a policy). The base layer is shared by\n"
      "every language; each language adds only its packages. Built layers are cached.\n"
      "\n"
      "  LANG              one of: %s\n"
      "  --rebuild         rebuild the language layer even if the cached one is current\n"
      "  --rebuild-base    rebuild the shared base layer too (and then this language)\n"
      "  --mirror URL      Debian mirror (default: the one apt on this host uses)\n"
      "  --rootfs-dir DIR  rootfs store (default %s)\n",
      "bookworm", language_list().c_str(), kDefaultRootfsDir);
}

}  // namespace

int rootfs_build_command(const std::vector<std::string>& args) {
  rootfs::BuildOptions opts;
  std::string lang;
  std::string rootfs_dir = kDefaultRootfsDir;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag, std::string* out) {
      if (a == flag) {
        if (i + 1 >= args.size()) return false;
        *out = args[++i];
        return true;
      }
      *out = a.substr(flag.size() + 1);  // --flag=VALUE
      return true;
    };
    if (a == "-h" || a == "--help") {
      print_help();
      return 0;
    } else if (a == "--rebuild") {
      opts.rebuild = true;
    } else if (a == "--rebuild-base") {
      opts.rebuild_base = true;
    } else if (a == "--mirror" || a.rfind("--mirror=", 0) == 0) {
      if (!value("--mirror", &opts.mirror) || opts.mirror.empty()) return usage_error("--mirror needs a URL");
    } else if (a == "--rootfs-dir" || a.rfind("--rootfs-dir=", 0) == 0) {
      if (!value("--rootfs-dir", &rootfs_dir) || rootfs_dir.empty() || rootfs_dir[0] != '/') {
        return usage_error("--rootfs-dir needs an absolute directory");
      }
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("rootfs build: unrecognised option '" + a + "' (try `corral rootfs build --help`)");
    } else if (lang.empty()) {
      lang = a;
    } else {
      return usage_error("rootfs build: one language at a time (got '" + lang + "' and '" + a + "')");
    }
  }
  if (lang.empty()) return usage_error("rootfs build: which language? one of: " + language_list());
  if (rootfs::language_packages(lang).empty()) {
    return usage_error("rootfs build: unknown language '" + lang + "' (valid: " + language_list() + ")");
  }
  auto r = rootfs::build_language_rootfs(lang, rootfs_dir, opts, [](const std::string& line) {
    fprintf(stderr, "%s\n", line.c_str());
    fflush(stderr);
  });
  if (!r.ok()) {
    const Status& s = r.status();
    fprintf(stderr, "corral: rootfs build %s: %s\n", lang.c_str(), s.to_string().c_str());
    // Bad input or a host that cannot build at all (no debootstrap, not root): 2, as for
    // every usage error; a build step that failed (network, apt): 1.
    switch (s.code()) {
      case ErrorCode::kInvalidArgument:
      case ErrorCode::kNotFound:
      case ErrorCode::kPermissionDenied:
      case ErrorCode::kUnsupported: return kUsageError;
      default: return 1;
    }
  }
  return 0;
}

}  // namespace corral::cli
