// corral-zygote: the template process (see zygote.h). Started by corral as an unprivileged
// host uid with only its control socket (fd 3); imports the preload list once, then serves
// spawn requests and reaps its children as they end.
//
// A spawn: the template clones itself into fresh namespaces (clone3), a "spare", and hands
// it the request unread, with its fds; the spare builds the sandbox's LaunchPlan from it,
// answers, and becomes corral-init; the template passes its pid and a pidfd to corral. The
// template never parses a request and zeroes the bytes it forwarded, so nothing of one
// sandbox's request (its policy: environment, mounts) is in the memory the next sandbox
// copies — and a sandbox's program can read all of its own memory.
//
// With ZygoteOptions::spare the clone, the slow part of a spawn (it copies this address
// space) and independent of the request, is made ahead of time: one spare waits on a socket
// of its own, the request only has to reach it, and the next spare is cloned shortly after.
//
// Every sandbox and every exec in it is a copy of this process, and on this machine each
// page a copy writes costs ~4 us and each page table entry a fork copies or an exit tears
// down costs too. So before it serves, the template arranges its memory for being copied:
// malloc's scattered free chunks are taken (plug_free_chunks), and its anonymous memory
// becomes a private mapping of a sealed file that forks do not copy (snapshot_memory).
#include <dirent.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/fds.h"
#include "runtime/init.h"
#include "runtime/launch_plan.h"
#include "runtime/protocol.h"
#include "runtime/zygote.h"
#include "runtime/zygote_python.h"
#include "seccomp/compiler.h"

