#pragma once
// Shared by the fault tests (tests/fault): a module whose apply creates real files one after
// another with slow resources in between, and the two views the tests compare — what exists in
// reality (files) and what the control plane's current StateVersion remembers.
#include <boost/json.hpp>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/support/stack.hpp"

namespace takosumi::testing {

// count files <out_dir>/f1 … f<count>, each created after a time_sleep of sleep_seconds that
// follows the previous file, so an apply takes about count × sleep_seconds.
std::string slow_chain_module(int count, const std::string& sleep_duration);

struct StartedApply {
  std::string capsule;
  std::string run_id;  // empty when the plan or the apply request failed (reported as a failure)
};
// Creates a Capsule of git_url whose out_dir variable is real_world()/name, plans it and starts
// the apply without waiting for it.
StartedApply plan_and_start_apply(Stack& stack, const std::string& git_url, const std::string& name);

// Names of the regular files in dir (empty when dir does not exist).
std::set<std::string> files_in(const std::filesystem::path& dir);

// The file names (last path element) of the local_file resources a state JSON holds.
std::set<std::string> files_in_state(const std::string& state_json);

// The Capsule's current StateVersion as JSON (the newest of its history); empty when none.
boost::json::object current_state_version(Stack& stack, const std::string& capsule_id);

// The phase of a Run in an agent's journal (<state>/runs/<run>.json), "" when not journaled.
std::string journaled_phase(const Stack& stack, int agent, const std::string& run_id);

// Waits until the Run is claimed (status running) and returns the moment it saw that.
bool wait_until_running(Stack& stack, const std::string& run_id);

// The audit events of one Run with this action, from the workspace's activity feed.
std::vector<boost::json::object> run_events(Stack& stack, const std::string& action,
                                            const std::string& run_id);

// True while any process has its working directory under dir (tofu, providers, supervisors).
bool process_running_under(const std::filesystem::path& dir);

}  // namespace takosumi::testing
