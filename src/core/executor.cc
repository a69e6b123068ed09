#include "src/core/executor.h"

namespace corral {

StatusOr<ExecResult> Executor::exec_detached(Sandbox&, const ExecRequest&) {
  return Unsupported("this backend cannot run a detached program (needed by interactive sessions)", "interactive");
}

StatusOr<StepResult> Executor::exec_step(Sandbox& sandbox, const StepRequest& request) {
  if (!request.files.empty()) RETURN_IF_ERROR(put_files(sandbox, request.files));
  ASSIGN_OR_RETURN(ExecResult r, exec(sandbox, request.exec));
  return StepResult{std::move(r), std::nullopt};
}

StatusOr<ExecResult> Executor::run_once(const SandboxSpec& spec, const ExecRequest& request) {
  auto sandbox = create(spec);
  if (!sandbox.ok()) return sandbox.status();
  StatusOr<ExecResult> result = exec(**sandbox, request);
  Status destroyed = destroy(**sandbox);
  if (result.ok() && !destroyed.ok()) return destroyed;
  return result;
}

}  // namespace corral
