#include "controlplane/runs/capsule_attention.hpp"

#include <boost/json/object.hpp>

namespace takosumi::controlplane {
namespace {

Attention partial_state(const StateVersion& sv, const std::optional<Run>& creator) {
  std::string why = "status unknown";
  if (creator) why = creator->failure_code.value_or(creator->status);
  return {std::string(attention_code::kPartialState), sv.created_by_run_id, sv.id, sv.generation,
          std::nullopt,
          "the current StateVersion was kept from an apply that did not finish (" + why +
              "); review it and plan again"};
}

Attention apply_stranded(const Run& run) {
  const std::string agent = run.agent_id.value_or("?");
  return {std::string(attention_code::kApplyStranded), run.id, std::nullopt, std::nullopt,
          run.agent_id,
          "the apply of run " + run.id + " was interrupted and agent " + agent +
              " has not reported back; its state may be on that host: run `takosumi-agent"
              " recover` there, or cancel the run"};
}

}  // namespace

std::vector<Attention> capsule_attention(const std::optional<StateVersion>& current,
                                         const std::optional<Run>& creator,
                                         const std::vector<Run>& running, std::int64_t now) {
  std::vector<Attention> out;
  if (current && current->partial) out.push_back(partial_state(*current, creator));
  for (const auto& run : running)
    if (run.stranded(now)) out.push_back(apply_stranded(run));
  return out;
}

Result<std::vector<Attention>> load_capsule_attention(StateStore& states, RunStore& runs,
                                                      std::string_view capsule_id,
                                                      std::int64_t now) {
  auto current = states.current(capsule_id);
  if (!current) return std::unexpected(current.error());
  std::optional<Run> creator;
  if (*current && (*current)->partial) {
    auto run = runs.get_run((*current)->created_by_run_id);
    if (!run) return std::unexpected(run.error());
    creator = std::move(*run);
  }
  auto running = runs.list_running(capsule_id);
  if (!running) return std::unexpected(running.error());
  return capsule_attention(*current, creator, *running, now);
}

boost::json::array to_json(const std::vector<Attention>& attention) {
  boost::json::array out;
  for (const auto& a : attention) {
    boost::json::object o{{"code", a.code}, {"runId", a.run_id}};
    if (a.state_version_id) o["stateVersionId"] = *a.state_version_id;
    if (a.generation) o["generation"] = *a.generation;
    if (a.agent_id) o["agentId"] = *a.agent_id;
    o["message"] = a.message;
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace takosumi::controlplane
