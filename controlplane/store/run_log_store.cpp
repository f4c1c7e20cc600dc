#include "controlplane/store/run_log_store.hpp"

#include <algorithm>

#include "common/error_codes.hpp"

namespace takosumi::controlplane {
namespace {

constexpr std::string_view kTruncatedMarker = "\n[takosumi: log limit reached; further output dropped]\n";

LogChunk chunk_from_row(const Statement& s) {
  LogChunk chunk;
  ColumnReader(s) >> chunk.attempt >> chunk.seq >> chunk.text;
  return chunk;
}

}  // namespace

Result<std::int64_t> RunLogStore::append(std::string_view run_id, std::int64_t attempt,
                                         std::int64_t seq, std::string_view text) {
  if (seq < 0) return fail(errc::kInvalidArgument, "seq must not be negative");
  if (text.size() > kMaxLogChunkBytes)
    return fail(errc::kPayloadTooLarge, "log chunk exceeds 64 KiB");
  Transaction tx(db_);
  TAKOSUMI_TRY(tx.begun());
  auto s = db_.query(
      "SELECT COALESCE((SELECT MAX(seq) + 1 FROM run_logs WHERE run_id = ?1 AND attempt = ?2), 0),"
      " (SELECT log_bytes FROM runs WHERE id = ?1)",
      run_id, attempt);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (s->is_null(1)) return fail(errc::kNotFound, "run " + std::string(run_id) + " not found");
  const std::int64_t next = s->integer(0);
  const std::int64_t stored_bytes = s->integer(1);
  if (seq < next) return next;
  if (seq > next)
    return fail(errc::kConflict, "log seq " + std::to_string(seq) + " leaves a gap; nextSeq is " +
                                     std::to_string(next));
  // A module may print anything; a NUL would make the chunk unstorable (Statement::bind).
  const std::string printable = without_nul(text);
  std::string_view kept = printable;
  if (stored_bytes > kMaxRunLogBytes) {  // the marker was stored already
    kept = "";
  } else if (stored_bytes + static_cast<std::int64_t>(text.size()) > kMaxRunLogBytes) {
    kept = kTruncatedMarker;
  }
  TAKOSUMI_TRY(db_.run("INSERT INTO run_logs (run_id, attempt, seq, text) VALUES (?, ?, ?, ?)",
                       run_id, attempt, seq, kept));
  // Past the cap the counter still grows, so later chunks keep being dropped.
  TAKOSUMI_TRY(db_.run("UPDATE runs SET log_bytes = log_bytes + ? WHERE id = ?",
                       static_cast<std::int64_t>(std::max(text.size(), kept.size())), run_id));
  TAKOSUMI_TRY(tx.commit());
  return next + 1;
}

Result<std::vector<LogChunk>> RunLogStore::list(std::string_view run_id) {
  return collect(db_.query("SELECT attempt, seq, text FROM run_logs"
                           " WHERE run_id = ? AND text <> '' ORDER BY attempt, seq",
                           run_id),
                 chunk_from_row);
}

}  // namespace takosumi::controlplane
