#include "seccomp/compiler.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "seccomp/sha256.h"

namespace corral::seccomp {
namespace {

// Bump when the compiler's output for the same profile changes: it is part of every digest.
constexpr const char* kCompilerVersion = "corral-seccomp-compiler/1";

// ---------------------------------------------------------------------------------------------
// Syscall names.

// Syscalls that may be newer than the running libseccomp's table (used only for names it does
// not know). Since Linux 5.1 (424) new syscalls share one number on the kUnifiedArches.
struct NewSyscall {
  const char* name;
  int nr;
};
constexpr NewSyscall kNewSyscalls[] = {
    {"pidfd_send_signal", 424}, {"io_uring_setup", 425}, {"io_uring_enter", 426},
    {"io_uring_register", 427}, {"open_tree", 428}, {"move_mount", 429}, {"fsopen", 430},
    {"fsconfig", 431}, {"fsmount", 432}, {"fspick", 433}, {"pidfd_open", 434}, {"clone3", 435},
    {"close_range", 436}, {"openat2", 437}, {"pidfd_getfd", 438}, {"faccessat2", 439},
    {"process_madvise", 440}, {"epoll_pwait2", 441}, {"mount_setattr", 442}, {"quotactl_fd", 443},
    {"landlock_create_ruleset", 444}, {"landlock_add_rule", 445}, {"landlock_restrict_self", 446},
    {"memfd_secret", 447}, {"process_mrelease", 448}, {"futex_waitv", 449},
    {"set_mempolicy_home_node", 450}, {"cachestat", 451}, {"fchmodat2", 452},
    {"map_shadow_stack", 453}, {"futex_wake", 454}, {"futex_wait", 455}, {"futex_requeue", 456},
    {"statmount", 457}, {"listmount", 458}, {"lsm_get_self_attr", 459}, {"lsm_set_self_attr", 460},
    {"lsm_list_modules", 461}, {"mseal", 462}, {"setxattrat", 463}, {"getxattrat", 464},
    {"listxattrat", 465}, {"removexattrat", 466}, {"open_tree_attr", 467}, {"file_getattr", 468},
    {"file_setattr", 469},
};
constexpr uint32_t kUnifiedArches[] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64, AUDIT_ARCH_I386,
#ifdef AUDIT_ARCH_RISCV64
                                       AUDIT_ARCH_RISCV64,
#endif
                                       AUDIT_ARCH_ARM};

bool unified_arch(uint32_t arch) {
  for (uint32_t a : kUnifiedArches) {
    if (a == arch) return true;
  }
  return false;
}

// -1 when `name` is not a syscall on `arch` (libseccomp's pseudo numbers count as unknown).
int resolve_syscall(uint32_t arch, const std::string& name) {
  int nr = seccomp_syscall_resolve_name_arch(arch, name.c_str());
  if (nr >= 0) return nr;
  if (unified_arch(arch)) {
    for (const auto& s : kNewSyscalls) {
      if (name == s.name) {
        // Only when libseccomp does not already use that number for something else.
        char* other = seccomp_syscall_resolve_num_arch(arch, s.nr);
        bool taken = other != nullptr;
        std::free(other);
        return taken ? -1 : s.nr;
      }
    }
  }
  return -1;
}

std::string libseccomp_version() {
  const scmp_version* v = seccomp_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->micro);
}

// ---------------------------------------------------------------------------------------------
// Turning rules into libseccomp rules.

uint32_t to_scmp_action(const Action& a) {
  switch (a.kind) {
    case Action::Kind::kAllow: return SCMP_ACT_ALLOW;
    case Action::Kind::kErrno: return SCMP_ACT_ERRNO(static_cast<uint16_t>(a.errno_value));
    case Action::Kind::kKill: return SCMP_ACT_NOTIFY;
    case Action::Kind::kLog: return SCMP_ACT_LOG;
  }
  return SCMP_ACT_KILL_PROCESS;
}

scmp_compare to_scmp_op(ArgOp op) {
  switch (op) {
    case ArgOp::kEq: return SCMP_CMP_EQ;
    case ArgOp::kNe: return SCMP_CMP_NE;
    case ArgOp::kLt: return SCMP_CMP_LT;
    case ArgOp::kLe: return SCMP_CMP_LE;
    case ArgOp::kGt: return SCMP_CMP_GT;
    case ArgOp::kGe: return SCMP_CMP_GE;
    case ArgOp::kMaskedEq: return SCMP_CMP_MASKED_EQ;
  }
  return SCMP_CMP_EQ;
}

