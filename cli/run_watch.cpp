#include "cli/run_watch.hpp"

#include <chrono>
#include <iostream>
#include <thread>

#include "common/error_codes.hpp"
#include "protocol/plan_view_text.hpp"

namespace takosumi::cli {
namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

// Best effort, from what tofu prints: the phase a running Run is in.
std::string phase_in(const std::string& log) {
  const std::pair<const char*, const char*> markers[] = {
      {"Apply complete", "apply"},  {"Creating...", "apply"},   {"Modifying...", "apply"},
      {"Destroying...", "apply"},   {"will perform the following", "plan"},
      {"No changes.", "plan"},      {"Refreshing state", "plan"}, {"Reading...", "plan"},
      {"Initializing", "init"}};
  std::size_t best = std::string::npos;
  std::string phase;
  for (const auto& [text, name] : markers) {
    const auto at = log.rfind(text);
    if (at != std::string::npos && (best == std::string::npos || at > best)) {
      best = at;
      phase = name;
    }
  }
  return phase;
}

std::string elapsed(Clock::time_point since) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - since).count();
  return std::to_string(s / 60) + "m" + (s % 60 < 10 ? "0" : "") + std::to_string(s % 60) + "s";
}

bool finished(const std::string& status) { return status != "queued" && status != "running"; }

}  // namespace

std::expected<LogPosition, ApiError> print_new_log(const ApiClient& api, const std::string& run_id,
                                                   LogPosition after, std::ostream& to) {
  auto logs = api.get("/api/v1/runs/" + run_id + "/logs");
  if (!logs) return std::unexpected(logs.error());
  for (const auto& c : logs->as_object().at("chunks").as_array()) {
    const auto& chunk = c.as_object();
    const LogPosition at{chunk.at("attempt").as_int64(), chunk.at("seq").as_int64()};
    if (at.attempt < after.attempt || (at.attempt == after.attempt && at.seq <= after.seq)) continue;
    to << printable(chunk.at("text").as_string()) << std::flush;
    after = at;
  }
  return after;
}

