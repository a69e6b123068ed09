#include "backends/registry.h"

#include "runtime/native_executor.h"

namespace corral {

std::vector<std::string> backend_names() { return {"native"}; }

StatusOr<std::unique_ptr<Executor>> make_executor(const BackendOptions& options) {
  if (options.name == "native") return std::unique_ptr<Executor>(new runtime::NativeExecutor());
  return InvalidArgument("backend", "unknown backend '" + options.name + "' (expected one of: native)");
}

}  // namespace corral
