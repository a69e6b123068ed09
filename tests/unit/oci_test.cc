// OCI image import (rootfs/oci.h) on synthetic images written here with libarchive: OCI
// layouts, OCI archives and both `docker save` formats. Covers layer order, whiteouts and
// opaque directories, digests, and every escape an image could try (.., absolute paths,
// symlinks, hardlinks, devices). Needs no root.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <clocale>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "rootfs/oci.h"
#include "rootfs/store.h"
#include "seccomp/sha256.h"

namespace corral::rootfs {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// One tar entry. type: f file, d dir, l symlink, h hardlink, c/b char/block device, p FIFO.
struct E {
  char type;
  std::string path;
  std::string data;  // file content, or the link target
  mode_t mode = 0;   // 0: 0644 for files, 0755 for directories
};

la_ssize_t append_cb(struct archive*, void* out, const void* buf, size_t n) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

// A tar (pax) of `es`, optionally through "gzip" or "zstd".
std::string tar(const std::vector<E>& es, const std::string& filter = "") {
  std::string out;
  struct archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (filter == "gzip") archive_write_add_filter_gzip(a);
  if (filter == "zstd") archive_write_add_filter_zstd(a);
  archive_write_set_bytes_in_last_block(a, 1);
  EXPECT_EQ(archive_write_open(a, &out, nullptr, append_cb, nullptr), ARCHIVE_OK) << archive_error_string(a);
  for (const E& e : es) {
    struct archive_entry* en = archive_entry_new();
    archive_entry_set_pathname(en, e.path.c_str());
    archive_entry_set_mtime(en, 1700000000, 0);
    archive_entry_set_uid(en, 0);
    archive_entry_set_gid(en, 0);
    switch (e.type) {
      case 'f':
        archive_entry_set_filetype(en, AE_IFREG);
        archive_entry_set_perm(en, e.mode ? e.mode : 0644);
        archive_entry_set_size(en, static_cast<la_int64_t>(e.data.size()));
        break;
      case 'd':
        archive_entry_set_filetype(en, AE_IFDIR);
        archive_entry_set_perm(en, e.mode ? e.mode : 0755);
        break;
      case 'l':
        archive_entry_set_filetype(en, AE_IFLNK);
        archive_entry_set_perm(en, 0777);
        archive_entry_set_symlink(en, e.data.c_str());
        break;
      case 'h':
        archive_entry_set_filetype(en, AE_IFREG);
        archive_entry_set_perm(en, 0644);
        archive_entry_set_hardlink(en, e.data.c_str());
        archive_entry_set_size(en, 0);
        break;
      case 'c':
      case 'b':
        archive_entry_set_filetype(en, e.type == 'c' ? AE_IFCHR : AE_IFBLK);
        archive_entry_set_perm(en, 0666);
        archive_entry_set_rdevmajor(en, 1);
        archive_entry_set_rdevminor(en, 3);
        break;
      case 'p':
        archive_entry_set_filetype(en, AE_IFIFO);
        archive_entry_set_perm(en, 0644);
        break;
    }
    EXPECT_EQ(archive_write_header(a, en), ARCHIVE_OK) << e.path << ": " << archive_error_string(a);
    if (e.type == 'f' && !e.data.empty()) archive_write_data(a, e.data.data(), e.data.size());
    archive_entry_free(en);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

std::string sha(const std::string& bytes) {
  seccomp::Sha256 h;
  h.update(bytes);
  return seccomp::Sha256::hex(h.finish());
}

std::string host_arch() {
  struct utsname u;
  uname(&u);
  const std::string m = u.machine;
  if (m == "x86_64") return "amd64";
  if (m == "aarch64") return "arm64";
  return m;
}

void write_file(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool exists(const std::string& p) {
  struct stat st;
  return lstat(p.c_str(), &st) == 0;
}

struct Layer {
  std::string bytes;
  std::string media_type = "application/vnd.oci.image.layer.v1.tar";
};

json default_config(const std::vector<Layer>& layers) {
  json diff_ids = json::array();
  for (const auto& l : layers) diff_ids.push_back("sha256:" + sha(l.bytes));  // right for uncompressed ones
  return {{"architecture", host_arch()},
          {"os", "linux"},
          {"config", {{"Env", {"PATH=/usr/bin:/bin", "GREETING=hello world"}}, {"WorkingDir", "/app"}}},
          {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}};
}

// Writes blobs under `dir`/blobs/sha256; returns the descriptor.
json put_blob(const std::string& dir, const std::string& bytes, const std::string& media_type) {
  const std::string hex = sha(bytes);
  write_file(dir + "/blobs/sha256/" + hex, bytes);
  return {{"mediaType", media_type}, {"digest", "sha256:" + hex}, {"size", bytes.size()}};
}

// An image manifest (and its config and layers) in layout `dir`; returns its descriptor.
json put_image(const std::string& dir, const std::vector<Layer>& layers, const json& config) {
  json m = {{"schemaVersion", 2},
            {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
            {"config", put_blob(dir, config.dump(), "application/vnd.oci.image.config.v1+json")},
            {"layers", json::array()}};
  for (const auto& l : layers) m["layers"].push_back(put_blob(dir, l.bytes, l.media_type));
  return put_blob(dir, m.dump(), "application/vnd.oci.image.manifest.v1+json");
}

void put_index(const std::string& dir, const json& manifests) {
  write_file(dir + "/oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
  write_file(dir + "/index.json", json({{"schemaVersion", 2}, {"manifests", manifests}}).dump());
}

// Every file below `dir` as tar entries (relative paths), links kept as links.
std::vector<E> entries_of(const std::string& dir) {
  std::vector<E> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string rel = it->path().lexically_relative(dir).string();
    if (it->is_symlink()) out.push_back({'l', rel, fs::read_symlink(it->path()).string()});
    else if (it->is_directory()) out.push_back({'d', rel, ""});
    else out.push_back({'f', rel, read_file(it->path().string())});
  }
  return out;
}

class OciImport : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/corral-oci-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    t_ = tmpl;
    store_ = t_ + "/var/store";  // parents missing: import creates them
  }
  void TearDown() override {
    if (std::getenv("CORRAL_KEEP_TEST_DIR")) return;
    std::string cmd = "chmod -R u+rwx '" + t_ + "' 2>/dev/null; rm -rf '" + t_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }

  // An OCI layout with one image of `layers`; returns its path.
  std::string layout(const std::vector<Layer>& layers, const json& config = nullptr) {
    const std::string dir = t_ + "/img" + std::to_string(++n_);
    json d = put_image(dir, layers, config.is_null() ? default_config(layers) : config);
    put_index(dir, json::array({d}));
    return dir;
  }
  StatusOr<Rootfs> import(const std::string& source, const std::string& name = "img") {
    lines_.clear();
    return import_oci(source, name, store_, [this](const std::string& l) { lines_.push_back(l); });
  }
  StatusOr<Rootfs> import_layers(const std::vector<std::vector<E>>& layers, const std::string& name = "img") {
    std::vector<Layer> ls;
    for (const auto& l : layers) ls.push_back({tar(l)});
    return import(layout(ls), name);
  }
  std::string root(const std::string& name = "img") const { return store_ + "/" + name + "/layers/0"; }
  std::vector<std::string> store_entries() const {
    std::vector<std::string> out;
    if (!fs::exists(store_)) return out;
    for (const auto& e : fs::directory_iterator(store_)) out.push_back(e.path().filename().string());
    return out;
  }
  // The import failed, its message has every one of `parts`, and nothing was left behind.
  void expect_rejected(const StatusOr<Rootfs>& r, const std::vector<std::string>& parts) {
    ASSERT_FALSE(r.ok()) << "import succeeded";
    const std::string msg = r.status().to_string();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
    for (const auto& e : store_entries()) {  // only complete rootfs registered before
      EXPECT_TRUE(exists(store_ + "/" + e + "/rootfs.json")) << "left behind: " << e;
    }
  }

  std::string t_, store_;
  int n_ = 0;
  std::vector<std::string> lines_;
};

TEST_F(OciImport, LayersAppliedInOrderAndFilesReplaced) {
  auto r = import_layers({{{'d', "etc", ""}, {'f', "etc/a", "one"}, {'f', "etc/b", "bee"}, {'f', "bin/tool", "v1", 0755}},
                          {{'f', "etc/a", "two"}, {'f', "etc/c", "sea"}, {'f', "bin/tool", "v2", 0700}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(root() + "/etc/a"), "two");
  EXPECT_EQ(read_file(root() + "/etc/b"), "bee");
  EXPECT_EQ(read_file(root() + "/etc/c"), "sea");
  EXPECT_EQ(read_file(root() + "/bin/tool"), "v2");
  struct stat st;
  ASSERT_EQ(stat((root() + "/bin/tool").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_mtime, 1700000000);
  ASSERT_EQ(r->layers.size(), 1u);
  EXPECT_EQ(r->layers[0], root());
  EXPECT_NE(r->source.find("oci:" + t_ + "/img1"), std::string::npos) << r->source;
  // Progress names each layer as i/n.
  std::string all;
  for (const auto& l : lines_) all += l + "\n";
  EXPECT_NE(all.find("layer 1/2 sha256:"), std::string::npos) << all;
  EXPECT_NE(all.find("layer 2/2 sha256:"), std::string::npos) << all;
}

TEST_F(OciImport, TypeChangesReplaceTheLowerEntry) {
  auto r = import_layers({{{'d', "x", ""}, {'f', "x/inner", "1"}, {'f', "y", "file"}, {'l', "z", "y"}},
                          {{'f', "x", "now a file"}, {'d', "y", ""}, {'f', "y/inner", "2"}, {'d', "z", ""}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(root() + "/x"), "now a file");
  EXPECT_EQ(read_file(root() + "/y/inner"), "2");
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(root() + "/z")));
}

TEST_F(OciImport, WhiteoutDeletesLowerFile) {
  auto r = import_layers({{{'f', "etc/gone", "x"}, {'f', "etc/kept", "y"}}, {{'f', "etc/.wh.gone", ""}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_FALSE(exists(root() + "/etc/gone"));
  EXPECT_FALSE(exists(root() + "/etc/.wh.gone"));
  EXPECT_EQ(read_file(root() + "/etc/kept"), "y");
}

TEST_F(OciImport, WhiteoutOfDirectoryRemovesItsTree) {
  auto r = import_layers({{{'d', "d/x", ""}, {'f', "d/x/y", "1"}, {'d', "d/x/z", ""}, {'f', "d/x/z/w", "2"}, {'f', "d/other", "o"}},
                          {{'f', "d/.wh.x", ""}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_FALSE(exists(root() + "/d/x"));
  EXPECT_EQ(read_file(root() + "/d/other"), "o");
}

TEST_F(OciImport, WhiteoutNeverRemovesTheSameLayersEntry) {
  // Spec: a whiteout applies only to lower layers, whatever the order inside the layer.
  auto r = import_layers({{{'f', "f", "old"}, {'f', "g", "old"}},
                          {{'f', "f", "new"}, {'f', ".wh.f", ""}, {'f', ".wh.g", ""}, {'f', "g", "new"}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(root() + "/f"), "new");
  EXPECT_EQ(read_file(root() + "/g"), "new");
}

TEST_F(OciImport, OpaqueDirectoryHidesLowerContentButKeepsSameLayer) {
  auto r = import_layers({{{'f', "d/old1", "1"}, {'f', "d/sub/old2", "2"}, {'f', "d/sub2/old3", "3"}, {'f', "e/untouched", "u"}},
                          {{'f', "d/new1", "a"}, {'f', "d/.wh..wh..opq", ""}, {'f', "d/new2", "b"}, {'f', "d/sub/new3", "c"}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(root() + "/d/new1"), "a");  // before the marker
  EXPECT_EQ(read_file(root() + "/d/new2"), "b");  // after it
  EXPECT_EQ(read_file(root() + "/d/sub/new3"), "c");
  EXPECT_FALSE(exists(root() + "/d/old1"));
  EXPECT_FALSE(exists(root() + "/d/sub/old2"));  // sub is this layer's now: lower content hidden
  EXPECT_FALSE(exists(root() + "/d/sub2"));
  EXPECT_FALSE(exists(root() + "/d/.wh..wh..opq"));
  EXPECT_EQ(read_file(root() + "/e/untouched"), "u");
}

TEST_F(OciImport, OpaqueMarkerAtTheRootHidesEverythingBelow) {
  auto r = import_layers({{{'f', "a", "1"}, {'f', "b/c", "2"}}, {{'f', ".wh..wh..opq", ""}, {'f', "n", "3"}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_FALSE(exists(root() + "/a"));
  EXPECT_FALSE(exists(root() + "/b"));
  EXPECT_EQ(read_file(root() + "/n"), "3");
}

TEST_F(OciImport, DigestMismatchRejected) {
  std::vector<Layer> ls = {{tar({{'f', "a", "1"}})}, {tar({{'f', "b", "secret payload"}})}};
  const std::string dir = layout(ls);
  // Same size, one byte different: only the digest can tell.
  const std::string blob = dir + "/blobs/sha256/" + sha(ls[1].bytes);
  std::string bytes = read_file(blob);
  bytes[600] ^= 1;
  write_file(blob, bytes);
  expect_rejected(import(dir), {"layer 2/2 sha256:" + sha(ls[1].bytes).substr(0, 12), "digest mismatch"});
}

TEST_F(OciImport, SizeMismatchRejected) {
  std::vector<Layer> ls = {{tar({{'f', "a", "1"}})}};
  const std::string dir = layout(ls);
  write_file(dir + "/blobs/sha256/" + sha(ls[0].bytes), ls[0].bytes + std::string(512, '\0'));
  expect_rejected(import(dir), {"layer 1/1", "size mismatch"});
}

TEST_F(OciImport, DotDotTraversalRejected) {
  expect_rejected(import_layers({{{'f', "ok", "1"}, {'f', "../escape", "x"}}}), {"layer 1/1", "'../escape'", "'..'"});
  EXPECT_FALSE(exists(t_ + "/escape"));
  expect_rejected(import_layers({{{'f', "a/b/../../../escape2", "x"}}}), {"a/b/../../../escape2"});
  EXPECT_FALSE(exists(t_ + "/escape2"));
  EXPECT_FALSE(exists(store_ + "/escape2"));
}

TEST_F(OciImport, AbsolutePathEntryStaysInsideTheRootfs) {
  const std::string host_target = t_ + "/abs-target";  // absolute host path named by the entry
  auto r = import_layers({{{'f', host_target, "inside"}, {'f', "/etc/hostname", "img"}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_FALSE(exists(host_target));
  EXPECT_EQ(read_file(root() + host_target), "inside");
  EXPECT_EQ(read_file(root() + "/etc/hostname"), "img");
}

TEST_F(OciImport, EscapingRelativeSymlinkRejected) {
  expect_rejected(import_layers({{{'d', "etc", ""}, {'l', "etc/evil", "../../../etc"}}}),
                  {"layer 1/1", "'etc/evil'", "climbs out of the rootfs"});
  expect_rejected(import_layers({{{'l', "up", ".."}}}), {"'up'"});
}

TEST_F(OciImport, SymlinkChainThatEscapesRejected) {
  // Each link alone stays inside lexically; followed through `a/d` (-> the root), `b`
  // climbs one level above it.
  expect_rejected(import_layers({{{'d', "a", ""}, {'l', "a/d", ".."}}, {{'l', "b", "a/d/../.."}}}),
                  {"layer 2/2", "'b'", "following the image's other links"});
}

TEST_F(OciImport, InsideSymlinksKeptAbsoluteOnesRootedAtTheRootfs) {
  auto r = import_layers({{{'f', "usr/lib/libx.so.1", "elf"},
                           {'l', "usr/lib/libx.so", "libx.so.1"},
                           {'l', "lib", "usr/lib"},
                           {'l', "etc/localtime", "/usr/share/zoneinfo/UTC"},
                           {'l', "usr/bin/up", "../../lib/libx.so"}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(fs::read_symlink(root() + "/etc/localtime"), "/usr/share/zoneinfo/UTC");
  EXPECT_EQ(fs::read_symlink(root() + "/usr/bin/up"), "../../lib/libx.so");
}

TEST_F(OciImport, AbsoluteSymlinkIsReplacedNotWrittenThrough) {
  const std::string victim = t_ + "/victim";
  write_file(victim, "host data");
  auto r = import_layers({{{'l', "etc/target", victim}}, {{'f', "etc/target", "image data"}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(victim), "host data");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(root() + "/etc/target")));
  EXPECT_EQ(read_file(root() + "/etc/target"), "image data");
}

TEST_F(OciImport, WritingThroughASymlinkedDirectoryRejected) {
  const std::string outside = t_ + "/outside";
  fs::create_directories(outside);
  write_file(outside + "/keep", "k");
  // Layer 1 plants d -> the host dir; layer 2 writes beneath d.
  expect_rejected(import_layers({{{'l', "d", outside}}, {{'f', "d/pwned", "x"}}}),
                  {"layer 2/2", "'d/pwned'", "symlink 'd'"});
  // The same inside one layer, with a relative link, a whiteout and a hardlink.
  expect_rejected(import_layers({{{'d', "real", ""}, {'l', "d", "real"}, {'f', "d/pwned", "x"}}}), {"symlink 'd'"});
  expect_rejected(import_layers({{{'l', "d", outside}}, {{'f', "d/.wh.keep", ""}}}), {"symlink 'd'"});
  expect_rejected(import_layers({{{'l', "d", outside}}, {{'h', "stolen", "d/keep"}}}), {"symlink 'd'"});
  expect_rejected(import_layers({{{'l', "d", outside}}, {{'f', "d/.wh..wh..opq", ""}}}), {"symlink 'd'"});
  EXPECT_EQ(fs::directory_iterator(outside)->path().filename(), "keep");
  EXPECT_EQ(std::distance(fs::directory_iterator(outside), fs::directory_iterator()), 1);
  EXPECT_EQ(read_file(outside + "/keep"), "k");
}

TEST_F(OciImport, HardlinksStayInside) {
  const std::string secret = t_ + "/secret";
  write_file(secret, "host secret");
  expect_rejected(import_layers({{{'h', "stolen", "../secret"}}}), {"'stolen'", "'..'"});
  // An absolute target means the rootfs's own path, which does not exist here.
  expect_rejected(import_layers({{{'h', "stolen", secret}}}), {"'stolen'", "not a file already in the image"});
  struct stat st;
  ASSERT_EQ(stat(secret.c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1u);
  expect_rejected(import_layers({{{'d', "dir", ""}, {'h', "dirlink", "dir"}}}), {"hardlink to a directory"});
  // Within the image: the same inode.
  auto r = import_layers({{{'f', "bin/a", "same", 0755}}, {{'h', "bin/b", "bin/a"}, {'h', "/bin/c", "/bin/a"}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  struct stat a, b, c;
  ASSERT_EQ(stat((root() + "/bin/a").c_str(), &a), 0);
  ASSERT_EQ(stat((root() + "/bin/b").c_str(), &b), 0);
  ASSERT_EQ(stat((root() + "/bin/c").c_str(), &c), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(a.st_ino, c.st_ino);
}

TEST_F(OciImport, HardlinkedSymlinkCheckedWhereItLands) {
  expect_rejected(import_layers({{{'d', "a/b", ""}, {'l', "a/b/l", "../../x"}, {'h', "l2", "a/b/l"}}}),
                  {"'l2'", "climbs out of the rootfs"});
}

TEST_F(OciImport, DevicesRejectedFifosSkipped) {
  expect_rejected(import_layers({{{'f', "ok", "1"}}, {{'c', "dev/mem", ""}}}), {"layer 2/2", "'dev/mem'", "character device"});
  expect_rejected(import_layers({{{'b', "dev/sda", ""}}}), {"'dev/sda'", "block device"});
  auto r = import_layers({{{'p', "run/fifo", ""}, {'f', "run/file", "f"}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_FALSE(exists(root() + "/run/fifo"));
  EXPECT_EQ(read_file(root() + "/run/file"), "f");
}

TEST_F(OciImport, SetuidAndSetgidStripped) {
  auto r = import_layers({{{'f', "bin/su", "elf", 04755}, {'f', "bin/wall", "elf", 02755}, {'d', "shared", "", 03775}, {'d', "tmp", "", 01777}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  struct stat st;
  ASSERT_EQ(stat((root() + "/bin/su").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_EQ(stat((root() + "/bin/wall").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_EQ(stat((root() + "/shared").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01775u);
  ASSERT_EQ(stat((root() + "/tmp").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01777u);
}

TEST_F(OciImport, ReadOnlyImageDirectoriesStillFilled) {
  // 0555 dirs (like /proc in many images) get their mode only at the end.
  auto r = import_layers({{{'d', "ro", "", 0555}, {'f', "ro/a", "1"}}, {{'f', "ro/b", "2"}, {'f', "ro/.wh.a", ""}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(root() + "/ro/b"), "2");
  EXPECT_FALSE(exists(root() + "/ro/a"));
  struct stat st;
  ASSERT_EQ(stat((root() + "/ro").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0555u);
}

TEST_F(OciImport, GzipAndZstdLayers) {
  std::vector<Layer> ls = {{tar({{'f', "a", "gz"}, {'f', "gone", "x"}}, "gzip"), "application/vnd.oci.image.layer.v1.tar+gzip"},
                           {tar({{'f', "b", "zst"}, {'f', ".wh.gone", ""}}, "zstd"), "application/vnd.oci.image.layer.v1.tar+zstd"}};
  ASSERT_EQ(static_cast<unsigned char>(ls[0].bytes[0]), 0x1f);
  ASSERT_EQ(static_cast<unsigned char>(ls[1].bytes[0]), 0x28);
  auto r = import(layout(ls));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(root() + "/a"), "gz");
  EXPECT_EQ(read_file(root() + "/b"), "zst");
  EXPECT_FALSE(exists(root() + "/gone"));
}

TEST_F(OciImport, NonAsciiNamesKept) {
  // Written as pax UTF-8 names (the writer needs a UTF-8 locale for that); imported in
  // the "C" locale a library runs in.
  ASSERT_NE(setlocale(LC_CTYPE, "C.UTF-8"), nullptr);
  const std::string layer = tar({{'f', "caf\xc3\xa9/na\xc3\xafve.txt", "u"}, {'f', std::string(200, 'n') + "/long", "l"}});
  setlocale(LC_CTYPE, "C");
  ASSERT_NE(layer.find("path="), std::string::npos);  // pax records, not a raw ustar name
  auto r = import(layout({{layer}}));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(root() + "/caf\xc3\xa9/na\xc3\xafve.txt"), "u");
  EXPECT_EQ(read_file(root() + "/" + std::string(200, 'n') + "/long"), "l");
}

TEST_F(OciImport, EnvAndWorkingDirRecorded) {
  auto r = import_layers({{{'f', "bin/sh", "elf", 0755}}}, "withenv");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const std::vector<std::string> env = {"PATH=/usr/bin:/bin", "GREETING=hello world"};
  EXPECT_EQ(r->env, env);
  EXPECT_EQ(r->workdir, "/app");
  EXPECT_FALSE(exists(root("withenv") + "/app"));  // a missing WorkingDir is the runtime's to create
  json j = json::parse(read_file(store_ + "/withenv/rootfs.json"));
  EXPECT_EQ(j["env"], json(env));
  EXPECT_EQ(j["workdir"], "/app");
  EXPECT_EQ(j["name"], "withenv");
  auto back = resolve_rootfs("withenv", store_);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->env, env);
  EXPECT_EQ(back->layers, r->layers);
}

TEST_F(OciImport, FailureLeavesNothingBehind) {
  // Layer 2 of 3 is bad after layer 1 wrote plenty.
  std::vector<E> big;
  for (int i = 0; i < 50; ++i) big.push_back({'f', "data/f" + std::to_string(i), std::string(1000, 'x')});
  expect_rejected(import_layers({big, {{'f', "ok", "1"}, {'c', "bad", ""}}, {{'f', "late", "1"}}}), {"layer 2/3"});
  EXPECT_FALSE(exists(store_ + "/img"));
  // A name taken is refused and the existing rootfs kept.
  ASSERT_TRUE(import_layers({{{'f', "v", "1"}}}).ok());
  auto again = import_layers({{{'f', "v", "2"}}});
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().to_string().find("already exists"), std::string::npos);
  EXPECT_EQ(read_file(root() + "/v"), "1");
  EXPECT_EQ(store_entries(), std::vector<std::string>{"img"});
}

TEST_F(OciImport, BadNamesAndSourcesRejected) {
  const std::string dir = layout({{tar({{'f', "a", "1"}})}});
  EXPECT_FALSE(import(dir, "host").ok());
  EXPECT_FALSE(import(dir, "Bad/Name").ok());
  EXPECT_FALSE(import(dir, "").ok());
  auto missing = import(t_ + "/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().to_string().find(t_ + "/nope"), std::string::npos);
  write_file(t_ + "/empty/readme", "not an image");
  auto neither = import(t_ + "/empty");
  ASSERT_FALSE(neither.ok());
  EXPECT_NE(neither.status().to_string().find("index.json"), std::string::npos);
  EXPECT_TRUE(store_entries().empty());
}

TEST_F(OciImport, SeveralImagesNeedARef) {
  const std::string dir = t_ + "/multi";
  std::vector<Layer> one = {{tar({{'f', "which", "one"}})}}, two = {{tar({{'f', "which", "two"}})}};
  json d1 = put_image(dir, one, default_config(one)), d2 = put_image(dir, two, default_config(two));
  d1["annotations"] = {{"org.opencontainers.image.ref.name", "v1"}};
  d2["annotations"] = {{"org.opencontainers.image.ref.name", "v2"}};
  put_index(dir, json::array({d1, d2}));
  expect_rejected(import(dir), {"2 images", "v1", "v2", "IMAGE:REF"});
  auto r = import(dir + ":v2");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(root() + "/which"), "two");
  EXPECT_EQ(r->source, "oci:" + dir + ":v2");
  auto none = import(dir + ":v3", "other");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().to_string().find("no image named 'v3'"), std::string::npos);
}

TEST_F(OciImport, NestedIndexPicksThisHostsPlatform) {
  const std::string dir = t_ + "/multiarch";
  std::vector<Layer> mine = {{tar({{'f', "arch", "host"}})}}, other = {{tar({{'f', "arch", "foreign"}})}};
  json foreign_cfg = default_config(other);
  foreign_cfg["architecture"] = host_arch() == "s390x" ? "riscv64" : "s390x";
  json dm = put_image(dir, mine, default_config(mine)), df = put_image(dir, other, foreign_cfg);
  dm["platform"] = {{"os", "linux"}, {"architecture", host_arch()}};
  df["platform"] = {{"os", "linux"}, {"architecture", foreign_cfg["architecture"]}};
  json attestation = put_blob(dir, "{}", "application/vnd.oci.image.manifest.v1+json");
  attestation["platform"] = {{"os", "unknown"}, {"architecture", "unknown"}};
  json inner = {{"schemaVersion", 2}, {"mediaType", "application/vnd.oci.image.index.v1+json"},
                {"manifests", {df, dm, attestation}}};
  json di = put_blob(dir, inner.dump(), "application/vnd.oci.image.index.v1+json");
  put_index(dir, json::array({di}));
  auto r = import(dir);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(root() + "/arch"), "host");

  // An image only for another architecture is refused, naming it.
  std::vector<Layer> ls = {{tar({{'f', "a", "1"}})}};
  expect_rejected(import(layout(ls, foreign_cfg), "foreign"), {"linux/" + foreign_cfg["architecture"].get<std::string>()});
}

TEST_F(OciImport, BlobsAreResolvedInsideTheLayout) {
  // A blob that is a symlink to an absolute host path: resolved inside the layout, so the
  // host file (a perfectly valid layer) is never read.
  std::vector<Layer> ls = {{tar({{'f', "stolen", "host file"}})}};
  const std::string dir = layout(ls);
  const std::string blob = dir + "/blobs/sha256/" + sha(ls[0].bytes);
  fs::rename(blob, t_ + "/host-layer.tar");
  fs::create_symlink(t_ + "/host-layer.tar", blob);
  expect_rejected(import(dir), {"missing from the image"});
}

TEST_F(OciImport, OciArchiveTarball) {
  std::vector<Layer> ls = {{tar({{'f', "from", "oci-archive"}}, "gzip"), "application/vnd.oci.image.layer.v1.tar+gzip"}};
  const std::string dir = layout(ls);
  write_file(t_ + "/image.tar", tar(entries_of(dir)));
  auto r = import(t_ + "/image.tar");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(root() + "/from"), "oci-archive");
  EXPECT_EQ(store_entries(), std::vector<std::string>{"img"});
  EXPECT_EQ(std::distance(fs::directory_iterator(store_ + "/img"), fs::directory_iterator()), 2);  // layers, rootfs.json
}

TEST_F(OciImport, DockerSaveOldFormat) {
  const std::string l1 = tar({{'d', "etc", ""}, {'f', "etc/os", "base"}, {'f', "etc/gone", "g"}});
  const std::string l2 = tar({{'f', "etc/.wh.gone", ""}, {'f', "etc/app", "app"}});
  json cfg = default_config({{l1}, {l2}});
  const std::string cfg_text = cfg.dump();
  const std::string cfg_name = sha(cfg_text) + ".json";
  json manifest = json::array({{{"Config", cfg_name},
                                {"RepoTags", {"corral/test:v1"}},
                                {"Layers", {"1111/layer.tar", "2222/layer.tar"}}}});
  std::vector<E> es = {{'f', "manifest.json", manifest.dump()}, {'f', cfg_name, cfg_text},
                       {'d', "1111", ""}, {'f', "1111/layer.tar", l1}, {'f', "1111/VERSION", "1.0"},
                       {'d', "2222", ""}, {'f', "3333/layer.tar", l2}, {'l', "2222/layer.tar", "../3333/layer.tar"},
                       {'f', "repositories", "{}"}};
  write_file(t_ + "/save.tar", tar(es));
  auto r = import(t_ + "/save.tar:v1");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(root() + "/etc/os"), "base");
  EXPECT_EQ(read_file(root() + "/etc/app"), "app");
  EXPECT_FALSE(exists(root() + "/etc/gone"));
  EXPECT_EQ(r->workdir, "/app");
  EXPECT_EQ(store_entries(), std::vector<std::string>{"img"});  // the unpacked tarball is gone

  // Layer files are checked against the config's diff_ids.
  es[3].data = tar({{'d', "etc", ""}, {'f', "etc/os", "evil"}, {'f', "etc/gone", "g"}});
  write_file(t_ + "/save2.tar", tar(es));
  expect_rejected(import(t_ + "/save2.tar", "other"), {"layer 1/2", "digest mismatch"});
  EXPECT_TRUE(fs::exists(store_ + "/img/rootfs.json"));
}

TEST_F(OciImport, DockerSaveOldFormatRejectsEscapingLayerPaths) {
  const std::string l1 = tar({{'f', "a", "1"}});
  json cfg = default_config({{l1}});
  json manifest = json::array({{{"Config", "config.json"}, {"Layers", {"../../../../../../" + t_ + "/outer.tar"}}}});
  write_file(t_ + "/outer.tar", l1);  // would be a valid layer if it were read
  write_file(t_ + "/save.tar", tar({{'f', "manifest.json", manifest.dump()}, {'f', "config.json", cfg.dump()}}));
  expect_rejected(import(t_ + "/save.tar"), {"missing from the image"});
  // And the tarball itself may not climb out while it is unpacked.
  write_file(t_ + "/evil.tar", tar({{'f', "manifest.json", manifest.dump()}, {'f', "../../evil", "x"}}));
  expect_rejected(import(t_ + "/evil.tar"), {"'../../evil'", "'..'"});
}

TEST_F(OciImport, DockerSaveOciFormat) {
  // Docker 25+: an OCI layout plus manifest.json; legacy paths are symlinks into blobs/.
  const std::string dir = t_ + "/d25";
  std::vector<Layer> ls = {{tar({{'f', "bin/busybox", "elf", 0755}, {'f', "etc/x", "1"}})},
                           {tar({{'f', "etc/.wh.x", ""}, {'f', "etc/y", "2"}})}};
  json d = put_image(dir, ls, default_config(ls));
  d["annotations"] = {{"io.containerd.image.name", "docker.io/library/test:latest"},
                      {"org.opencontainers.image.ref.name", "latest"}};
  put_index(dir, json::array({d}));
  json m = json::parse(read_file(dir + "/blobs/sha256/" + d["digest"].get<std::string>().substr(7)));
  json manifest = json::array({{{"Config", "blobs/sha256/" + m["config"]["digest"].get<std::string>().substr(7)},
                                {"RepoTags", {"test:latest"}},
                                {"Layers", {"blobs/sha256/" + sha(ls[0].bytes), "blobs/sha256/" + sha(ls[1].bytes)}}}});
  write_file(dir + "/manifest.json", manifest.dump());
  fs::create_directories(dir + "/legacy");
  fs::create_symlink("../blobs/sha256/" + sha(ls[0].bytes), dir + "/legacy/layer.tar");
  write_file(t_ + "/d25.tar", tar(entries_of(dir)));
  auto r = import(t_ + "/d25.tar:latest");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(root() + "/etc/y"), "2");
  EXPECT_FALSE(exists(root() + "/etc/x"));
  EXPECT_EQ(r->env[1], "GREETING=hello world");
}

TEST_F(OciImport, RemoveRootfs) {
  ASSERT_TRUE(import_layers({{{'f', "a", "1"}}}, "gone").ok());
  ASSERT_TRUE(import_layers({{{'f', "a", "1"}}}, "base").ok());
  // A rootfs stacked on base's layer keeps base from being removed.
  Rootfs stacked{"stacked", "test", {store_ + "/base/layers/0"}, {}, {}, ""};
  ASSERT_TRUE(register_rootfs(stacked, store_).ok());
  Status s = remove_rootfs("base", store_);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.to_string().find("stacked"), std::string::npos) << s.to_string();

  EXPECT_TRUE(remove_rootfs("gone", store_).ok());
  EXPECT_FALSE(exists(store_ + "/gone"));
  EXPECT_EQ(remove_rootfs("gone", store_).code(), ErrorCode::kNotFound);
  EXPECT_FALSE(remove_rootfs("host", store_).ok());
  EXPECT_FALSE(remove_rootfs("../etc", store_).ok());
  EXPECT_TRUE(exists(store_ + "/base/layers/0/a"));
}

}  // namespace
}  // namespace corral::rootfs