scmp_arg_cmp arg_cmp(unsigned index, scmp_compare op, uint64_t a, uint64_t b = 0) {
  scmp_arg_cmp c;
  c.arg = index;
  c.op = op;
  c.datum_a = a;
  c.datum_b = b;
  return c;
}

// A set of argument values {x : (x & mask) == value}.
struct Cube {
  uint64_t mask;
  uint64_t value;
};

// Splits the complement of the union of `excluded` into disjoint cubes. Used for "ioctl is
// allowed except TIOCSTI": libseccomp drops conditional rules of a syscall that also has an
// unconditional rule, and has no masked "not equal", so the exception is compiled as an allow
// for every value outside it.
void complement(const Cube& cur, const std::vector<Cube>& excluded, std::vector<Cube>* out) {
  std::vector<Cube> live;
  uint64_t bits = 0;
  for (const Cube& e : excluded) {
    if (((e.value ^ cur.value) & e.mask & cur.mask) != 0) continue;  // disjoint from cur
    if ((e.mask & ~cur.mask) == 0) return;                            // covers all of cur
    live.push_back(e);
    bits |= e.mask & ~cur.mask;
  }
  if (live.empty()) {
    out->push_back(cur);
    return;
  }
  uint64_t bit = uint64_t{1} << (63 - __builtin_clzll(bits));  // highest undecided bit
  complement({cur.mask | bit, cur.value}, live, out);
  complement({cur.mask | bit, cur.value | bit}, live, out);
}

struct RuleRef {
  size_t rule;  // index into Profile::rules
  size_t name;  // index into its names
};

struct SyscallPlan {
  std::string name;
  std::vector<RuleRef> refs;
};

Status scmp_error(const std::string& field, const std::string& what, int rc) {
  return Status(ErrorCode::kInternal, "libseccomp: " + what, field, -rc);
}

std::string rule_field(size_t i) { return "rules[" + std::to_string(i) + "]"; }

Status add_rules(scmp_filter_ctx ctx, const Profile& p, uint32_t arch, int nr, const SyscallPlan& plan) {
  const Action& def = p.default_action;
  // At most one unconditional action per syscall.
  const Rule* uncond = nullptr;
  size_t uncond_idx = 0;
  for (const RuleRef& ref : plan.refs) {
    const Rule& r = p.rules[ref.rule];
    if (!r.args.empty()) continue;
    if (uncond && uncond->action != r.action) {
      return InvalidArgument(rule_field(ref.rule) + ".names[" + std::to_string(ref.name) + "]",
                             "\"" + plan.name + "\" is also in " + rule_field(uncond_idx) +
                                 " with a different action and no args (which one applies?)");
    }
    if (!uncond) {
      uncond = &r;
      uncond_idx = ref.rule;
    }
  }
  const Action base = uncond ? uncond->action : def;

  auto add = [&](size_t rule_idx, const Action& action, const std::vector<scmp_arg_cmp>& cmps) -> Status {
    int rc = seccomp_rule_add_exact_array(ctx, to_scmp_action(action), nr, static_cast<unsigned>(cmps.size()),
                                          cmps.empty() ? nullptr : cmps.data());
    if (rc < 0) {
      return scmp_error(rule_field(rule_idx), "cannot add rule for \"" + plan.name + "\" on " + arch_name(arch), rc);
    }
    return Status::Ok();
  };

  // Conditional rules that differ from what applies without them (more specific wins).
  std::vector<const RuleRef*> exceptions;
  for (const RuleRef& ref : plan.refs) {
    const Rule& r = p.rules[ref.rule];
    if (!r.args.empty() && r.action != base) exceptions.push_back(&ref);
  }

  if (uncond && base != def) {
    if (exceptions.empty()) {
      RETURN_IF_ERROR(add(uncond_idx, base, {}));
    } else {
      // base applies outside the exceptions: each must be one eq/masked_eq on the same argument.
      std::vector<Cube> excluded;
      unsigned arg = p.rules[exceptions[0]->rule].args[0].index;
      for (const RuleRef* ref : exceptions) {
        const Rule& r = p.rules[ref->rule];
        const ArgCheck& a = r.args[0];
        if (r.args.size() != 1 || a.index != arg || (a.op != ArgOp::kEq && a.op != ArgOp::kMaskedEq)) {
          return InvalidArgument(
              rule_field(ref->rule) + ".args",
              "\"" + plan.name + "\" also has an unconditional rule (" + rule_field(uncond_idx) +
                  "); an exception to it must be a single eq or masked_eq test, all on the same argument");
        }
        excluded.push_back(a.op == ArgOp::kEq ? Cube{~uint64_t{0}, a.value} : Cube{a.mask, a.value});
      }
      std::vector<Cube> allowed;
      complement({0, 0}, excluded, &allowed);
      if (allowed.size() > 256) {
        return InvalidArgument(rule_field(exceptions[0]->rule) + ".args",
                               "the exceptions for \"" + plan.name + "\" are too fragmented to compile");
      }
      for (const Cube& c : allowed) {
        RETURN_IF_ERROR(add(uncond_idx, base, {arg_cmp(arg, SCMP_CMP_MASKED_EQ, c.mask, c.value)}));
      }
    }
  }
  for (const RuleRef* ref : exceptions) {
    const Rule& r = p.rules[ref->rule];
    if (r.action == def) continue;  // already what happens outside every rule
    std::vector<scmp_arg_cmp> cmps;
    for (const ArgCheck& a : r.args) {
      cmps.push_back(a.op == ArgOp::kMaskedEq ? arg_cmp(a.index, SCMP_CMP_MASKED_EQ, a.mask, a.value)
                                              : arg_cmp(a.index, to_scmp_op(a.op), a.value));
    }
    RETURN_IF_ERROR(add(ref->rule, r.action, cmps));
  }
  return Status::Ok();
}

