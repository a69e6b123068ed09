// corral exec: run one program in a fresh sandbox (native, or --backend docker|podman) and pass
// its exit code through.
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "backends/registry.h"
#include "runtime/native_executor.h"
#include "src/cli/commands.h"
#include "src/cli/output.h"

namespace po = boost::program_options;

namespace corral::cli {
int usage_error(const std::string& message) {
  fprintf(stderr, "corral: %s\n", message.c_str());
  return kUsageError;
}

int exec_command(const std::vector<std::string>& args) {
  // Options come first; the program starts at "--" or at the first word that is not one.
  std::vector<std::string> opts;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-') break;
    opts.push_back(a);
    if ((a == "--policy" || a == "--timeout" || a == "--backend" || a == "--image" || a == "--repeat") && i + 1 < args.size()) opts.push_back(args[++i]);
  }
  const std::vector<std::string> argv(args.begin() + static_cast<long>(i), args.end());

  po::options_description desc("usage: corral exec [options] -- PROGRAM [ARGS...]");
  desc.add_options()("help", "show this help")("policy", po::value<std::string>(), "policy JSON file")(
      "timeout", po::value<std::string>(), "wall-clock limit in ms (overrides the policy)")(
      "json", po::bool_switch(), "print the ExecResult as JSON instead of the program's output")(
      "no-stdin", po::bool_switch(), "do not pass corral's stdin to the program")(
      "backend", po::value<std::string>()->default_value("native"), "native | docker | podman")(
      "image", po::value<std::string>(), "container backends: the image to run in (or CORRAL_IMAGE)")(
      "repeat", po::value<std::string>(), "run the program N times in the same sandbox and print the exec "
                                          "latency (min/p50/max ms) to stderr: a warm-sandbox benchmark");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(opts).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(std::string("exec: ") + e.what());
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  if (argv.empty()) return usage_error("exec: no program given (usage: corral exec [options] -- PROGRAM [ARGS...])");

  SandboxSpec spec;
  if (vm.count("policy")) {
    auto p = Policy::from_file(vm["policy"].as<std::string>());
    if (!p.ok()) return usage_error("policy: " + p.status().to_string());
    spec.policy = std::move(p).value();
  }
  BackendOptions backend;
  backend.name = vm["backend"].as<std::string>();
  backend.short_lived = true;  // one sandbox, then exit
  backend.prepared_netns = prepared_netns_wanted();
  if (vm.count("image")) backend.image = vm["image"].as<std::string>();
  if (backend.name == "native") {
    Status supported = runtime::NativeExecutor::check_supported(spec.policy);
    if (!supported.ok()) return usage_error("policy: " + supported.to_string());
  }

  ExecRequest req;
  req.argv = argv;
  if (vm.count("timeout")) {
    // Parsed by hand: boost's lexical_cast turns "-3" into a huge unsigned number.
    const std::string text = vm["timeout"].as<std::string>();
    uint64_t t = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), t);
    if (ec != std::errc() || end != text.data() + text.size() || t == 0 || t > 86'400'000) {
      return usage_error("--timeout: must be a whole number of milliseconds from 1 to 86400000, got '" + text + "'");
    }
    req.wall_ms = t;
  }
  const bool json = vm["json"].as<bool>();
  if (!vm["no-stdin"].as<bool>() && !isatty(0)) {
    if (!read_all_stdin(&req.stdin_data)) return usage_error("stdin: cannot read it, or it is over 64 MiB");
  }
  if (!json) {
    req.on_stdout = [](std::string_view s) { write_all(1, s); };
    req.on_stderr = [](std::string_view s) { write_all(2, s); };
  }

  auto made = make_executor(backend);
  if (!made.ok()) return usage_error("--backend: " + made.status().to_string());
  Executor& executor = **made;
  auto sandbox = executor.create(spec);
  if (!sandbox.ok()) return usage_error(sandbox.status().to_string());
  uint64_t repeat = 1;
  if (vm.count("repeat")) {
    const std::string text = vm["repeat"].as<std::string>();
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), repeat);
    if (ec != std::errc() || end != text.data() + text.size() || repeat == 0 || repeat > 100'000) {
      executor.destroy(**sandbox);
      return usage_error("--repeat: a whole number from 1 to 100000, got '" + text + "'");
    }
  }
  std::vector<double> wall;
  auto result = executor.exec(**sandbox, req);
  for (uint64_t n = 1; n < repeat && result.ok(); ++n) {
    wall.push_back(result->usage.wall_ms);
    req.on_stdout = nullptr;  // the output of the last run only
    req.on_stderr = nullptr;
    result = executor.exec(**sandbox, req);
  }
  if (repeat > 1 && result.ok()) {
    wall.push_back(result->usage.wall_ms);
    std::sort(wall.begin(), wall.end());
    fprintf(stderr, "corral: %zu execs in one sandbox: min %.2f  p50 %.2f  max %.2f ms\n", wall.size(), wall.front(),
            wall[wall.size() / 2], wall.back());
  }
  if (!result.ok()) {
    executor.destroy(**sandbox);
    return usage_error(result.status().to_string());
  }
  // Output first, teardown after: the caller has its answer while the kernel cleans up.
  if (json) {
    std::string out = result->to_json().dump(2) + "\n";
    write_all(1, out);
  } else {
    report_outcome(*result);
  }
  const int code = exit_code_for(*result);
  // A native sandbox comes apart in the kernel for a while after its answer (the mount and
  // network namespaces, the cgroups): that happens after corral has exited.
  if (backend.name == "native") {
    exit_then_teardown(code, [&] {
      executor.destroy(**sandbox);
      made->reset();  // the executor's own teardown: an emptied corral cgroup subtree goes too
    });
  }
  executor.destroy(**sandbox);
  return code;
}

}  // namespace corral::cli