std::expected<json::object, ApiError> watch_run(const ApiClient& api, const std::string& run_id,
                                                const Output& out, bool follow) {
  const auto started = Clock::now();
  LogPosition printed;
  std::string last_line;
  int failures = 0;
  for (;;) {
    auto run = api.get("/api/v1/runs/" + run_id);
    // The Run goes on without us: a dropped connection or a control plane restarting is waited
    // out (about two minutes) before giving up.
    if (!run && run.error().exit() == Exit::unreachable && ++failures <= 7) {
      std::this_thread::sleep_for(std::chrono::seconds(1 << std::min(failures, 5)));
      continue;
    }
    if (!run) return std::unexpected(run.error());
    failures = 0;
    const auto& r = run->as_object();
    const std::string status = field(r, "status");
    if (follow) {
      // With -o json the log goes to stderr, so stdout stays one JSON document.
      auto logged = print_new_log(api, run_id, printed, out.json() ? std::cerr : std::cout);
      if (!logged) return std::unexpected(logged.error());
      printed = *logged;
    }
    if (finished(status)) {
      out.end_status_line();
      return r;
    }
    if (!out.json() && !follow) {
      std::string line = field(r, "type") + " " + run_id + ": " + status;
      if (status == "running") {
        line += " (attempt " + field(r, "attempt");
        if (out.terminal())
          if (auto logs = api.get("/api/v1/runs/" + run_id + "/logs"); logs)
            if (auto phase = phase_in(field(logs->as_object(), "text")); !phase.empty())
              line += ", " + phase;
        line += ")";
      }
      // Off a terminal a line is printed only when it changes.
      if (out.terminal()) out.status_line(line + "  " + elapsed(started));
      else if (line != last_line) out.status_line(line);
      last_line = line;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

std::expected<void, ApiError> print_plan_view(const ApiClient& api, const std::string& run_id,
                                              const Output& out) {
  auto got = api.get("/api/v1/runs/" + run_id + "/plan");
  if (!got) return std::unexpected(got.error());
  if (!got->is_object())
    return std::unexpected(ApiError{Error{std::string(errc::kInvalidArgument),
                                          "the plan view is not a JSON object"}, 200});
  auto view = protocol::plan_view_from_json(got->as_object());
  if (!view) return std::unexpected(ApiError{view.error(), 200});
  // Every piece of the view passes one_line in plan_view_lines; colour is added after.
  for (const auto& line : protocol::plan_view_lines(*view, {.colour = out.colour()}))
    std::cout << line << "\n";
  return {};
}

Exit report_run(const ApiClient& api, const json::object& run, const Output& out) {
  const std::string status = field(run, "status");
  const std::string type = field(run, "type");
  const bool changes = run.contains("hasChanges") && run.at("hasChanges").is_bool() &&
                       run.at("hasChanges").as_bool();
  const json::value* drift = run.if_contains("drift");
  const bool drifted = drift && drift->is_object() && field(drift->as_object(), "status") == "drift";
  if (!out.json()) {
    std::cout << type << " " << field(run, "id") << ": "
              << (status == "succeeded" ? out.green(status) : out.red(status)) << "\n";
    if (const auto* f = run.if_contains("failure"); f && f->is_object())
      std::cout << "  " << out.red(field(f->as_object(), "code")) << ": "
                << field(f->as_object(), "message") << "\n";
    const bool plan_type = type == "plan" || type == "destroy_plan";
    if (const auto* s = run.if_contains("changeSummary"); plan_type && s && s->is_object()) {
      const auto& c = s->as_object();
      std::cout << "  changes: " << field(c, "add") << " to add, " << field(c, "change")
                << " to change, " << field(c, "replace") << " to replace, "
                << field(c, "destroy") << " to destroy\n";
    }
    bool viewed = false;
    if (plan_type && changes && status == "succeeded") {
      std::cout << "\n";
      auto printed = print_plan_view(api, field(run, "id"), out);
      // Without a view (an agent from before them) the addresses below stand; say why.
      if (!printed) print_error(printed.error().error);
      viewed = printed.has_value();
    }
    if (const auto* rc = run.if_contains("resourceChanges"); !viewed && rc && rc->is_array())
      for (const auto& v : rc->as_array())
        if (v.is_object())
          std::cout << "    " << printable(field(v.as_object(), "address")) << " "
                    << field(v.as_object(), "actions") << "\n";
    if (const auto* loss = run.if_contains("dataLoss"); loss && loss->is_array())
      for (const auto& v : loss->as_array()) {
        if (!v.is_object()) continue;
        const auto& m = v.as_object();
        std::cout << "  " << out.red(out.bold("DATA LOSS")) << " " << field(m, "action") << " "
                  << field(m, "address") << " (" << field(m, "reason") << ")\n";
      }
    if (drifted) {
      std::cout << "  " << out.yellow("drift detected") << "\n";
      if (const auto* list = drift->as_object().if_contains("resources"); list && list->is_array())
        for (const auto& v : list->as_array())
          if (v.is_object())
            std::cout << "    " << field(v.as_object(), "action") << " "
                      << field(v.as_object(), "address") << "\n";
    }
    if (type == "apply" && status == "succeeded")
      std::cout << "  new StateVersion: " << field(run, "stateVersionId") << "\n";
    if (plan_type && changes && status == "succeeded")
      std::cout << "  apply it with: takosumi apply " << field(run, "id")
                << (run.contains("dataLoss") && run.at("dataLoss").is_array() &&
                            !run.at("dataLoss").as_array().empty()
                        ? " --accept-data-loss"
                        : "")
                << "\n";
  }
  if (status == "failed") return Exit::run_failed;
  if (status == "cancelled") return Exit::run_cancelled;
  if (status != "succeeded") return Exit::run_failed;
  const bool plan = type == "plan" || type == "destroy_plan";
  if ((plan && changes) || drifted) return Exit::changes;
  return Exit::ok;
}

}  // namespace takosumi::cli