namespace corral::runtime {
namespace {

constexpr int kCtl = 3;    // the template's control socket to corral
constexpr int kToTemplate = 4;  // a spare's socket to the template
constexpr int kSpareTimeoutMs = 10'000;
constexpr int kSpareDelayMs = 3;

void send_json(int fd, uint32_t type, const nlohmann::json& j, const int* fds = nullptr, int nfds = 0) {
  std::string text = j.dump();
  send_frame(fd, static_cast<Frame>(type), text.data(), static_cast<uint32_t>(text.size()), fds, nfds);
}

int thread_count() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  while (struct dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// A frame's payload, in a buffer that is zeroed before it is freed or reused.
class Payload {
 public:
  ~Payload() { clear(); }
  bool read(int fd, uint32_t length) {
    clear();
    if (length > sizeof small_) {
      big_.assign(length, '\0');
      data_ = big_.data();
    } else {
      data_ = small_;
    }
    size_ = length;
    return length == 0 || read_full(fd, data_, length) == 0;
  }
  void clear() {
    if (data_) explicit_bzero(data_, size_);
    big_ = std::vector<char>();
    data_ = nullptr;
    size_ = 0;
  }
  const char* data() const { return data_ ? data_ : small_; }
  uint32_t size() const { return size_; }

 private:
  char small_[16384];
  std::vector<char> big_;
  char* data_ = nullptr;
  uint32_t size_ = 0;
};

void close_all(const int* fds, int n) {
  for (int i = 0; i < n; ++i) close(fds[i]);
}

// ---- The spare (a clone of the template in fresh namespaces) ------------------------------

// The template's pages a run writes (profile_written_pages), copied by every prepared
// worker before its request (prefault_written_pages). Set once before the template serves.
struct PageRange {
  unsigned long start, len;
};
PageRange* g_written = nullptr;
size_t g_written_count = 0;
uint64_t g_written_bytes = 0;
// A sandbox's prepared worker copies them only if its memory limit is at least this many
// times their size (the default 512 MB limit is ~40 times the default warm-up's 12.6 MB).
constexpr uint64_t kPrefaultLimitShare = 8;

// In pieces of 256 KiB (~0.1 ms each here), with a look at `stop_fd` before each.
void prefault_written_pages(int stop_fd) {
  constexpr unsigned long kPiece = 64 * 4096;
  for (size_t i = 0; i < g_written_count; ++i) {
    for (unsigned long off = 0; off < g_written[i].len; off += kPiece) {
      struct pollfd pending = {stop_fd, POLLIN, 0};
      if (poll(&pending, 1, 0) != 0) return;
      // A part no longer mapped (ENOMEM) is skipped; a kernel without the advice (EINVAL)
      // ends it.
      if (madvise(reinterpret_cast<void*>(g_written[i].start + off), std::min(kPiece, g_written[i].len - off),
                  MADV_POPULATE_WRITE) != 0 &&
          errno == EINVAL) {
        return;
      }
    }
  }
}

// Builds the LaunchPlan for a spawn request (zygote.cc's Zygote::spawn writes it).
StatusOr<std::unique_ptr<LaunchPlan>> plan_for(const ZygoteOptions& options, const char* text, size_t size) {
  nlohmann::json req = nlohmann::json::parse(text, text + size, nullptr, false);
  if (req.is_discarded() || !req.is_object()) return Internal("malformed spawn request");
  auto policy = Policy::from_json(req.value("policy", nlohmann::json::object()));
  if (!policy.ok()) return Status(policy.status().code(), "policy: " + policy.status().to_string());
  rootfs::Rootfs rootfs;
  const nlohmann::json r = req.value("rootfs", nlohmann::json::object());
  rootfs.name = r.value("name", "");
  rootfs.layers = r.value("layers", std::vector<std::string>{});
  rootfs.ro_binds = r.value("ro_binds", std::vector<std::string>{});
  rootfs.env = r.value("env", std::vector<std::string>{});
  rootfs.workdir = r.value("workdir", "");
  auto prog = seccomp::load(policy->seccomp);
  if (!prog.ok()) return Status(prog.status().code(), "seccomp: " + prog.status().to_string());
  auto plan = build_plan(*policy, req.value("state_dir", options.state_dir), rootfs, *prog,
                         req.value("has_cgroup", false));
  if (!plan.ok()) return plan.status();
  LaunchPlan& p = **plan;
  p.interpret = &python_interpret;
  p.interpret_accepts = &python_accepts;
  p.interpret_prepare = &python_prepare;
  // The sandbox's memory limit counts the copies too: made only where they are a small part
  // of it, so that they never bring an idle sandbox near its limit.
  if (g_written_count > 0 && policy->limits.memory_bytes >= kPrefaultLimitShare * g_written_bytes) {
    p.prefault = &prefault_written_pages;
  }
  p.interpreter_path = options.interpreter;
  return plan;
}

// While it waits, a spare builds and drops the plan of a typical request (a default python
// policy): the pages that work writes (malloc's free lists, the stack) are then its own
// copies, made while nobody waits, and the real request's plan mostly reuses them.
void prewarm(const ZygoteOptions& options) {
  Policy policy;
  policy.seccomp = options.language;
  nlohmann::json req = {{"policy", policy.to_json()},
                        {"rootfs", {{"name", "host"}, {"layers", {"/"}}, {"ro_binds", {"/usr", "/etc"}}}},
                        {"has_cgroup", true},
                        {"state_dir", options.state_dir}};
  std::string text = req.dump();
  auto plan = plan_for(options, text.data(), text.size());
  if (plan.ok()) cap_free((*plan)->empty_caps);
}

[[noreturn]] void spare_main(const ZygoteOptions& options, int sock, bool warm) {
  // Ends with the template (the socket's EOF says so too, should the signal be missed).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Nothing of the template's stays open: only the socket to it, as fd 4.
  if (sock != kToTemplate && dup3(sock, kToTemplate, O_CLOEXEC) < 0) _exit(1);
  close(kCtl);
  if (close_fds_from(kToTemplate + 1) != 0) _exit(1);
  if (warm) prewarm(options);

  FrameHeader h;
  int fds[kMaxFds];
  int nfds = 0;
  if (recv_header(kToTemplate, &h, fds, &nfds) != 0) _exit(0);  // the template is gone
  std::string text(h.length, '\0');
  if (h.type != kZygoteSpawn || nfds < 1 || h.length > kMaxFrame ||
      (h.length && read_full(kToTemplate, text.data(), h.length) != 0)) {
    send_json(kToTemplate, kZygoteError, {{"error", "malformed spawn request"}});
    _exit(0);
  }
  auto plan = plan_for(options, text.data(), text.size());
  if (!plan.ok()) {
    send_json(kToTemplate, kZygoteError, {{"error", plan.status().to_string()}});
    _exit(0);
  }
  LaunchPlan& p = **plan;
  p.cgroup_attach_fds.assign(fds + 1, fds + nfds);
  if (send_frame(kToTemplate, static_cast<Frame>(kZygoteSpawned), nullptr, 0) != 0) _exit(0);
  close(kToTemplate);
  init_main(p, fds[0]);
}

// ---- The template ---------------------------------------------------------------------------

// Which of the template's pages a run of `code` writes, as ranges in g_written; returns how
// many pages. A fork runs it (python_rehearse, output to the template's /dev/null), then
// reads its own page map over the template's private writable mappings: a page that is now
// its own (present, mapped by it alone, anonymous) was copied or first written by the run.
// Pages it maps afresh (new mappings) are not counted: a worker could not copy those ahead.
size_t profile_written_pages(const std::string& code) {
  std::vector<PageRange> regions;
  if (FILE* maps = fopen("/proc/self/maps", "re")) {
    char line[512];
    while (fgets(line, sizeof line, maps)) {
      unsigned long a, b;
      char perms[8];
      if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) == 3 && strcmp(perms, "rw-p") == 0) regions.push_back({a, b - a});
    }
    fclose(maps);
  }
  int p[2];
  if (regions.empty() || pipe2(p, O_CLOEXEC) != 0) return 0;
  pid_t child = fork();
  if (child == 0) {
    close(p[0]);
    python_rehearse(code.c_str());
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) _exit(1);
    constexpr uint64_t kPresent = 1ull << 63, kFile = 1ull << 61, kExclusive = 1ull << 56;
    static uint64_t entries[512];
    static PageRange out[256];
    size_t nout = 0;
    auto emit = [&](PageRange r) {
      out[nout++] = r;
      if (nout == sizeof out / sizeof out[0]) {
        if (write(p[1], out, sizeof out) != static_cast<ssize_t>(sizeof out)) _exit(1);
        nout = 0;
      }
    };
    for (const PageRange& r : regions) {
      PageRange run = {0, 0};
      for (unsigned long page = r.start; page < r.start + r.len; page += 4096 * 512) {
        const size_t n = std::min<unsigned long>(512, (r.start + r.len - page) / 4096);
        if (pread(fd, entries, n * 8, static_cast<off_t>(page / 4096 * 8)) != static_cast<ssize_t>(n * 8)) break;
        for (size_t i = 0; i < n; ++i) {
          const uint64_t e = entries[i];
          const unsigned long at = page + i * 4096;
          if ((e & kPresent) && (e & kExclusive) && !(e & kFile)) {
            if (run.len && run.start + run.len == at) run.len += 4096;
            else {
              if (run.len) emit(run);
              run = {at, 4096};
            }
          }
        }
      }
      if (run.len) emit(run);
    }
    if (nout && write(p[1], out, nout * sizeof out[0]) != static_cast<ssize_t>(nout * sizeof out[0])) _exit(1);
    _exit(0);
  }
  close(p[1]);
  std::vector<PageRange> got;
  PageRange r;
  while (child > 0 && read_full(p[0], &r, sizeof r) == 0) got.push_back(r);
  close(p[0]);
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 0;
  g_written = new PageRange[got.size()];
  std::copy(got.begin(), got.end(), g_written);
  g_written_count = got.size();
  size_t pages = 0;
  for (const PageRange& w : got) pages += w.len / 4096;
  g_written_bytes = pages * 4096ull;
  return pages;
}

