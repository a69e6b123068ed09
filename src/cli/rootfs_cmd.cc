// corral rootfs import|list|inspect|rm: the named root filesystems sandboxes run on
// ({"rootfs": NAME} in a policy). `corral rootfs build` is rootfs_build_cmd.cc.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "rootfs/oci.h"
#include "rootfs/store.h"
#include "runtime/native_executor.h"
#include "src/cli/commands.h"

namespace corral::cli {
namespace {

constexpr char kHelp[] =
    "usage: corral rootfs COMMAND [--rootfs-dir DIR]\n"
    "\n"
    "  import IMAGE[:REF] [--name NAME]   import an OCI image layout directory, an OCI archive or a\n"
    "                                     `docker save` tarball (REF picks one image of several);\n"
    "                                     NAME defaults to the image file's name\n"
    "  list [--json]                      registered rootfs (name, source, layers, created)\n"
    "  inspect NAME                       one rootfs as JSON\n"
    "  rm NAME                            remove a rootfs\n"
    "  build LANG ...                     build a Debian rootfs for a language (see `build --help`)\n"
    "\n"
    "Use a rootfs with {\"rootfs\": \"NAME\"} in a policy. --rootfs-dir: the store (default %s).\n";

// "--flag VALUE" or "--flag=VALUE" at args[*i]; false if `a` is not this flag.
bool take(const std::vector<std::string>& args, size_t* i, const std::string& flag, std::string* out, bool* missing) {
  const std::string& a = args[*i];
  if (a == flag) {
    if (*i + 1 >= args.size()) {
      *missing = true;
      return true;
    }
    *out = args[++*i];
    return true;
  }
  if (a.compare(0, flag.size() + 1, flag + "=") == 0) {
    *out = a.substr(flag.size() + 1);
    return true;
  }
  return false;
}

// A rootfs name from the image's file name: "/x/Alpine-3.19.tar.gz:edge" -> "alpine-3.19-edge".
std::string default_name(std::string image) {
  while (image.size() > 1 && image.back() == '/') image.pop_back();
  std::string ref;
  struct stat st;
  const size_t colon = image.rfind(':');
  if (stat(image.c_str(), &st) != 0 && colon != std::string::npos &&
      (image.rfind('/') == std::string::npos || colon > image.rfind('/'))) {
    ref = image.substr(colon + 1);
    image.resize(colon);
  }
  std::string base = image.substr(image.rfind('/') == std::string::npos ? 0 : image.rfind('/') + 1);
  for (const char* ext : {".tar.gz", ".tar.zst", ".tgz", ".tar"}) {
    const std::string e = ext;
    if (base.size() > e.size() && base.compare(base.size() - e.size(), e.size(), e) == 0) {
      base.resize(base.size() - e.size());
      break;
    }
  }
  if (!ref.empty()) base += "-" + ref;
  std::string out;
  for (char c : base) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    out += ok ? c : '-';
  }
  while (!out.empty() && (out[0] == '.' || out[0] == '-')) out.erase(0, 1);
  if (out.size() > 64) out.resize(64);
  return out;
}

// Bad input is exit 2 like every usage error; a failure of the host (disk full) is 1.
int failed(const std::string& what, const Status& s) {
  fprintf(stderr, "corral: rootfs %s: %s\n", what.c_str(), s.to_string().c_str());
  const ErrorCode c = s.code();
  return c == ErrorCode::kInvalidArgument || c == ErrorCode::kNotFound || c == ErrorCode::kUnsupported ? kUsageError
                                                                                                          : 1;
}

std::string created_of(const std::string& rootfs_dir, const std::string& name) {
  std::ifstream in(rootfs_dir + "/" + name + "/rootfs.json");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_object() && j.contains("created") && j["created"].is_string()) return j["created"];
  return "";
}

nlohmann::json to_json(const rootfs::Rootfs& r, const std::string& created) {
  nlohmann::json j = {{"name", r.name},       {"source", r.source}, {"layers", r.layers},
                      {"env", r.env},         {"workdir", r.workdir}};
  if (!r.ro_binds.empty()) j["ro_binds"] = r.ro_binds;
  if (!created.empty()) j["created"] = created;
  return j;
}

