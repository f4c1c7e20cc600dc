#include "agent/durable/recover_command.hpp"

#include "common/clock.hpp"

#include "agent/durable/run_journal.hpp"
#include "agent/durable/run_spool.hpp"
#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "crypto/envelope.hpp"

namespace takosumi::agent {
namespace {

namespace fs = std::filesystem;

void describe_spool(const fs::path& dir, std::ostream& out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    out << "  spool: none\n";
    return;
  }
  out << "  spool: " << dir.string() << "\n";
  for (const auto& item : fs::directory_iterator(dir, ec)) {
    if (!item.is_regular_file(ec)) continue;
    const auto name = item.path().filename().string();
    out << "    " << name << " (" << item.file_size(ec) << " bytes)";
    // The header alone: a listing need not hash whole states.
    if (name.ends_with(".env"))
      if (auto prefix = crypto::read_envelope_prefix(item.path());
          prefix && prefix->header.kind == "state")
        out << ", state serial " << prefix->header.serial << ", lineage "
            << prefix->header.lineage;
    out << "\n";
  }
}

}  // namespace

Status print_recovery_listing(const fs::path& state_dir, const fs::path& work_dir,
                              std::ostream& out) {
  auto journal = RunJournal::open(state_dir / "runs");
  if (!journal) return std::unexpected(journal.error());
  auto contents = journal->read();
  if (!contents) return std::unexpected(contents.error());
  const RunSpool spool(state_dir / "spool");
  if (contents->entries.empty() && contents->unreadable.empty())
    out << "the run journal is empty: nothing to recover\n";
  for (const auto& e : contents->entries) {
    out << "run " << e.run_id << " attempt " << e.attempt << ": " << to_string(e.phase)
        << " since " << utc_timestamp(e.updated_at)
        << (is_held_for_operator(e.phase) ? " (held for the operator)" : " (recovered on start)")
        << "\n";
    if (!e.note.empty()) out << "  note: " << e.note << "\n";
    const fs::path ws = work_dir / (e.run_id + "-" + std::to_string(e.attempt));
    std::error_code ec;
    out << "  workspace: " << (fs::is_directory(ws, ec) ? ws.string() : "gone") << "\n";
    describe_spool(spool.dir(e.run_id, e.attempt), out);
  }
  for (const auto& bad : contents->unreadable) out << "unreadable journal file: " << bad << "\n";
  return {};
}

Status discard_journaled_run(const fs::path& state_dir, std::string_view run_id) {
  auto journal = RunJournal::open(state_dir / "runs");
  if (!journal) return std::unexpected(journal.error());
  auto contents = journal->read();
  if (!contents) return std::unexpected(contents.error());
  const RunSpool spool(state_dir / "spool");
  for (const auto& e : contents->entries) {
    if (e.run_id != run_id) continue;
    TAKOSUMI_TRY(spool.remove(e.run_id, e.attempt));
    return journal->remove(e.run_id);
  }
  return fail(errc::kNotFound, "the run journal holds no run " + std::string(run_id));
}

Result<FileLock> lock_state_dir(const fs::path& state_dir) {
  TAKOSUMI_TRY(ensure_directory(state_dir, 0700));
  auto lock = FileLock::try_acquire(state_dir / "agent.lock");
  if (!lock && lock.error().code == errc::kConflict)
    return fail(errc::kConflict, "another takosumi-agent uses the state directory " +
                                     state_dir.string() + "; stop it first");
  return lock;
}

}  // namespace takosumi::agent