struct CtxGuard {
  scmp_filter_ctx ctx;
  ~CtxGuard() {
    if (ctx) seccomp_release(ctx);
  }
};

struct FdGuard {
  int fd = -1;
  ~FdGuard() {
    if (fd >= 0) close(fd);
  }
};

StatusOr<std::vector<sock_filter>> compile_bpf(const Profile& p) {
  const uint32_t arch = seccomp_arch_native();
  // Group rules by syscall number, keeping rule order.
  std::map<int, SyscallPlan> plans;
  for (size_t i = 0; i < p.rules.size(); ++i) {
    const Rule& r = p.rules[i];
    for (size_t n = 0; n < r.names.size(); ++n) {
      int nr = resolve_syscall(arch, r.names[n]);
      if (nr < 0) {
        if (r.optional) continue;
        return InvalidArgument(rule_field(i) + ".names[" + std::to_string(n) + "]",
                               "unknown syscall \"" + r.names[n] + "\" on " + arch_name(arch) + " (libseccomp " +
                                   libseccomp_version() +
                                   "); mark the rule \"optional\": true to skip names this host does not know");
      }
      SyscallPlan& plan = plans[nr];
      plan.name = r.names[n];
      plan.refs.push_back({i, n});
    }
  }

  CtxGuard g{seccomp_init(to_scmp_action(p.default_action))};
  if (!g.ctx) return Internal("libseccomp: seccomp_init failed for default_action " + p.default_action.to_string());
  int rc = seccomp_attr_set(g.ctx, SCMP_FLTATR_ACT_BADARCH, to_scmp_action(p.bad_arch_action));
  if (rc < 0) return scmp_error("bad_arch_action", "cannot set bad_arch_action", rc);
  rc = seccomp_attr_set(g.ctx, SCMP_FLTATR_CTL_NNP, 0);  // the runtime sets no_new_privs itself
  if (rc < 0) return scmp_error("", "cannot clear SCMP_FLTATR_CTL_NNP", rc);
  rc = seccomp_attr_set(g.ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);  // binary search over syscall numbers
  if (rc < 0) return scmp_error("", "cannot set SCMP_FLTATR_CTL_OPTIMIZE", rc);
  for (const auto& [nr, plan] : plans) RETURN_IF_ERROR(add_rules(g.ctx, p, arch, nr, plan));

  FdGuard mem{memfd_create("corral-seccomp-bpf", MFD_CLOEXEC)};
  if (mem.fd < 0) return SysError("memfd_create for the BPF export");
  rc = seccomp_export_bpf(g.ctx, mem.fd);
  if (rc < 0) return scmp_error("", "seccomp_export_bpf failed", rc);
  struct stat st;
  if (fstat(mem.fd, &st) != 0) return SysError("fstat of the BPF export");
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0 || size % sizeof(sock_filter) != 0) {
    return Internal("libseccomp exported " + std::to_string(size) + " bytes of BPF, not whole instructions");
  }
  std::vector<sock_filter> filter(size / sizeof(sock_filter));
  if (filter.size() > BPF_MAXINSNS) {
    return InvalidArgument("rules", "compiles to " + std::to_string(filter.size()) + " BPF instructions, more than the kernel's " +
                                        std::to_string(BPF_MAXINSNS));
  }
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(mem.fd, reinterpret_cast<char*>(filter.data()) + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return SysError("reading back the BPF export");
    done += static_cast<size_t>(n);
  }
  return filter;
}

