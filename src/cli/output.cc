#include "src/cli/output.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "src/cli/commands.h"

namespace corral::cli {

int exit_code_for(const ExecResult& r) {
  switch (r.status()) {
    case ExecStatus::kOk:
    case ExecStatus::kNonzeroExit: return r.exit_code;
    case ExecStatus::kSignaled: return 128 + r.signal;
    case ExecStatus::kTimeout: return 124;
    case ExecStatus::kOom: return 137;
    case ExecStatus::kOutputLimit: return 125;
    case ExecStatus::kSeccompViolation: return 128 + SIGSYS;
    case ExecStatus::kPolicyViolation:
    case ExecStatus::kSetupError: return kUsageError;
    case ExecStatus::kInternalError: return 70;
  }
  return 70;
}

bool read_all_stdin(std::string* out) {
  // On the heap and left uninitialised: pages are touched (and faulted in) only as far as
  // read() fills them, which for the usual empty stdin is not at all.
  constexpr size_t kChunk = 64 * 1024;
  std::unique_ptr<char[]> chunk(new char[kChunk]);
  char* buf = chunk.get();
  while (true) {
    ssize_t n = read(0, buf, kChunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > (64u << 20)) return false;
  }
}

void write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t w = write(fd, s.data(), s.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s.remove_prefix(static_cast<size_t>(w));
  }
}

std::optional<uint64_t> parse_size(const std::string& text) {
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  std::string suffix(end, text.data() + text.size());
  uint64_t mult = 1;
  if (suffix == "" || suffix == "B") mult = 1;
  else if (suffix == "K" || suffix == "KiB" || suffix == "k") mult = 1ull << 10;
  else if (suffix == "M" || suffix == "MiB" || suffix == "m") mult = 1ull << 20;
  else if (suffix == "G" || suffix == "GiB" || suffix == "g") mult = 1ull << 30;
  else return std::nullopt;
  if (n > UINT64_MAX / mult) return std::nullopt;
  return n * mult;
}

std::optional<int> parse_options(const char* cmd, const std::vector<std::string>& args,
                                 const boost::program_options::options_description& desc,
                                 const boost::program_options::positional_options_description& pos,
                                 boost::program_options::variables_map* vm) {
  namespace po = boost::program_options;
  try {
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), *vm);
    po::notify(*vm);
  } catch (const po::error& e) {
    return usage_error(std::string(cmd) + ": " + e.what());
  }
  if (vm->count("help")) {
    std::cout << desc;
    return 0;
  }
  return std::nullopt;
}

void report_outcome(const ExecResult& r) {
  if (r.status() == ExecStatus::kOk || r.status() == ExecStatus::kNonzeroExit) return;
  if (r.status() == ExecStatus::kSetupError) {
    fprintf(stderr, "corral: %s\n", r.message.c_str());
  } else {
    fprintf(stderr, "corral: %s: %s\n", exec_status_name(r.status()), r.message.c_str());
  }
}

bool prepared_netns_wanted() {
  const char* v = getenv("CORRAL_PREPARED_NETNS");
  return v && std::string_view(v) == "1";
}

void exit_then_teardown(int code, const std::function<void()>& teardown) {
  fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return;
  if (pid > 0) _exit(code);
  // A signal to the caller's process group (^C after the answer) must not cut the teardown
  // short; and nothing may hold the caller's pipes open.
  setsid();
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    for (int fd = 0; fd < 3; ++fd) dup2(null_fd, fd);
    if (null_fd > 2) close(null_fd);
  }
  teardown();
  _exit(0);
}

}  // namespace corral::cli
