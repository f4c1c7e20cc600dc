#pragma once
// Log chunks of Runs (already redacted by the agent). Per attempt, `seq` starts at 0 and grows by
// one: a repeated seq is acknowledged without storing it twice; a gap is conflict naming the
// expected next seq. Past kMaxRunLogBytes per Run the text is dropped (one marker chunk says so)
// while seq keeps advancing, so an agent is never failed for talking too much.
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

inline constexpr std::int64_t kMaxRunLogBytes = 8 * 1024 * 1024;
inline constexpr std::size_t kMaxLogChunkBytes = 64 * 1024;

class RunLogStore {
 public:
  explicit RunLogStore(Database& db) : db_(db) {}

  // Returns the next expected seq after storing (or skipping) this chunk.
  Result<std::int64_t> append(std::string_view run_id, std::int64_t attempt, std::int64_t seq,
                              std::string_view text);
  Result<std::vector<LogChunk>> list(std::string_view run_id);

 private:
  Database& db_;
};

}  // namespace takosumi::controlplane