// ---------------------------------------------------------------------------------------------
// Caches.

std::mutex g_mu;
std::map<std::string, std::shared_ptr<const Program>> g_programs;  // by digest
std::atomic<uint64_t> g_compiles{0}, g_memory_hits{0}, g_disk_hits{0}, g_disk_writes{0}, g_disk_rejects{0},
    g_index_hits{0};

// What a profile file looked like when it was last loaded, so an unchanged file maps straight to
// its digest without being read and parsed again.
struct FileKey {
  dev_t dev;
  ino_t ino;
  off_t size;
  int64_t mtime_ns;
  bool operator==(const FileKey& o) const {
    return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns;
  }
};
std::map<std::string, std::pair<FileKey, std::string>> g_files;  // path -> (key, digest)

FileKey file_key(const struct stat& st) {
  return {st.st_dev, st.st_ino, st.st_size, int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
}

std::shared_ptr<const Program> memory_get_file(const std::string& path, const FileKey& key) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto f = g_files.find(path);
  if (f == g_files.end() || !(f->second.first == key)) return nullptr;
  auto it = g_programs.find(f->second.second);
  if (it == g_programs.end()) return nullptr;
  ++g_memory_hits;
  return it->second;
}

void remember_file(const std::string& path, const FileKey& key, const std::string& digest) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_files[path] = {key, digest};
}

std::shared_ptr<const Program> memory_get(const std::string& digest) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_programs.find(digest);
  if (it == g_programs.end()) return nullptr;
  ++g_memory_hits;
  return it->second;
}

std::shared_ptr<const Program> memory_put(std::shared_ptr<const Program> prog) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto [it, inserted] = g_programs.emplace(prog->digest, prog);
  return it->second;  // the first one stored wins, so callers share one object
}

std::string profile_digest(const Profile& p) {
  Sha256 h;
  h.update(std::string(kCompilerVersion) + "\n");
  h.update(profile_to_json(p, /*with_comments=*/false).dump() + "\n");
  h.update("libseccomp " + libseccomp_version() + "\n");
  char arch[32];
  std::snprintf(arch, sizeof(arch), "arch 0x%08x\n", seccomp_arch_native());
  h.update(arch);
  auto d = h.finish();
  return Sha256::hex(d);
}

// Cache file: magic, digest (64 hex), u32 instruction count, instructions, sha256 of all before.
constexpr char kMagic[8] = {'C', 'R', 'L', 'B', 'P', 'F', '0', '1'};
constexpr size_t kHeader = sizeof(kMagic) + 64 + 4;

std::string encode_cache(const std::string& digest, const std::vector<sock_filter>& filter) {
  std::string out(kMagic, sizeof(kMagic));
  out += digest;
  uint32_t n = static_cast<uint32_t>(filter.size());
  out.append(reinterpret_cast<const char*>(&n), 4);
  out.append(reinterpret_cast<const char*>(filter.data()), filter.size() * sizeof(sock_filter));
  Sha256 h;
  h.update(out);
  auto sum = h.finish();
  out.append(reinterpret_cast<const char*>(sum.data()), sum.size());
  return out;
}

