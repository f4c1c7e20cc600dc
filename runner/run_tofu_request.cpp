#include "runner/run_tofu_request.hpp"

namespace takosumi::runner {

RunTofuRequest run_tofu_request(const RunnerSettings& s, const RunTofuParts& run) {
  const RunWorkspace& ws = run.workspace;
  RunTofuRequest request{
      .sandbox = s.sandbox,
      .exec_control = s.exec_control,
      .hooks = {},
      .limits = s.limits,
      .memory_bytes = s.memory_bytes,
      .workspace_bytes = s.workspace_bytes,
      .max_processes = s.max_processes,
      .kill_grace = s.kill_grace,
      .supervisor = s.supervisor,
      .max_show_json = s.max_plan_json_bytes,
      .binary = run.binary,
      .provider_mirror = run.mirror,
      .deadline = run.deadline,
      .policy = run.policy,
      .workspace_root = ws.root(),
      .lock_file = ws.lock_file(),
      .protected_paths = {ws.root() / "capture", ws.credentials(), ws.lock_file(), ws.agent_dir()},
      .cgroup_procs = std::nullopt,
      .cgroup_memory = run.cgroup && s.cgroups && s.cgroups->limits_memory(),
      .cgroups_managed = s.cgroups.has_value(),
      .blocking = &run.blocking,
      .secrets = &run.secrets};
  for (const auto* hook : {&s.hooks.pre_plan, &s.hooks.post_plan, &s.hooks.pre_apply, &s.hooks.post_apply})
    if (!hook->empty()) request.hooks.push_back(*hook);
  if (run.cgroup) request.cgroup_procs = run.cgroup->procs_files();
  return request;
}

}  // namespace takosumi::runner