// Takes every free chunk malloc has below the top of its heap and keeps it. After the
// imports the heap is fragmented: thousands of small free chunks spread over ~20 MB. A child
// allocating from them writes to a different page for nearly every allocation, and each
// first write to a page in a child is a page copy (~4 us here): a spare's plan cost ~250 of
// them. Plugged, a child's allocations come from the top of the heap, one page after the
// other. What is plugged (under a megabyte) stays allocated and shared, never copied.
void plug_free_chunks() {
  const size_t free_below_top = mallinfo2().fordblks;  // a bound, should the heap not be one piece
  size_t plugged = 0;
  for (size_t size = 64 << 10; size >= 16 && plugged < free_below_top; size /= 2) {
    while (plugged < free_below_top) {
      const struct mallinfo2 mi = mallinfo2();
      const char* top = static_cast<char*>(sbrk(0)) - mi.keepcost;  // where malloc's top chunk starts
      void* p = malloc(size);
      if (!p) return;
      if (static_cast<char*>(p) >= top) {  // nothing free of that size is left below the top
        free(p);
        break;
      }
      plugged += malloc_usable_size(p);
    }
  }
}

struct Spare {
  pid_t pid = -1;
  int sock = -1;  // the template's end
};

// Clones a spare: every namespace of a sandbox, waiting for its request. The template is
// single-threaded, so the child may allocate. `warm`: made ahead, it has time to prewarm.
StatusOr<Spare> make_spare(const ZygoteOptions& options, bool warm) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return SysError("socketpair");
  struct clone_args args = {};
  args.flags = kSandboxCloneFlags;
  args.exit_signal = SIGCHLD;
  long pid = syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) spare_main(options, sv[1], warm);
  int err = errno;
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    return SysError("clone3", err);
  }
  return Spare{static_cast<pid_t>(pid), sv[0]};
}