bool decode_cache(const std::string& data, const std::string& digest, std::vector<sock_filter>* filter) {
  if (data.size() < kHeader + 32 || std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0) return false;
  if (data.compare(sizeof(kMagic), 64, digest) != 0) return false;
  uint32_t n;
  std::memcpy(&n, data.data() + sizeof(kMagic) + 64, 4);
  if (n == 0 || n > BPF_MAXINSNS || data.size() != kHeader + n * sizeof(sock_filter) + 32) return false;
  Sha256 h;
  h.update(data.data(), data.size() - 32);
  auto sum = h.finish();
  if (std::memcmp(sum.data(), data.data() + data.size() - 32, 32) != 0) return false;
  filter->resize(n);
  std::memcpy(filter->data(), data.data() + kHeader, n * sizeof(sock_filter));
  return BPF_CLASS(filter->back().code) == BPF_RET;
}

// The cache directory, created if needed, when it can be trusted; empty otherwise.
std::string usable_cache_dir() {
  const std::string dir = cache_dir();
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) return {};
    for (size_t pos = 1; (pos = dir.find('/', pos)) != std::string::npos; ++pos) {
      mkdir(dir.substr(0, pos).c_str(), 0755);  // parents; failures show up below
    }
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return {};
    if (lstat(dir.c_str(), &st) != 0) return {};
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) return {};
  return dir;
}

bool read_cache(const std::string& dir, const std::string& digest, std::vector<sock_filter>* filter) {
  const std::string path = dir + "/" + digest + ".bpf";
  FdGuard f{open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)};
  if (f.fd < 0) return false;  // absent (or a symlink): compile and write it
  struct stat st;
  const size_t max = kHeader + BPF_MAXINSNS * sizeof(sock_filter) + 32;
  bool trusted = fstat(f.fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
                 (st.st_mode & 022) == 0 && static_cast<size_t>(st.st_size) <= max;
  std::string data;
  if (trusted) {
    data.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = read(f.fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    trusted = done == data.size();
  }
  if (trusted && decode_cache(data, digest, filter)) return true;
  ++g_disk_rejects;
  return false;
}

void write_cache(const std::string& dir, const std::string& digest, const std::vector<sock_filter>& filter) {
  const std::string data = encode_cache(digest, filter);
  std::string tmp = dir + "/." + digest + ".XXXXXX";
  int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return;
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  bool ok = done == data.size();
  if (close(fd) != 0) ok = false;
  if (ok && rename(tmp.c_str(), (dir + "/" + digest + ".bpf").c_str()) == 0) {
    ++g_disk_writes;
  } else {
    unlink(tmp.c_str());
  }
}

// File index: lets a fresh process go from a profile file straight to its cached BPF
// without parsing the JSON (which costs more than the rest of a sandbox's seccomp set-up).
// One small file per profile path: "CRLIDX01 dev ino size mtime_ns digest uses_notify name".
// A changed file (any of dev/ino/size/mtime) misses and is parsed as usual.
std::string index_path(const std::string& dir, const std::string& profile_path) {
  Sha256 h;
  h.update(profile_path);
  return dir + "/file-" + Sha256::hex(h.finish()) + ".idx";
}

bool read_index(const std::string& dir, const std::string& profile_path, const FileKey& key, std::string* digest,
                std::string* name, bool* uses_notify) {
  FdGuard f{open(index_path(dir, profile_path).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)};
  if (f.fd < 0) return false;
  struct stat st;
  if (fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) return false;
  char buf[512] = {};
  ssize_t n = read(f.fd, buf, sizeof(buf) - 1);
  if (n <= 0) return false;
  unsigned long long dev, ino, size;
  long long mtime;
  char dig[65] = {}, nm[128] = {};
  int notify;
  if (std::sscanf(buf, "CRLIDX01 %llu %llu %llu %lld %64s %d %127s", &dev, &ino, &size, &mtime, dig, &notify, nm) != 7) {
    return false;
  }
  FileKey stored{static_cast<dev_t>(dev), static_cast<ino_t>(ino), static_cast<off_t>(size), mtime};
  if (!(stored == key) || std::strlen(dig) != 64) return false;
  *digest = dig;
  *name = nm;
  *uses_notify = notify != 0;
  return true;
}

void write_index(const std::string& dir, const std::string& profile_path, const FileKey& key, const Program& prog) {
  if (prog.name.find_first_of(" \n\t") != std::string::npos || prog.name.empty() || prog.name.size() > 127) return;
  char line[512];
  int len = std::snprintf(line, sizeof(line), "CRLIDX01 %llu %llu %llu %lld %s %d %s\n",
                          static_cast<unsigned long long>(key.dev), static_cast<unsigned long long>(key.ino),
                          static_cast<unsigned long long>(key.size), static_cast<long long>(key.mtime_ns),
                          prog.digest.c_str(), prog.uses_notify ? 1 : 0, prog.name.c_str());
  if (len <= 0 || len >= static_cast<int>(sizeof(line))) return;
  std::string tmp = dir + "/.idx.XXXXXX";
  int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return;
  bool ok = write(fd, line, static_cast<size_t>(len)) == len;
  if (close(fd) != 0) ok = false;
  if (!ok || rename(tmp.c_str(), index_path(dir, profile_path).c_str()) != 0) unlink(tmp.c_str());
}

StatusOr<std::shared_ptr<const Program>> build(const Profile& p, const std::string& digest) {
  ASSIGN_OR_RETURN(std::vector<sock_filter> filter, compile_bpf(p));
  ++g_compiles;
  auto prog = std::make_shared<Program>();
  prog->name = p.name;
  prog->digest = digest;
  prog->filter = std::move(filter);
  prog->uses_notify = p.uses_notify();
  return std::shared_ptr<const Program>(std::move(prog));
}

bool valid_bare_name(const std::string& s) {
  if (s.empty() || s.size() > 64 || s[0] == '.') return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  }
  return true;
}

