#include "tests/fault/fault_support.hpp"

#include <gtest/gtest.h>

#include "tests/support/child_process.hpp"

namespace takosumi::testing {
namespace json = boost::json;
namespace fs = std::filesystem;

std::string slow_chain_module(int count, const std::string& sleep_duration) {
  std::string m = R"(terraform {
  required_providers {
    local = { source = "hashicorp/local" }
    time  = { source = "hashicorp/time" }
  }
}
variable "out_dir" { type = string }
)";
  for (int i = 1; i <= count; ++i) {
    const auto n = std::to_string(i);
    const std::string after = i == 1 ? "" : "depends_on = [local_file.f" + std::to_string(i - 1) + "]\n  ";
    m += "resource \"time_sleep\" \"s" + n + "\" {\n  " + after + "create_duration = \"" +
         sleep_duration + "\"\n}\n";
    m += "resource \"local_file\" \"f" + n + "\" {\n  depends_on = [time_sleep.s" + n +
         "]\n  filename = \"${var.out_dir}/f" + n + "\"\n  content = \"" + n + "\"\n}\n";
  }
  return m;
}

StartedApply plan_and_start_apply(Stack& stack, const std::string& git_url,
                                  const std::string& name) {
  const auto out_dir = stack.real_world() / name;
  fs::create_directories(out_dir);
  StartedApply out;
  out.capsule =
      stack.create_capsule(git_url, json::object{{"out_dir", out_dir.string()}}, {}, name);
  auto plan = stack.plan(out.capsule);
  if (str(plan, "status") != "succeeded") {
    ADD_FAILURE() << "plan: " << json::serialize(plan);
    return out;
  }
  auto started = stack.post_apply(str(plan, "id"), false);
  if (started.status != 201u || !started.json.is_object()) {
    ADD_FAILURE() << "apply: " << started.body;
    return out;
  }
  out.run_id = str(started.json.as_object(), "id");
  return out;
}

std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file()) out.insert(e.path().filename().string());
  return out;
}

std::set<std::string> files_in_state(const std::string& state_json) {
  std::set<std::string> out;
  if (state_json.empty()) return out;
  auto doc = json::parse(state_json);
  for (const auto& r : doc.at("resources").as_array()) {
    const auto& o = r.as_object();
    if (json::value_to<std::string>(o.at("type")) != "local_file") continue;
    for (const auto& inst : o.at("instances").as_array()) {
      auto filename = json::value_to<std::string>(inst.at("attributes").at("filename"));
      out.insert(fs::path(filename).filename().string());
    }
  }
  return out;
}

json::object current_state_version(Stack& stack, const std::string& capsule_id) {
  auto versions = stack.state_versions(capsule_id);
  json::object newest;
  std::int64_t generation = 0;
  for (const auto& v : versions) {
    const auto g = v.at("generation").as_int64();
    if (g > generation) {
      generation = g;
      newest = v.as_object();
    }
  }
  return newest;
}

std::string journaled_phase(const Stack& stack, int agent, const std::string& run_id) {
  const auto file = stack.agent_dir(agent) / "state/runs" / (run_id + ".json");
  if (!fs::exists(file)) return "";
  auto doc = json::parse(read_text(file));
  return json::value_to<std::string>(doc.at("phase"));
}

bool wait_until_running(Stack& stack, const std::string& run_id) {
  return eventually(
      [&] {
        auto r = stack.api().get("/api/v1/runs/" + run_id);
        return r.json.is_object() && str(r.json.as_object(), "status") == "running";
      },
      std::chrono::seconds(60));
}

std::vector<json::object> run_events(Stack& stack, const std::string& action,
                                     const std::string& run_id) {
  auto r = stack.api().get("/api/v1/workspaces/" + stack.workspace_id() + "/activity?limit=200");
  EXPECT_EQ(r.status, 200u) << r.body;
  std::vector<json::object> out;
  if (!r.json.is_object()) return out;
  for (const auto& e : r.json.at("events").as_array())
    if (str(e.as_object(), "action") == action && str(e.as_object(), "runId") == run_id)
      out.push_back(e.as_object());
  return out;
}

bool process_running_under(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::error_code ec;
    auto target = fs::read_symlink(e.path() / "cwd", ec);
    if (!ec && target.string().rfind(dir.string(), 0) == 0) return true;
  }
  return false;
}

}  // namespace takosumi::testing
