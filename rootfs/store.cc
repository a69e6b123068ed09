#include "rootfs/store.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "rootfs/host_rootfs.h"
#include "src/core/json_fields.h"

namespace corral::rootfs {
namespace {

bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

StatusOr<Rootfs> read_rootfs_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return SysError("cannot read rootfs description", errno, path);
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return InvalidArgument(path, "rootfs description is not valid JSON");
  Rootfs r;
  std::string created;
  JsonFields f(j, "");
  f.string("name", &r.name);
  f.string("source", &r.source);
  f.string_list("layers", &r.layers);
  f.string_list("env", &r.env);
  f.string("workdir", &r.workdir);
  f.string("created", &created);
  Status s = f.finish();
  if (!s.ok()) return Status(s.code(), s.message() + " (in " + path + ")", s.field());
  if (r.layers.empty()) return InvalidArgument(path + ": layers", "a rootfs needs at least one layer");
  for (const auto& l : r.layers) {
    if (l.empty() || l[0] != '/' || !is_dir(l)) return InvalidArgument(path + ": layers", "missing layer " + l);
  }
  return r;
}

}  // namespace

Status check_rootfs_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '.' || name[0] == '-') {
    return InvalidArgument("rootfs", "a rootfs name is 1-64 of a-z 0-9 . _ - and does not start with . or -");
  }
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')) {
      return InvalidArgument("rootfs", "invalid character in rootfs name '" + name + "'");
    }
  }
  return Status::Ok();
}

StatusOr<Rootfs> resolve_rootfs(const std::string& name, const std::string& rootfs_dir) {
  if (name == "host") {
    auto host = ensure_host_rootfs(rootfs_dir);
    if (!host.ok()) return host.status();
    Rootfs r;
    r.name = "host";
    r.source = "host";
    r.layers = {host->lower_dir};
    r.ro_binds = host->ro_binds;
    return r;
  }
  RETURN_IF_ERROR(check_rootfs_name(name));
  const std::string path = rootfs_dir + "/" + name + "/rootfs.json";
  if (access(path.c_str(), F_OK) != 0) {
    return Status(ErrorCode::kNotFound,
                  "no rootfs named '" + name + "' (see `corral rootfs list`; 'host' is always available)", "rootfs");
  }
  return read_rootfs_json(path);
}

Status register_rootfs(const Rootfs& r, const std::string& rootfs_dir) {
  RETURN_IF_ERROR(check_rootfs_name(r.name));
  if (r.name == "host") return InvalidArgument("rootfs", "'host' is reserved");
  if (r.layers.empty()) return InvalidArgument("layers", "a rootfs needs at least one layer");
  for (const auto& l : r.layers) {
    if (l.empty() || l[0] != '/' || !is_dir(l)) return InvalidArgument("layers", "not an existing absolute directory: " + l);
  }
  const std::string dir = rootfs_dir + "/" + r.name;
  if (mkdir(rootfs_dir.c_str(), 0755) != 0 && errno != EEXIST) return SysError("create rootfs dir", rootfs_dir);
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return SysError("create rootfs dir", dir);
  char created[32];
  time_t now = time(nullptr);
  strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  nlohmann::json j = {{"name", r.name}, {"source", r.source}, {"layers", r.layers},
                      {"env", r.env},   {"workdir", r.workdir}, {"created", created}};
  const std::string tmp = dir + "/.rootfs.json.tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
    if (!out) return SysError("write rootfs description", tmp);
  }
  if (rename(tmp.c_str(), (dir + "/rootfs.json").c_str()) != 0) return SysError("install rootfs description", dir);
  return Status::Ok();
}

std::vector<Rootfs> list_rootfs(const std::string& rootfs_dir) {
  std::vector<Rootfs> out;
  DIR* d = opendir(rootfs_dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (!check_rootfs_name(name).ok() || name == "host") continue;
    auto r = read_rootfs_json(rootfs_dir + "/" + name + "/rootfs.json");
    if (r.ok()) out.push_back(std::move(r).value());
  }
  closedir(d);
  std::sort(out.begin(), out.end(), [](const Rootfs& a, const Rootfs& b) { return a.name < b.name; });
  return out;
}

}  // namespace corral::rootfs