int import_cmd(const std::vector<std::string>& pos, const std::string& name_flag, const std::string& dir) {
  if (pos.size() != 1) return usage_error("rootfs import: give exactly one IMAGE (usage: corral rootfs import IMAGE [--name NAME])");
  std::string name = name_flag.empty() ? default_name(pos[0]) : name_flag;
  if (name_flag.empty() && !rootfs::check_rootfs_name(name).ok()) {
    return usage_error("rootfs import: cannot make a rootfs name from '" + pos[0] + "'; give --name NAME");
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto r = rootfs::import_oci(pos[0], name, dir, [](const std::string& line) {
    fprintf(stderr, "corral: %s\n", line.c_str());
  });
  if (!r.ok()) return failed("import", r.status());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fprintf(stderr, "corral: imported '%s' in %.1f s; use it with {\"rootfs\": \"%s\"}\n", name.c_str(), secs,
          name.c_str());
  printf("%s\n", name.c_str());
  return 0;
}

int list_cmd(bool as_json, const std::string& dir) {
  std::vector<rootfs::Rootfs> all = rootfs::list_rootfs(dir);
  if (as_json) {
    nlohmann::json out = nlohmann::json::array();
    out.push_back({{"name", "host"}, {"source", "host"}});
    for (const auto& r : all) out.push_back(to_json(r, created_of(dir, r.name)));
    printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {{"NAME", "SOURCE", "LAYERS", "CREATED"}, {"host", "host", "-", "-"}};
  for (const auto& r : all) {
    const std::string created = created_of(dir, r.name);
    rows.push_back({r.name, r.source, std::to_string(r.layers.size()), created.empty() ? "-" : created});
  }
  size_t w[3] = {0, 0, 0};
  for (const auto& row : rows) {
    for (size_t c = 0; c < 3; ++c) w[c] = std::max(w[c], row[c].size());
  }
  for (const auto& row : rows) {
    printf("%-*s  %-*s  %-*s  %s\n", static_cast<int>(w[0]), row[0].c_str(), static_cast<int>(w[1]), row[1].c_str(),
           static_cast<int>(w[2]), row[2].c_str(), row[3].c_str());
  }
  return 0;
}

}  // namespace

int rootfs_command(const std::vector<std::string>& args) {
  if (args.empty()) return usage_error("rootfs: give a command: import, list, inspect, rm or build (see `corral rootfs --help`)");
  const std::string& sub = args[0];
  if (sub == "build") return rootfs_build_command(std::vector<std::string>(args.begin() + 1, args.end()));
  std::string dir = runtime::NativeOptions{}.rootfs_dir;
  if (sub == "-h" || sub == "--help" || sub == "help") {
    printf(kHelp, dir.c_str());
    return 0;
  }
  if (sub != "import" && sub != "list" && sub != "inspect" && sub != "rm") {
    return usage_error("rootfs: unknown command '" + sub + "' (import, list, inspect, rm or build)");
  }
  std::vector<std::string> pos;
  std::string name;
  bool as_json = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool missing = false;
    if (a == "-h" || a == "--help") {
      printf(kHelp, dir.c_str());
      return 0;
    }
    if (take(args, &i, "--rootfs-dir", &dir, &missing) || (sub == "import" && take(args, &i, "--name", &name, &missing))) {
      if (missing) return usage_error("rootfs " + sub + ": " + a + " needs a value");
      continue;
    }
    if (sub == "list" && a == "--json") {
      as_json = true;
      continue;
    }
    if (a.size() > 1 && a[0] == '-') return usage_error("rootfs " + sub + ": unknown option '" + a + "'");
    pos.push_back(a);
  }
  if (dir.empty() || dir[0] != '/') return usage_error("rootfs " + sub + ": --rootfs-dir must be an absolute path");
  if (sub == "import") return import_cmd(pos, name, dir);
  if (sub == "list") {
    if (!pos.empty()) return usage_error("rootfs list: unexpected argument '" + pos[0] + "'");
    return list_cmd(as_json, dir);
  }
  if (pos.size() != 1) return usage_error("rootfs " + sub + ": give exactly one NAME");
  if (sub == "inspect") {
    auto r = rootfs::resolve_rootfs(pos[0], dir);
    if (!r.ok()) return failed("inspect", r.status());
    printf("%s\n", to_json(*r, pos[0] == "host" ? "" : created_of(dir, pos[0])).dump(2).c_str());
    return 0;
  }
  Status s = rootfs::remove_rootfs(pos[0], dir);
  if (!s.ok()) return failed("rm", s);
  fprintf(stderr, "corral: removed rootfs '%s'\n", pos[0].c_str());
  return 0;
}

}  // namespace corral::cli