// Ends a spare that failed its request. Only called before the serve loop reaps again, so
// its pid cannot have been reused yet.
void drop(Spare* s, int pidfd) {
  if (pidfd >= 0) {
    syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
    close(pidfd);
  }
  if (s->sock >= 0) close(s->sock);
  *s = Spare{};
}

// One spawn: the request (in `payload`, fds: the child's control socket, then cgroup attach
// files) goes to the spare; once it has its plan, corral gets its pid and a pidfd.
void spawn(const ZygoteOptions& options, Spare* spare, Payload* payload, const int* fds, int nfds) {
  auto fail = [&](const std::string& why) { send_json(kCtl, kZygoteError, {{"error", why}}); };
  if (nfds < 1) return fail("malformed spawn request");
  if (spare->pid <= 0) {
    auto made = make_spare(options, false);  // none made ahead (or not ready yet)
    if (!made.ok()) return fail(made.status().to_string());
    *spare = *made;
  }
  Spare s = *spare;
  *spare = Spare{};  // used once, whatever happens next
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, s.pid, 0));
  int r = pidfd < 0 ? -errno
                    : send_frame(s.sock, static_cast<Frame>(kZygoteSpawn), payload->data(), payload->size(), fds, nfds);
  payload->clear();
  if (r != 0) {
    drop(&s, pidfd);
    return fail(std::string("hand the request to the spare: ") + strerror(-r));
  }
  struct pollfd p[2] = {{s.sock, POLLIN, 0}, {pidfd, POLLIN, 0}};
  int ready;
  do {
    ready = poll(p, 2, kSpareTimeoutMs);
  } while (ready < 0 && errno == EINTR);
  FrameHeader h;
  int got[kMaxFds];
  int ngot = 0;
  if (ready <= 0 || !(p[0].revents & POLLIN) || recv_header(s.sock, &h, got, &ngot) != 0) {
    drop(&s, pidfd);
    return fail("the spare did not take the request");
  }
  close_all(got, ngot);
  if (h.type != kZygoteSpawned) {
    // Its error, passed on as it wrote it; it exits by itself.
    bool ok = h.type == kZygoteError && h.length <= kMaxFrame && payload->read(s.sock, h.length);
    if (ok) send_frame(kCtl, static_cast<Frame>(kZygoteError), payload->data(), payload->size());
    payload->clear();
    drop(&s, pidfd);
    if (!ok) fail("the spare failed");
    return;
  }
  close(s.sock);
  send_json(kCtl, kZygoteSpawned, {{"pid", s.pid}}, &pidfd, 1);
  close(pidfd);
}

