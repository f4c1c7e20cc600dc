#include "agent/durable/run_spool.hpp"

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_fields.hpp"
#include "runner/host.hpp"

namespace takosumi::agent {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

constexpr const char* kDeliveryFile = "delivery.json";
// The report (at most protocol::kMaxRunReportBytes: async_settle replaces a larger one before
// it is spooled) and the undelivered log tail.
constexpr std::size_t kMaxDeliveryBytes = protocol::kMaxRunReportBytes + (32u << 20);

// Artifacts are named by file name only, so a delivery can only ever point into its own spool.
Result<std::optional<fs::path>> artifact(const json::object& o, std::string_view key,
                                         const fs::path& dir) {
  auto name = get_optional_string(o, key, 256);
  if (!name) return std::unexpected(name.error());
  if (!*name) return std::optional<fs::path>{};
  if (!runner::is_safe_file_name(**name))
    return fail(errc::kInvalidArgument, std::string(key) + " \"" + **name + "\" is not a file name");
  return std::optional<fs::path>(dir / **name);
}

Status check_in_dir(const std::optional<fs::path>& file, const fs::path& dir) {
  if (file && file->parent_path() != dir)
    return fail(errc::kInvalidArgument, file->string() + " is not in the spool " + dir.string());
  return {};
}

}  // namespace

fs::path RunSpool::dir(std::string_view run_id, std::int64_t attempt) const {
  return root_ / (std::string(run_id) + "-" + std::to_string(attempt));
}

Status RunSpool::save(std::string_view run_id, std::int64_t attempt, const Delivery& d) const {
  const fs::path where = dir(run_id, attempt);
  TAKOSUMI_TRY(check_in_dir(d.plan, where));
  TAKOSUMI_TRY(check_in_dir(d.state, where));
  TAKOSUMI_TRY(check_in_dir(d.plan_view, where));
  TAKOSUMI_TRY(ensure_directory(where, 0700));
  json::object o{{"report", protocol::to_json(d.report)},
                 {"logSeq", d.log_seq},
                 {"logTail", d.log_tail}};
  if (d.plan) o["plan"] = d.plan->filename().string();
  if (d.state) o["state"] = d.state->filename().string();
  if (d.plan_view) o["planView"] = d.plan_view->filename().string();
  return write_file_atomic(where / kDeliveryFile, takosumi::serialize(o), 0600);
}

Result<std::optional<Delivery>> RunSpool::load(std::string_view run_id, std::int64_t attempt) const {
  const fs::path where = dir(run_id, attempt);
  auto text = read_file(where / kDeliveryFile, kMaxDeliveryBytes);
  if (!text) {
    if (text.error().code == errc::kNotFound) return std::optional<Delivery>{};
    return std::unexpected(text.error());
  }
  auto o = parse_object(*text, kMaxDeliveryBytes);
  if (!o) return std::unexpected(o.error().with_context(kDeliveryFile));
  auto report_json = get_object(*o, "report");
  if (!report_json) return std::unexpected(report_json.error());
  auto report = protocol::run_report_from_json(**report_json);
  if (!report) return std::unexpected(report.error().with_context(kDeliveryFile));
  Delivery d;
  d.report = std::move(*report);
  auto plan = artifact(*o, "plan", where);
  auto state = artifact(*o, "state", where);
  auto view = artifact(*o, "planView", where);
  auto seq = get_int(*o, "logSeq");
  auto tail = get_string(*o, "logTail", kMaxDeliveryBytes);
  if (!plan) return std::unexpected(plan.error());
  if (!state) return std::unexpected(state.error());
  if (!view) return std::unexpected(view.error());
  if (!seq) return std::unexpected(seq.error());
  if (!tail) return std::unexpected(tail.error());
  d.plan = std::move(*plan);
  d.state = std::move(*state);
  d.plan_view = std::move(*view);
  d.log_seq = *seq;
  d.log_tail = std::move(*tail);
  return std::optional<Delivery>(std::move(d));
}

Status RunSpool::remove(std::string_view run_id, std::int64_t attempt) const {
  TAKOSUMI_TRY(remove_tree(dir(run_id, attempt)));
  return fsync_directory(root_);
}

}  // namespace takosumi::agent
