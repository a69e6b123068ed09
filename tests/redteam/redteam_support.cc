#include "tests/redteam/redteam_support.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace corral::redteam {

std::string probe_dir() {
  if (const char* d = getenv("CORRAL_PROBE_DIR"); d && *d) return d;
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string self(buf, static_cast<size_t>(n));
  return self.substr(0, self.rfind('/'));
}

ProbeReport parse_probe(const std::string& out) {
  ProbeReport r;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("SAFE ", 0) == 0) r.safe++;
    else if (line.rfind("UNSAFE ", 0) == 0) r.unsafe.push_back(line);
  }
  return r;
}

std::string describe(const ExecResult& r) {
  auto cut = [](const std::string& s) { return s.size() > 4096 ? s.substr(0, 4096) + "...[cut]" : s; };
  std::ostringstream o;
  o << "status=" << exec_status_name(r.status()) << " exit_code=" << r.exit_code << " signal=" << r.signal
    << " message='" << r.message << "' wall_ms=" << r.usage.wall_ms << "\n--- stdout ---\n"
    << cut(r.stdout_data) << "--- stderr ---\n"
    << cut(r.stderr_data);
  return o.str();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool write_text(const std::string& path, const std::string& data, int mode) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return false;
  bool ok = write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  close(fd);
  return ok;
}

std::vector<HostProcess> host_processes() {
  std::vector<HostProcess> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (struct dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string base = std::string("/proc/") + e->d_name;
    std::string stat = read_text(base + "/stat");
    size_t open_paren = stat.find('('), close_paren = stat.rfind(')');
    if (open_paren == std::string::npos || close_paren == std::string::npos || close_paren + 4 > stat.size()) continue;
    HostProcess p;
    p.pid = atoi(e->d_name);
    p.comm = stat.substr(open_paren + 1, close_paren - open_paren - 1);
    std::istringstream rest(stat.substr(close_paren + 2));
    rest >> p.state >> p.ppid;
    std::istringstream status(read_text(base + "/status"));
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("Uid:", 0) == 0) {
        p.uid = static_cast<uid_t>(strtoul(line.c_str() + 4, nullptr, 10));
        break;
      }
    }
    out.push_back(p);
  }
  closedir(d);
  return out;
}

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& p : host_processes()) {
    if (p.ppid == parent && p.state != 'Z') out.push_back(p.pid);
  }
  return out;
}

std::vector<pid_t> pids_with_comm(const std::string& comm) {
  std::vector<pid_t> out;
  for (const auto& p : host_processes()) {
    if (p.comm == comm && p.state != 'Z') out.push_back(p.pid);
  }
  return out;
}

uid_t host_uid_of(pid_t pid) {
  std::istringstream status(read_text("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Uid:", 0) == 0) return static_cast<uid_t>(strtoul(line.c_str() + 4, nullptr, 10));
  }
  return static_cast<uid_t>(-1);
}

bool alive(pid_t pid) {
  if (pid <= 0 || kill(pid, 0) != 0) return false;
  std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  size_t close_paren = stat.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < stat.size() && stat[close_paren + 2] != 'Z' &&
         stat[close_paren + 2] != 'X';
}

long rss_kb() {
  std::istringstream status(read_text("/proc/self/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

int count_fds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  while (struct dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') n++;
  }
  closedir(d);
  return n - 1;  // the DIR's own fd
}

int count_mounts() {
  std::istringstream in(read_text("/proc/self/mountinfo"));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n++;
  return n;
}

bool eventually(int ms, const std::function<bool()>& cond) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (true) {
    if (cond()) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace corral::redteam