StatusOr<std::string> read_profile_file(const std::string& path, FileKey* key) {
  FdGuard f{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return SysError("cannot open seccomp profile", path);
  struct stat st;
  if (fstat(f.fd, &st) != 0) return SysError("cannot stat seccomp profile", path);
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path, "seccomp profile is not a regular file");
  *key = file_key(st);
  std::string data;
  char buf[16384];
  for (;;) {
    ssize_t n = read(f.fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SysError("cannot read seccomp profile", path);
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (data.size() > (1u << 20)) return InvalidArgument(path, "seccomp profile is larger than 1 MiB");
  }
  return data;
}

Status in_file(Status s, const std::string& path) {
  return Status(s.code(), s.message() + " (in seccomp profile " + path + ")", s.field(), s.sys_errno());
}

}  // namespace

StatusOr<std::shared_ptr<const Program>> compile(const nlohmann::json& profile) {
  ASSIGN_OR_RETURN(Profile p, parse_profile(profile));
  const std::string digest = profile_digest(p);
  if (auto hit = memory_get(digest)) return hit;
  ASSIGN_OR_RETURN(std::shared_ptr<const Program> prog, build(p, digest));
  return memory_put(std::move(prog));
}

StatusOr<std::shared_ptr<const Program>> load(const std::string& name_or_path) {
  std::string path = name_or_path;
  if (name_or_path.find('/') == std::string::npos) {
    if (!valid_bare_name(name_or_path)) {
      return InvalidArgument("seccomp", "\"" + name_or_path +
                                            "\" is neither a profile name (letters, digits, '_', '-', '.') nor a path");
    }
    path = profile_dir() + "/" + name_or_path + ".json";
  }
  struct stat st;
  const std::string dir = usable_cache_dir();
  bool cache_rejected = false;  // the index led to a bad cache file: compile, don't retry it
  if (stat(path.c_str(), &st) == 0) {
    const FileKey fast_key = file_key(st);
    if (auto hit = memory_get_file(path, fast_key)) return hit;
    std::string digest, name;
    bool uses_notify = false;
    std::vector<sock_filter> filter;
    if (!dir.empty() && read_index(dir, path, fast_key, &digest, &name, &uses_notify)) {
      std::shared_ptr<const Program> hit = memory_get(digest);
      if (!hit && !(cache_rejected = !read_cache(dir, digest, &filter))) {
        ++g_disk_hits;
        auto prog = std::make_shared<Program>();
        prog->name = name;
        prog->digest = digest;
        prog->filter = std::move(filter);
        prog->uses_notify = uses_notify;
        hit = memory_put(std::move(prog));
      }
      if (hit) {
        ++g_index_hits;
        remember_file(path, fast_key, digest);
        return hit;
      }
    }
  }
  FileKey key;
  ASSIGN_OR_RETURN(std::string text, read_profile_file(path, &key));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return InvalidArgument(path, std::string("seccomp profile is not valid JSON: ") + e.what());
  }
  auto parsed = parse_profile(j);
  if (!parsed.ok()) return in_file(parsed.status(), path);
  const Profile& p = *parsed;
  const std::string digest = profile_digest(p);
  remember_file(path, key, digest);
  if (auto hit = memory_get(digest)) {
    if (!dir.empty()) write_index(dir, path, key, *hit);
    return hit;
  }
  std::vector<sock_filter> filter;
  std::shared_ptr<const Program> prog;
  if (!dir.empty() && !cache_rejected && read_cache(dir, digest, &filter)) {
    ++g_disk_hits;
    auto cached = std::make_shared<Program>();
    cached->name = p.name;
    cached->digest = digest;
    cached->filter = std::move(filter);
    cached->uses_notify = p.uses_notify();
    prog = memory_put(std::move(cached));
  } else {
    auto built = build(p, digest);
    if (!built.ok()) return in_file(built.status(), path);
    if (!dir.empty()) write_cache(dir, digest, (*built)->filter);
    prog = memory_put(std::move(built).value());
  }
  if (!dir.empty()) write_index(dir, path, key, *prog);
  return prog;
}

