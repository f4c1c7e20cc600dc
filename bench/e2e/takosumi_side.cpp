#include "bench/e2e/takosumi_side.hpp"

#include <thread>
#include <utility>

namespace takosumi::bench {
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kPoll = std::chrono::milliseconds(3);
// Finer for the pickup: nothing else runs while a Run waits to be claimed.
constexpr auto kPickupPoll = std::chrono::microseconds(500);
// The large figure's 10,000-resource Runs take minutes on a small machine.
constexpr auto kRunTimeout = std::chrono::minutes(30);

Millis since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

TakosumiSide::TakosumiSide(testing::Stack& stack, const std::string& module_text,
                           const std::string& repo_name)
    : stack_(stack), repo_(stack.root() / repo_name) {
  repo_.commit({{"main.tf", module_text}});
}

Result<std::string> TakosumiSide::new_capsule() {
  const std::string name = "bench-" + std::to_string(next_capsule_++);
  auto id = stack_.create_capsule(repo_.url(), json::object{},
                                  json::object{{"first", json::object{{"from", "first"}}}}, name);
  if (id.empty()) return fail("api", "create capsule " + name + " failed");
  return id;
}

Result<std::string> TakosumiSide::post_run(const std::string& target) {
  auto r = stack_.api().post(target, json::object{});
  if (r.status != 201 || !r.json.is_object()) return fail("api", "POST " + target + ": " + r.body);
  return testing::str(r.json.as_object(), "id");
}

Result<std::string> TakosumiSide::start_plan(const std::string& capsule) {
  return post_run("/api/v1/capsules/" + capsule + "/plan");
}

Result<json::object> TakosumiSide::wait_run(const std::string& run_id,
                                           std::chrono::microseconds interval, bool past_running) {
  const auto deadline = Clock::now() + kRunTimeout;
  while (Clock::now() < deadline) {
    auto r = stack_.api().get("/api/v1/runs/" + run_id);
    if (!r.json.is_object()) return fail("api", "GET run " + run_id + ": " + r.body);
    auto status = testing::str(r.json.as_object(), "status");
    if (status != "queued" && (!past_running || status != "running")) {
      if (past_running && status != "succeeded")
        return fail("run_failed", "Run " + run_id + " ended " + status + ": " + r.body);
      return r.json.as_object();
    }
    std::this_thread::sleep_for(interval);
  }
  return fail("timeout", "Run " + run_id + " did not end in 30 minutes");
}

Status TakosumiSide::wait_succeeded(const std::string& run_id) {
  auto run = wait_run(run_id, kPoll, true);
  if (!run) return std::unexpected(run.error());
  const auto type = testing::str(*run, "type");
  if (const auto* phases = run->if_contains("phaseMillis"); phases && phases->is_object())
    for (const auto& [phase, ms] : phases->get_object())
      if (ms.is_int64()) phase_samples_[type + "." + std::string(phase)].push_back(double(ms.get_int64()));
  return {};
}

std::map<std::string, std::vector<double>> TakosumiSide::take_phase_samples() {
  return std::exchange(phase_samples_, {});
}

Result<Millis> TakosumiSide::until_succeeded(
    const std::function<Result<std::string>()>& start_run) {
  const auto start = Clock::now();
  auto id = start_run();
  if (!id) return std::unexpected(id.error());
  TAKOSUMI_TRY(wait_succeeded(*id));
  return since(start);
}

Result<Millis> TakosumiSide::plan(const std::string& capsule) {
  return until_succeeded([&] { return start_plan(capsule); });
}

Result<Millis> TakosumiSide::plan_apply(const std::string& capsule) {
  const auto start = Clock::now();
  auto plan_id = start_plan(capsule);
  if (!plan_id) return std::unexpected(plan_id.error());
  TAKOSUMI_TRY(wait_succeeded(*plan_id));
  auto apply = stack_.post_apply(*plan_id, false);
  if (apply.status != 201 || !apply.json.is_object()) return fail("api", "POST apply: " + apply.body);
  TAKOSUMI_TRY(wait_succeeded(testing::str(apply.json.as_object(), "id")));
  return since(start);
}

Result<Millis> TakosumiSide::drift_check(const std::string& capsule) {
  return until_succeeded([&] { return post_run("/api/v1/capsules/" + capsule + "/drift-check"); });
}

Result<Millis> TakosumiSide::pickup(const std::string& capsule) {
  const auto start = Clock::now();
  auto id = start_plan(capsule);
  if (!id) return std::unexpected(id.error());
  auto claimed = wait_run(*id, kPickupPoll, false);
  if (!claimed) return std::unexpected(claimed.error());
  const Millis latency = since(start);
  TAKOSUMI_TRY(wait_succeeded(*id));
  return latency;
}

Result<Millis> TakosumiSide::plans_at_once(const std::vector<std::string>& capsules) {
  const auto start = Clock::now();
  std::vector<std::string> ids;
  for (const auto& c : capsules) {
    auto id = start_plan(c);
    if (!id) return std::unexpected(id.error());
    ids.push_back(*id);
  }
  for (const auto& id : ids) TAKOSUMI_TRY(wait_succeeded(id));
  return since(start);
}

}  // namespace takosumi::bench
