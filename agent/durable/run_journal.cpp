#include "agent/durable/run_journal.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_fields.hpp"
#include "runner/host.hpp"

namespace takosumi::agent {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

constexpr std::size_t kMaxEntryBytes = 4u << 20;  // a manifest is at most 1 MiB
constexpr std::array<std::pair<RunPhase, std::string_view>, 5> kPhases{{
    {RunPhase::claimed, "claimed"},
    {RunPhase::apply, "apply"},
    {RunPhase::deliver, "deliver"},
    {RunPhase::lease_lost, "lease_lost"},
    {RunPhase::undeliverable, "undeliverable"},
}};

Result<JournalEntry> parse_entry(std::string_view text) {
  auto o = parse_object(text, kMaxEntryBytes);
  if (!o) return std::unexpected(o.error());
  JournalEntry e;
  auto run_id = get_string(*o, "runId", 128);
  auto attempt = get_int(*o, "attempt");
  auto lease = get_string(*o, "leaseToken", 256);
  auto phase = get_string(*o, "phase", 32);
  auto manifest = get_string(*o, "manifest", kMaxEntryBytes);
  auto note = get_optional_string(*o, "note", 4096);
  auto updated = get_int(*o, "updatedAt");
  if (!run_id) return std::unexpected(run_id.error());
  if (!attempt) return std::unexpected(attempt.error());
  if (!lease) return std::unexpected(lease.error());
  if (!phase) return std::unexpected(phase.error());
  if (!manifest) return std::unexpected(manifest.error());
  if (!note) return std::unexpected(note.error());
  if (!updated) return std::unexpected(updated.error());
  auto p = run_phase_from_string(*phase);
  if (!p) return fail(errc::kInvalidArgument, "unknown phase \"" + *phase + "\"");
  e.run_id = std::move(*run_id);
  e.attempt = *attempt;
  e.lease_token = std::move(*lease);
  e.phase = *p;
  e.manifest_payload = std::move(*manifest);
  e.note = note->value_or("");
  e.updated_at = *updated;
  return e;
}

}  // namespace

std::string_view to_string(RunPhase phase) {
  for (const auto& [p, name] : kPhases)
    if (p == phase) return name;
  return "unknown";
}

std::optional<RunPhase> run_phase_from_string(std::string_view text) {
  for (const auto& [p, name] : kPhases)
    if (name == text) return p;
  return std::nullopt;
}

bool is_held_for_operator(RunPhase phase) {
  return phase == RunPhase::lease_lost || phase == RunPhase::undeliverable;
}

Result<RunJournal> RunJournal::open(fs::path dir) {
  TAKOSUMI_TRY(ensure_directory(dir, 0700));
  return RunJournal(std::move(dir));
}

void RunJournal::remove_temporaries() const {
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(dir_, ec))
    if (item.path().filename().string().find(".json.tmp") != std::string::npos)
      (void)remove_tree(item.path());
}

Status RunJournal::write(const JournalEntry& e) const {
  if (!runner::is_safe_file_name(e.run_id))
    return fail(errc::kInvalidArgument, "run id \"" + e.run_id + "\" is not a safe file name");
  json::object o{{"runId", e.run_id},         {"attempt", e.attempt},
                 {"leaseToken", e.lease_token}, {"phase", std::string(to_string(e.phase))},
                 {"manifest", e.manifest_payload}, {"note", e.note},
                 {"updatedAt", e.updated_at}};
  return write_file_atomic(dir_ / (e.run_id + ".json"), takosumi::serialize(o), 0600);
}

Status RunJournal::advance(JournalEntry& entry, RunPhase phase, std::string note,
                          std::int64_t now) const {
  entry.phase = phase;
  entry.note = std::move(note);
  entry.updated_at = now;
  return write(entry);
}

Status RunJournal::remove(std::string_view run_id) const {
  if (!runner::is_safe_file_name(run_id))
    return fail(errc::kInvalidArgument, "run id \"" + std::string(run_id) + "\" is not a safe file name");
  TAKOSUMI_TRY(remove_tree(dir_ / (std::string(run_id) + ".json")));
  return fsync_directory(dir_);
}

Result<JournalContents> RunJournal::read() const {
  JournalContents out;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(dir_, ec)) {
    const auto name = item.path().filename().string();
    if (item.path().extension() != ".json") continue;  // temporaries of an interrupted write
    auto text = read_file(item.path(), kMaxEntryBytes);
    auto entry = text ? parse_entry(*text) : Result<JournalEntry>(std::unexpected(text.error()));
    if (!entry) {
      out.unreadable.push_back(name + ": " + entry.error().to_string());
      continue;
    }
    if (entry->run_id + ".json" != name) {
      out.unreadable.push_back(name + ": names run " + entry->run_id);
      continue;
    }
    out.entries.push_back(std::move(*entry));
  }
  if (ec) return fail(errc::kIoError, "read " + dir_.string() + ": " + ec.message());
  std::ranges::sort(out.entries, {}, &JournalEntry::updated_at);
  return out;
}

}  // namespace takosumi::agent
