// Seccomp profiles (profile.h) compiled to classic BPF with libseccomp, and cached: in memory
// per process (keyed by digest) and on disk as cache_dir()/<digest>.bpf, so a fresh process
// skips libseccomp entirely. The filter is only compiled here, never loaded: the runtime
// installs it with seccomp(SECCOMP_SET_MODE_FILTER) after setting no_new_privs itself.
//
// Compilation rules (beyond libseccomp's): the filter is for the native architecture only;
// every other ABI (i386 int 0x80, x32 on x86_64) gets bad_arch_action. "kill" compiles to
// SECCOMP_RET_USER_NOTIF: load with SECCOMP_FILTER_FLAG_NEW_LISTENER, and the supervisor that
// receives the notification kills the process and reports syscall_name(arch, nr).
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seccomp/profile.h"
#include "src/core/status.h"

namespace corral::seccomp {

// A compiled filter ready for seccomp(SECCOMP_SET_MODE_FILTER). Immutable, shared.
struct Program {
  std::string name;                        // profile name
  std::string digest;                      // sha256 hex of (canonical profile + libseccomp version + arch)
  std::vector<struct sock_filter> filter;  // <linux/filter.h>
  bool uses_notify = false;  // some action is "kill": load with SECCOMP_FILTER_FLAG_NEW_LISTENER

  // For seccomp(2); the kernel copies the filter, `filter` is not modified.
  struct sock_fprog fprog() const {
    return {static_cast<unsigned short>(filter.size()), const_cast<struct sock_filter*>(filter.data())};
  }
};

// `name_or_path`: a bare name ("default") loads <profile_dir()>/<name>.json; anything
// containing '/' is a path to a JSON file. Uses the memory and disk caches; a corrupt, truncated
// or foreign-owned cache file is ignored and rewritten (temp file + rename). Disk cache problems
// never fail a load.
StatusOr<std::shared_ptr<const Program>> load(const std::string& name_or_path);

// Compiles a profile given as JSON (memory cache only, no disk cache).
StatusOr<std::shared_ptr<const Program>> compile(const nlohmann::json& profile);

// Syscall name for a number on an AUDIT_ARCH_* architecture (as in seccomp_notif.data.arch),
// e.g. syscall_name(AUDIT_ARCH_X86_64, 39) == "getpid". x32 numbers (nr | 0x40000000 on
// AUDIT_ARCH_X86_64) come back as "x32:<name>". Unknown: "syscall#N (arch 0x...)".
std::string syscall_name(uint32_t audit_arch, int nr);

// "x86_64", "i386", "aarch64", ... or "arch 0x..." for an AUDIT_ARCH_* value.
std::string arch_name(uint32_t audit_arch);

// Env CORRAL_SECCOMP_DIR; else <CORRAL_SOURCE_DIR>/seccomp/profiles when that exists; else
// /usr/share/corral/seccomp.
std::string profile_dir();

// Env CORRAL_CACHE_DIR + "/seccomp"; else /var/cache/corral/seccomp. Created (0700) on first
// write; used only when it is a directory owned by the current euid and not group/world writable.
std::string cache_dir();

// Counters since process start (or the last clear_memory_cache), for tests and `corral doctor`.
struct CacheStats {
  uint64_t compiles = 0;      // libseccomp compilations
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t disk_writes = 0;
  uint64_t disk_rejects = 0;  // cache files present but corrupt, truncated or not trusted
  uint64_t index_hits = 0;    // loads that found the program through the file index (no JSON parse)
};
CacheStats cache_stats();
// Drops the in-memory cache and zeroes the counters (tests; programs already handed out stay valid).
void clear_memory_cache();

}  // namespace corral::seccomp