std::string syscall_name(uint32_t audit_arch, int nr) {
  uint32_t arch = audit_arch;
  std::string prefix;
  if (audit_arch == AUDIT_ARCH_X86_64 && nr >= 0 && (nr & 0x40000000) != 0) {
    arch = SCMP_ARCH_X32;  // libseccomp's x32 table takes the number with or without the bit
    prefix = "x32:";
  }
  if (nr >= 0) {
    // SCMP_ARCH_* tokens are the AUDIT_ARCH_* values; unknown arches give nullptr.
    if (char* s = seccomp_syscall_resolve_num_arch(arch, nr)) {
      std::string name = prefix + s;
      std::free(s);
      return name;
    }
    if (unified_arch(arch)) {
      for (const auto& s : kNewSyscalls) {
        if (s.nr == nr) return s.name;
      }
    }
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "syscall#%d (arch 0x%08x)", nr, audit_arch);
  return buf;
}

std::string arch_name(uint32_t audit_arch) {
  switch (audit_arch) {
    case AUDIT_ARCH_X86_64: return "x86_64";
    case AUDIT_ARCH_I386: return "i386";
    case AUDIT_ARCH_AARCH64: return "aarch64";
    case AUDIT_ARCH_ARM: return "arm";
#ifdef AUDIT_ARCH_RISCV64
    case AUDIT_ARCH_RISCV64: return "riscv64";
#endif
    case AUDIT_ARCH_PPC64LE: return "ppc64le";
    case AUDIT_ARCH_S390X: return "s390x";
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "arch 0x%08x", audit_arch);
  return buf;
}

std::string profile_dir() {
  const char* env = std::getenv("CORRAL_SECCOMP_DIR");
  if (env && *env) return env;
#ifdef CORRAL_SOURCE_DIR
  const std::string src = std::string(CORRAL_SOURCE_DIR) + "/seccomp/profiles";
  struct stat st;
  if (stat(src.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return src;
#endif
  return "/usr/share/corral/seccomp";
}

std::string cache_dir() {
  const char* env = std::getenv("CORRAL_CACHE_DIR");
  if (env && *env) return std::string(env) + "/seccomp";
  return "/var/cache/corral/seccomp";
}

CacheStats cache_stats() {
  CacheStats s;
  s.compiles = g_compiles;
  s.memory_hits = g_memory_hits;
  s.disk_hits = g_disk_hits;
  s.disk_writes = g_disk_writes;
  s.disk_rejects = g_disk_rejects;
  s.index_hits = g_index_hits;
  return s;
}

void clear_memory_cache() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_programs.clear();
  g_files.clear();
  g_compiles = g_memory_hits = g_disk_hits = g_disk_writes = g_disk_rejects = g_index_hits = 0;
}

}  // namespace corral::seccomp
