#include "rootfs/oci.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_set>

#include "rootfs/layer_tree.h"
#include "seccomp/sha256.h"

namespace corral::rootfs {
namespace {

using nlohmann::json;
using layer::Fd;
using layer::Tree;
using layer::human;
using layer::is_hex64;
using layer::remove_at;
using layer::remove_path;
constexpr size_t kMaxJson = layer::kMaxJson;

// ---------------------------------------------------------------------------------------
// Reading the image: blobs, digests, index / manifest / config.

struct ArchiveFree {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
using Archive = std::unique_ptr<struct archive, ArchiveFree>;

StatusOr<Archive> open_tar(int fd, const std::string& label) {
  Archive a(archive_read_new());
  if (!a) return Internal("libarchive: out of memory");
  archive_read_support_format_tar(a.get());
  archive_read_support_format_empty(a.get());
  archive_read_support_filter_gzip(a.get());
  archive_read_support_filter_zstd(a.get());
  archive_read_support_filter_xz(a.get());
  archive_read_support_filter_bzip2(a.get());
  if (lseek(fd, 0, SEEK_SET) != 0) return SysError("seek", label);
  if (archive_read_open_fd(a.get(), fd, 1 << 16) != ARCHIVE_OK) {
    const char* msg = archive_error_string(a.get());
    return InvalidArgument(label, std::string("not a tar archive: ") + (msg ? msg : "unknown format"));
  }
  return a;
}

// Opens `rel` below `rootfd` with every link resolved inside it (a hostile layout cannot
// point a blob at a host file). Only regular files.
StatusOr<Fd> open_in(int rootfd, const std::string& rel, const std::string& what) {
  struct open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  Fd fd(static_cast<int>(syscall(SYS_openat2, rootfd, rel.c_str(), &how, sizeof how)));
  if (!fd.ok()) {
    const int err = errno;
    if (err == ENOENT) return Status(ErrorCode::kNotFound, what + " '" + rel + "' is missing from the image");
    return SysError("open " + what, err, rel);
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return InvalidArgument(rel, what + " is not a regular file");
  return fd;
}

bool compressed(int fd) {
  unsigned char m[6] = {};
  if (pread(fd, m, sizeof m, 0) < 4) return false;
  return (m[0] == 0x1f && m[1] == 0x8b) || (m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd) ||
         (m[0] == 0xfd && m[1] == '7' && m[2] == 'z' && m[3] == 'X') || (m[0] == 'B' && m[1] == 'Z' && m[2] == 'h');
}

// Size and sha256 of the whole file against what the image says.
Status verify(int fd, const std::string& hex, int64_t size, const std::string& label) {
  struct stat st;
  if (fstat(fd, &st) != 0) return SysError("stat", label);
  if (size >= 0 && st.st_size != size) {
    return InvalidArgument(label, "size mismatch: the image says " + std::to_string(size) + " bytes, the blob has " +
                                      std::to_string(st.st_size));
  }
  if (hex.empty()) return Status::Ok();
  seccomp::Sha256 h;
  std::vector<char> buf(1 << 20);
  off_t off = 0;
  while (true) {
    ssize_t n = pread(fd, buf.data(), buf.size(), off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SysError("read", label);
    if (n == 0) break;
    h.update(buf.data(), static_cast<size_t>(n));
    off += n;
  }
  const std::string got = seccomp::Sha256::hex(h.finish());
  if (got != hex) return InvalidArgument(label, "digest mismatch: the image says sha256:" + hex + ", the blob is sha256:" + got);
  return Status::Ok();
}

StatusOr<json> read_json(int rootfd, const std::string& rel, const std::string& hex, int64_t size,
                         const std::string& what) {
  ASSIGN_OR_RETURN(Fd fd, open_in(rootfd, rel, what));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return SysError("stat", rel);
  if (static_cast<uint64_t>(st.st_size) > kMaxJson) return InvalidArgument(rel, what + " is too large");
  RETURN_IF_ERROR(verify(fd.get(), hex, size, what + " " + rel));
  std::string text(static_cast<size_t>(st.st_size), '\0');
  if (pread(fd.get(), text.data(), text.size(), 0) != st.st_size) return SysError("read", rel);
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return InvalidArgument(rel, what + " is not valid JSON");
  return j;
}

struct Desc {
  std::string media_type, hex;
  int64_t size = -1;
  json platform, annotations;
};

StatusOr<Desc> parse_desc(const json& j, const std::string& where) {
  if (!j.is_object()) return InvalidArgument(where, "must be a descriptor object");
  Desc d;
  if (j.contains("mediaType") && j["mediaType"].is_string()) d.media_type = j["mediaType"];
  if (!j.contains("digest") || !j["digest"].is_string()) return InvalidArgument(where + ".digest", "missing");
  const std::string digest = j["digest"];
  if (!digest.starts_with("sha256:")) return Unsupported("only sha256 digests are supported, got '" + digest + "'", where + ".digest");
  d.hex = digest.substr(7);
  if (!is_hex64(d.hex)) return InvalidArgument(where + ".digest", "malformed digest '" + digest + "'");
  if (j.contains("size")) {
    if (!j["size"].is_number_unsigned()) return InvalidArgument(where + ".size", "must be a non-negative integer");
    d.size = j["size"].get<int64_t>();
  }
  if (j.contains("platform")) d.platform = j["platform"];
  if (j.contains("annotations")) d.annotations = j["annotations"];
  return d;
}

std::string host_arch() {
  struct utsname u;
  if (uname(&u) != 0) return "amd64";
  const std::string m = u.machine;
  if (m == "x86_64") return "amd64";
  if (m == "aarch64") return "arm64";
  if (m == "i386" || m == "i686") return "386";
  if (m.starts_with("arm")) return "arm";
  return m;  // ppc64le, s390x, riscv64 are named alike
}

bool is_index_type(const std::string& t) {
  return t == "application/vnd.oci.image.index.v1+json" ||
         t == "application/vnd.docker.distribution.manifest.list.v2+json";
}
bool is_manifest_type(const std::string& t) {
  return t.empty() || t == "application/vnd.oci.image.manifest.v1+json" ||
         t == "application/vnd.docker.distribution.manifest.v2+json";
}
bool is_layer_type(const std::string& t) {
  return t.empty() || t.starts_with("application/vnd.oci.image.layer.v1.") ||
         t.starts_with("application/vnd.oci.image.layer.nondistributable.v1.") ||
         t.starts_with("application/vnd.docker.image.rootfs.");
}

struct Layer {
  std::string path, hex, label;
  int64_t size = -1;
  bool hex_is_diff_id = false;  // checkable only while the blob is an uncompressed tar
};
struct Image {
  std::string kind;
  std::vector<Layer> layers;
  std::vector<std::string> env;
  std::string workdir;
};

std::string ref_of(const Desc& d) {
  if (!d.annotations.is_object()) return "";
  for (const char* k : {"org.opencontainers.image.ref.name", "io.containerd.image.name"}) {
    if (d.annotations.contains(k) && d.annotations[k].is_string()) return d.annotations[k];
  }
  return "";
}

bool ref_matches(const Desc& d, const std::string& ref) {
  if (!d.annotations.is_object()) return false;
  for (const char* k : {"org.opencontainers.image.ref.name", "io.containerd.image.name"}) {
    if (!d.annotations.contains(k) || !d.annotations[k].is_string()) continue;
    const std::string v = d.annotations[k];
    if (v == ref || v.ends_with(":" + ref)) {
      return true;
    }
  }
  return false;
}

// The manifest of this host's image in `index` (following nested indexes).
StatusOr<Desc> pick_manifest(int rootfd, const json& index, const std::string& where, const std::string& ref,
                             int depth) {
  if (!index.is_object() || !index.contains("manifests") || !index["manifests"].is_array()) {
    return InvalidArgument(where, "has no manifests list");
  }
  const std::string arch = host_arch();
  std::vector<Desc> found;
  std::set<std::string> refs, platforms;
  for (size_t i = 0; i < index["manifests"].size(); ++i) {
    ASSIGN_OR_RETURN(Desc d, parse_desc(index["manifests"][i], where + ": manifests[" + std::to_string(i) + "]"));
    if (!is_manifest_type(d.media_type) && !is_index_type(d.media_type)) continue;
    if (!ref_of(d).empty()) refs.insert(ref_of(d));
    if (depth == 0 && !ref.empty() && !ref_matches(d, ref)) continue;
    if (d.platform.is_object()) {
      const std::string os = d.platform.value("os", ""), a = d.platform.value("architecture", "");
      platforms.insert(os + "/" + a);
      if (os != "linux" || a != arch) continue;
    }
    bool dup = false;
    for (const Desc& f : found) dup = dup || f.hex == d.hex;
    if (!dup) found.push_back(std::move(d));
  }
  auto list = [](const std::set<std::string>& s) {
    std::string o;
    for (const auto& x : s) o += (o.empty() ? "" : ", ") + x;
    return o.empty() ? std::string("none") : o;
  };
  if (found.empty()) {
    if (depth == 0 && !ref.empty()) return Status(ErrorCode::kNotFound, "no image named '" + ref + "' (it has: " + list(refs) + ")", where);
    if (!platforms.empty()) return Unsupported("no image for linux/" + arch + " (it has: " + list(platforms) + ")", where);
    return InvalidArgument(where, "lists no image manifest");
  }
  if (found.size() > 1) {
    return InvalidArgument(where, "holds " + std::to_string(found.size()) + " images (" + list(refs) +
                                      "); pick one with IMAGE:REF");
  }
  if (!is_index_type(found[0].media_type)) return found[0];
  if (depth >= 4) return InvalidArgument(where, "indexes nested too deep");
  const std::string rel = "blobs/sha256/" + found[0].hex;
  ASSIGN_OR_RETURN(json inner, read_json(rootfd, rel, found[0].hex, found[0].size, "index"));
  return pick_manifest(rootfd, inner, rel, ref, depth + 1);
}

// Env and WorkingDir from an image config; refuses another os or architecture.
Status read_config(const json& cfg, const std::string& where, Image* img) {
  if (!cfg.is_object()) return InvalidArgument(where, "image config is not an object");
  const std::string os = cfg.value("os", "linux"), arch = cfg.value("architecture", host_arch());
  if (os != "linux" || arch != host_arch()) {
    return Unsupported("the image is for " + os + "/" + arch + "; this host runs linux/" + host_arch(), where);
  }
  if (!cfg.contains("config") || !cfg["config"].is_object()) return Status::Ok();
  const json& c = cfg["config"];
  if (c.contains("Env") && c["Env"].is_array()) {
    for (const json& e : c["Env"]) {
      if (e.is_string() && e.get<std::string>().find('=') != std::string::npos) img->env.push_back(e);
    }
  }
  if (c.contains("WorkingDir") && c["WorkingDir"].is_string()) {
    img->workdir = c["WorkingDir"];
    if (!img->workdir.empty() && img->workdir[0] != '/') img->workdir = "/" + img->workdir;
  }
  return Status::Ok();
}

StatusOr<Image> read_oci(int rootfd, const std::string& ref) {
  ASSIGN_OR_RETURN(json index, read_json(rootfd, "index.json", "", -1, "index"));
  ASSIGN_OR_RETURN(Desc md, pick_manifest(rootfd, index, "index.json", ref, 0));
  const std::string mrel = "blobs/sha256/" + md.hex;
  ASSIGN_OR_RETURN(json m, read_json(rootfd, mrel, md.hex, md.size, "manifest"));
  if (!m.is_object() || !m.contains("config") || !m.contains("layers") || !m["layers"].is_array()) {
    return InvalidArgument(mrel, "manifest needs config and layers");
  }
  Image img;
  img.kind = "OCI image";
  ASSIGN_OR_RETURN(Desc cd, parse_desc(m["config"], mrel + ": config"));
  ASSIGN_OR_RETURN(json cfg, read_json(rootfd, "blobs/sha256/" + cd.hex, cd.hex, cd.size, "config"));
  RETURN_IF_ERROR(read_config(cfg, "blobs/sha256/" + cd.hex, &img));
  const size_t n = m["layers"].size();
  for (size_t i = 0; i < n; ++i) {
    const std::string where = mrel + ": layers[" + std::to_string(i) + "]";
    ASSIGN_OR_RETURN(Desc d, parse_desc(m["layers"][i], where));
    if (!is_layer_type(d.media_type)) return Unsupported("not a filesystem layer: " + d.media_type, where);
    img.layers.push_back({"blobs/sha256/" + d.hex, d.hex,
                          "layer " + std::to_string(i + 1) + "/" + std::to_string(n) + " sha256:" + d.hex.substr(0, 12),
                          d.size, false});
  }
  return img;
}

// `docker save` without index.json: manifest.json names the config and layer files.
StatusOr<Image> read_docker(int rootfd, const std::string& ref) {
  ASSIGN_OR_RETURN(json list, read_json(rootfd, "manifest.json", "", -1, "manifest"));
  if (!list.is_array() || list.empty()) return InvalidArgument("manifest.json", "must be a non-empty list");
  std::vector<const json*> chosen;
  std::set<std::string> tags;
  for (const json& m : list) {
    bool match = ref.empty();
    if (m.is_object() && m.contains("RepoTags") && m["RepoTags"].is_array()) {
      for (const json& t : m["RepoTags"]) {
        if (!t.is_string()) continue;
        const std::string s = t;
        tags.insert(s);
        match = match || s == ref || s.ends_with(":" + ref);
      }
    }
    if (match) chosen.push_back(&m);
  }
  std::string tag_list;
  for (const auto& t : tags) tag_list += (tag_list.empty() ? "" : ", ") + t;
  if (chosen.empty()) return Status(ErrorCode::kNotFound, "no image tagged '" + ref + "' (it has: " + tag_list + ")", "manifest.json");
  if (chosen.size() > 1) return InvalidArgument("manifest.json", "holds several images (" + tag_list + "); pick one with IMAGE:TAG");
  const json& m = *chosen[0];
  if (!m.is_object() || !m.contains("Config") || !m["Config"].is_string() || !m.contains("Layers") ||
      !m["Layers"].is_array()) {
    return InvalidArgument("manifest.json", "an entry needs Config and Layers");
  }
  const std::string config = m["Config"];
  std::string chex;
  if (config.starts_with("blobs/sha256/") && is_hex64(config.substr(13))) chex = config.substr(13);
  if (config.size() == 69 && config.ends_with(".json") && is_hex64(config.substr(0, 64))) chex = config.substr(0, 64);
  ASSIGN_OR_RETURN(json cfg, read_json(rootfd, config, chex, -1, "config"));
  Image img;
  img.kind = "docker save archive";
  RETURN_IF_ERROR(read_config(cfg, config, &img));
  std::vector<std::string> diff_ids;
  if (cfg.contains("rootfs") && cfg["rootfs"].is_object() && cfg["rootfs"].contains("diff_ids") &&
      cfg["rootfs"]["diff_ids"].is_array()) {
    for (const json& d : cfg["rootfs"]["diff_ids"]) diff_ids.push_back(d.is_string() ? d.get<std::string>() : "");
  }
  const size_t n = m["Layers"].size();
  for (size_t i = 0; i < n; ++i) {
    if (!m["Layers"][i].is_string()) return InvalidArgument("manifest.json: Layers[" + std::to_string(i) + "]", "must be a path");
    Layer l;
    l.path = m["Layers"][i];
    const std::string tail = l.path.starts_with("blobs/sha256/") ? l.path.substr(13) : "";
    if (is_hex64(tail)) {
      l.hex = tail;
    } else if (i < diff_ids.size() && diff_ids[i].starts_with("sha256:") && is_hex64(diff_ids[i].substr(7))) {
      l.hex = diff_ids[i].substr(7);
      l.hex_is_diff_id = true;
    }
    l.label = "layer " + std::to_string(i + 1) + "/" + std::to_string(n) + " " +
              (l.hex.empty() ? l.path : "sha256:" + l.hex.substr(0, 12));
    img.layers.push_back(std::move(l));
  }
  return img;
}

// Removes import temp dirs whose importer died (unlocked and older than a minute).
void remove_stale_imports(const std::string& rootfs_dir) {
  Fd dir(open(rootfs_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* d = dir.ok() ? fdopendir(fcntl(dir.get(), F_DUPFD_CLOEXEC, 3)) : nullptr;
  if (d == nullptr) return;
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    if (strncmp(e->d_name, ".import-", 8) == 0) names.emplace_back(e->d_name);
  }
  closedir(d);
  for (const auto& n : names) {
    Fd t(openat(dir.get(), n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st;
    if (!t.ok() || fstat(t.get(), &st) != 0 || st.st_mtime > time(nullptr) - 60) continue;
    if (flock(t.get(), LOCK_EX | LOCK_NB) == 0) (void)remove_at(dir.get(), n.c_str());
  }
}

}  // namespace

StatusOr<Rootfs> import_oci(const std::string& source_path, const std::string& name, const std::string& rootfs_dir,
                            const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  RETURN_IF_ERROR(check_rootfs_name(name));
  if (name == "host") return InvalidArgument("rootfs", "'host' is reserved");
  if (rootfs_dir.empty() || rootfs_dir[0] != '/') return InvalidArgument("rootfs_dir", "must be an absolute path");

  // IMAGE or IMAGE:REF
  std::string src = source_path, ref;
  struct stat st;
  if (stat(src.c_str(), &st) != 0) {
    const int err = errno;
    const size_t colon = src.rfind(':');
    const size_t slash = src.rfind('/');
    if (colon == std::string::npos || (slash != std::string::npos && colon < slash) ||
        stat(src.substr(0, colon).c_str(), &st) != 0) {
      return SysError("cannot read the image", err, source_path);
    }
    ref = src.substr(colon + 1);
    src.resize(colon);
  }
  if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) return InvalidArgument(src, "not a directory or a tarball");
  char* real = realpath(src.c_str(), nullptr);
  const std::string source = "oci:" + std::string(real ? real : src.c_str()) + (ref.empty() ? "" : ":" + ref);
  free(real);

  for (size_t i = 1; i <= rootfs_dir.size(); ++i) {  // mkdir -p
    if (i < rootfs_dir.size() && rootfs_dir[i] != '/') continue;
    const std::string p = rootfs_dir.substr(0, i);
    if (mkdir(p.c_str(), 0755) != 0 && errno != EEXIST) return SysError("create rootfs dir", p);
  }
  const std::string final_dir = rootfs_dir + "/" + name;
  const std::string exists = "a rootfs named '" + name + "' already exists (`corral rootfs rm " + name + "` first)";
  if (lstat(final_dir.c_str(), &st) == 0) return InvalidArgument("name", exists);
  remove_stale_imports(rootfs_dir);

  std::string tmpl = rootfs_dir + "/.import-" + name + ".XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return SysError("create import dir", rootfs_dir);
  std::string cleanup = tmpl;  // removed on every return that does not register the rootfs
  struct Guard {
    std::string* path;
    ~Guard() {
      if (!path->empty()) (void)remove_path(*path);
    }
  } guard{&cleanup};
  Fd tmp(open(tmpl.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!tmp.ok() || flock(tmp.get(), LOCK_EX) != 0 || fchmod(tmp.get(), 0755) != 0) return SysError("lock import dir", tmpl);

  // The image's files: the directory itself, or a tarball unpacked under the temp dir.
  Fd srcfd;
  if (S_ISDIR(st.st_mode)) {
    srcfd.reset(open(src.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!srcfd.ok()) return SysError("open the image", src);
  } else {
    say("unpacking " + src + " (" + human(static_cast<uint64_t>(st.st_size)) + ")");
    if (mkdirat(tmp.get(), "source", 0700) != 0) return SysError("create staging dir", tmpl);
    srcfd.reset(openat(tmp.get(), "source", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    Fd file(open(src.c_str(), O_RDONLY | O_CLOEXEC));
    if (!srcfd.ok() || !file.ok()) return SysError("open", src);
    ASSIGN_OR_RETURN(Archive a, open_tar(file.get(), src));
    Tree staging(srcfd.get(), false, progress);
    RETURN_IF_ERROR(staging.apply(a.get(), src));
  }
  Image img;
  if (faccessat(srcfd.get(), "index.json", F_OK, 0) == 0) {
    ASSIGN_OR_RETURN(img, read_oci(srcfd.get(), ref));
  } else if (faccessat(srcfd.get(), "manifest.json", F_OK, 0) == 0) {
    ASSIGN_OR_RETURN(img, read_docker(srcfd.get(), ref));
  } else {
    return InvalidArgument(src, "neither an OCI image layout (index.json) nor a docker save archive (manifest.json)");
  }
  if (img.layers.empty()) return InvalidArgument(src, "the image has no layers");
  say("importing " + img.kind + " " + source + " as '" + name + "': " + std::to_string(img.layers.size()) + " layer(s)");

  if (mkdirat(tmp.get(), "layers", 0755) != 0 || mkdirat(tmp.get(), "layers/0", 0700) != 0) {
    return SysError("create layer dir", tmpl);
  }
  Fd rootfd(openat(tmp.get(), "layers/0", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!rootfd.ok()) return SysError("open layer dir", tmpl);
  Tree tree(rootfd.get(), true, progress);
  for (const Layer& l : img.layers) {
    ASSIGN_OR_RETURN(Fd blob, open_in(srcfd.get(), l.path, "layer"));
    struct stat bst;
    if (fstat(blob.get(), &bst) != 0) return SysError("stat", l.path);
    say(l.label + ": " + human(static_cast<uint64_t>(bst.st_size)));
    if (!l.hex_is_diff_id || !compressed(blob.get())) RETURN_IF_ERROR(verify(blob.get(), l.hex, l.size, l.label));
    ASSIGN_OR_RETURN(Archive a, open_tar(blob.get(), l.label));
    const uint64_t e0 = tree.entries, b0 = tree.bytes, s0 = tree.skipped;
    RETURN_IF_ERROR(tree.apply(a.get(), l.label));
    say(l.label + ": " + std::to_string(tree.entries - e0) + " entries, " + human(tree.bytes - b0) + " written" +
        (tree.skipped > s0 ? ", " + std::to_string(tree.skipped - s0) + " skipped (FIFOs, sockets, aufs metadata)" : ""));
  }
  RETURN_IF_ERROR(tree.finish());
  rootfd.reset();
  srcfd.reset();
  if (!S_ISDIR(st.st_mode)) {
    if (int err = remove_at(tmp.get(), "source")) return SysError("remove staging dir", err, tmpl);
  }

  if (renameat2(AT_FDCWD, tmpl.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_NOREPLACE) != 0) {
    if (errno == EEXIST || errno == ENOTEMPTY) return InvalidArgument("name", exists);
    return SysError("install rootfs dir", final_dir);
  }
  cleanup = final_dir;
  Rootfs r;
  r.name = name;
  r.source = source;
  r.layers = {final_dir + "/layers/0"};
  r.env = img.env;
  r.workdir = img.workdir;
  RETURN_IF_ERROR(register_rootfs(r, rootfs_dir));
  cleanup.clear();
  say("registered rootfs '" + name + "': " + std::to_string(tree.entries) + " entries, " + human(tree.bytes));
  return r;
}

Status remove_rootfs(const std::string& name, const std::string& rootfs_dir) {
  RETURN_IF_ERROR(check_rootfs_name(name));
  if (name == "host") return InvalidArgument("rootfs", "'host' is built in and cannot be removed");
  const std::string dir = rootfs_dir + "/" + name;
  auto r = resolve_rootfs(name, rootfs_dir);
  if (!r.ok() && r.status().code() == ErrorCode::kNotFound) return r.status();
  for (const Rootfs& other : list_rootfs(rootfs_dir)) {
    if (other.name == name) continue;
    for (const std::string& l : other.layers) {
      if (l.compare(0, dir.size() + 1, dir + "/") == 0) {
        return InvalidArgument("rootfs", "rootfs '" + other.name + "' is built on '" + name + "'; remove it first");
      }
    }
  }
  const std::string json_path = dir + "/rootfs.json";
  if (unlink(json_path.c_str()) != 0 && errno != ENOENT) return SysError("remove", json_path);
  return remove_path(dir);
}

}  // namespace corral::rootfs