// Moves the template's anonymous memory (malloc's heap below its top chunk, pymalloc's
// arenas, numpy's and everyone's private mappings: ~60 MB here) into a sealed memfd mapped
// privately at the same addresses. Why: a fork copies the page table entries of anonymous
// memory, ~15,000 of them, and an exit tears them down again: ~1 ms for the clone of a
// sandbox's init and for each exec's fork, ~2 ms for each exec's exit and init's. A private
// file mapping nothing has written to is not copied at all: the child maps what it reads on
// demand (16 pages a fault) and copies what it writes, as before. Only what a process maps
// after the move is copied when it forks: for the template, the few pages its own serving
// loop touches.
//
// The file is sealed (no writes, no shared writable mappings, no size change) and closed: it
// is only reachable through the mappings, as the template's memory always was. Mappings with
// any property a file mapping would not keep (wipe or not copied on fork, locked, huge page
// advice, growing down...) stay as they are. Each mapping gets its own gigabyte of the file,
// a hole after its contents, so that a later mremap that grows it (realloc of a large block)
// reads zeros as anonymous memory would. A difference remains: after MADV_DONTNEED a page
// reads back as the template had it, not as zeros; malloc and Python rely on neither.
// Returns false (the memory untouched) if anything is off before the first remap.
bool snapshot_memory() {
  constexpr size_t kBuf = 8 << 20;
  constexpr unsigned long kSlot = 1ul << 30;
  constexpr int kMaxRegions = 2048;
  struct Region {
    unsigned long start, end;
  };
  static Region regions[kMaxRegions];
  // smaps, read whole into a mapping of its own (no malloc from here on).
  char* buf = static_cast<char*>(mmap(nullptr, kBuf, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (buf == MAP_FAILED) return false;
  int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
  size_t len = 0;
  ssize_t n = 0;
  while (fd >= 0 && len < kBuf - 1 && (n = read(fd, buf + len, kBuf - 1 - len)) > 0) len += static_cast<size_t>(n);
  if (fd >= 0) close(fd);
  buf[len] = '\0';
  const unsigned long buf_start = reinterpret_cast<unsigned long>(buf);
  const unsigned long top = (reinterpret_cast<unsigned long>(sbrk(0)) - mallinfo2().keepcost) & ~4095ul;
  int count = 0;
  bool ok = fd >= 0 && n == 0 && len < kBuf - 1;
  Region current = {0, 0};
  for (char* line = buf; ok && line && *line;) {
    char* next = strchr(line, '\n');
    if (next) *next++ = '\0';
    unsigned long a, b, offset, inode;
    char perms[8], dev[16], name[256] = "";
    if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %255s", &a, &b, perms, &offset, dev, &inode, name) >= 6 &&
        strchr(line, '-') < strchr(line, ' ')) {
      current = {0, 0};
      bool heap = strcmp(name, "[heap]") == 0;
      if (strcmp(perms, "rw-p") == 0 && inode == 0 && (name[0] == '\0' || heap) && a != buf_start) {
        current = {a, heap ? std::min(b, top) : b};
      }
    } else if (strncmp(line, "VmFlags:", 8) == 0 && current.end > current.start) {
      // Only plain private memory: any other flag is a property to keep.
      bool plain = true;
      for (char* f = line + 8; *f;) {
        while (*f == ' ') ++f;
        if (!*f) break;
        const char* flag = f;
        while (*f && *f != ' ') ++f;
        size_t fl = static_cast<size_t>(f - flag);
        bool known = false;
        for (const char* k : {"rd", "wr", "mr", "mw", "me", "ac", "sd", "nr"}) known |= fl == 2 && strncmp(flag, k, 2) == 0;
        plain &= known;
      }
      if (plain && current.end - current.start < kSlot) {
        if (count == kMaxRegions) ok = false;
        else regions[count++] = current;
      }
      current = {0, 0};
    }
    line = next;
  }
  munmap(buf, kBuf);
  if (!ok || count == 0) return false;
  int mfd = static_cast<int>(syscall(SYS_memfd_create, "corral-zygote", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (mfd < 0) return false;
  // Slots of a gigabyte, and as much again after the last: a sparse file, holes read as zeros.
  ok = ftruncate(mfd, static_cast<off_t>((count + 1) * kSlot)) == 0;
  for (int i = 0; ok && i < count; ++i) {
    const unsigned long size = regions[i].end - regions[i].start;
    for (unsigned long done = 0; ok && done < size;) {
      ssize_t w = pwrite(mfd, reinterpret_cast<char*>(regions[i].start) + done, size - done,
                         static_cast<off_t>(i * kSlot + done));
      ok = w > 0;
      if (ok) done += static_cast<unsigned long>(w);
    }
  }
  ok = ok && fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0;
  if (!ok) {
    close(mfd);
    return false;
  }
  for (int i = 0; i < count; ++i) {
    void* at = reinterpret_cast<void*>(regions[i].start);
    // The same bytes at the same place: nothing running notices. A failure here has
    // unmapped live memory; the template cannot go on (corral then makes sandboxes cold).
    if (mmap(at, regions[i].end - regions[i].start, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, mfd,
             static_cast<off_t>(i * kSlot)) != at) {
      _exit(6);
    }
  }
  close(mfd);
  return true;
}

int serve() {
  FrameHeader h;
  int fds[kMaxFds];
  int nfds = 0;
  if (recv_header(kCtl, &h, fds, &nfds) != 0 || h.type != kZygoteConfig || h.length > kMaxFrame) return 2;
  close_all(fds, nfds);
  std::string config(h.length, '\0');
  if (h.length && read_full(kCtl, config.data(), h.length) != 0) return 2;
  nlohmann::json body = nlohmann::json::parse(config, nullptr, false);
  if (body.is_discarded()) return 2;
  const ZygoteOptions options = ZygoteOptions::from_json(body);

  nlohmann::json info;
  Status s = python_start(options, &info);
  if (!s.ok()) {
    send_json(kCtl, kZygoteError, {{"error", s.to_string()}});
    return 3;
  }
  // A fork copies only the calling thread: any other (a BLAS pool, a stray timer) would be
  // missing in every child, holding whatever locks it held. Refuse rather than risk it.
  if (int n = thread_count(); n != 1) {
    send_json(kCtl, kZygoteError, {{"error", "the template has " + std::to_string(n) +
                                                 " threads after preloading; it must have exactly one to fork safely"}});
    return 3;
  }
  // Profiles spares would otherwise read from disk for every sandbox.
  for (const std::string& profile : {options.language, std::string("default")}) (void)seccomp::load(profile);
  plug_free_chunks();
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  int sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0) return 4;
  // Last, once nothing but this loop runs any more (see snapshot_memory).
  if (options.snapshot) info["snapshot"] = snapshot_memory();
  if (options.prefault && !options.warmup.empty()) info["prefault_kb"] = profile_written_pages(options.warmup) * 4;
  Spare spare;
  if (options.spare) {
    auto first = make_spare(options, true);
    if (first.ok()) spare = *first;  // else the first spawn makes one
  }
  send_json(kCtl, kZygoteReady, info);

  Payload payload;
  // When the next spare is to be made: shortly after a spawn, not at once, so that its clone
  // (a few milliseconds of kernel work) does not compete with the sandbox just handed out
  // while it sets up; a request that comes first makes one on the spot.
  bool spare_due = false;
  while (true) {
    struct pollfd p[2] = {{kCtl, POLLIN, 0}, {sigfd, POLLIN, 0}};
    int n = poll(p, 2, spare_due ? kSpareDelayMs : -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return 5;
    }
    if (n == 0) {
      spare_due = false;
      if (spare.pid <= 0) {
        auto next = make_spare(options, true);
        if (next.ok()) spare = *next;
      }
      continue;
    }
    if (p[1].revents) {
      struct signalfd_siginfo si;
      while (read(sigfd, &si, sizeof si) == sizeof si) {
      }
      pid_t pid;
      while ((pid = waitpid(-1, nullptr, WNOHANG)) > 0) {
        if (pid == spare.pid) {  // died waiting: another is made
          close(spare.sock);
          spare = Spare{};
          spare_due = options.spare;
        }
      }
    }
    if (p[0].revents) {
      nfds = 0;
      if (recv_header(kCtl, &h, fds, &nfds) != 0 || h.length > kMaxFrame || !payload.read(kCtl, h.length)) {
        return 0;  // corral closed the socket: done
      }
      if (h.type == kZygoteSpawn) spawn(options, &spare, &payload, fds, nfds);
      else send_json(kCtl, kZygoteError, {{"error", "unknown request"}});
      payload.clear();
      close_all(fds, nfds);
      if (spare.pid <= 0) spare_due = options.spare;
    }
  }
}

}  // namespace
}  // namespace corral::runtime

int main() { return corral::runtime::serve(); }
