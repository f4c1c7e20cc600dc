#pragma once
// Registration challenges (docs/protocol.md "Register"): random, single-use, short-lived, each
// bound to the pool token that asked for it. Kept in the store (only their SHA-256), so an agent
// may fetch one from one replica and register at another, and a challenge is used up exactly
// once across all of them. At most kMaxOutstanding exist at once; issuing past that drops the
// oldest, so a pool-token holder cannot grow the table, and can only make a waiting agent fetch
// again by out-issuing its round trip.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

class RegistrationChallenges {
 public:
  static constexpr std::int64_t kMaxOutstanding = 1024;
  static constexpr std::int64_t kLifetimeSeconds = 60;

  struct Issued {
    std::string challenge;  // 64 hex characters (256 random bits)
    std::int64_t expires_at = 0;
  };

  RegistrationChallenges(Database& db, const Clock& clock) : db_(db), clock_(clock) {}

  Result<Issued> issue(std::string_view pool_token_sha256);
  // Uses the challenge up, whatever the outcome. registration_challenge_invalid unless it was
  // issued for this pool token, not used before, and has not expired.
  Status redeem(std::string_view challenge, std::string_view pool_token_sha256);
  Result<std::int64_t> outstanding();

 private:
  struct Taken {
    std::string pool_token_sha256;
    std::int64_t expires_at = 0;
  };
  // Removes the challenge's row and returns what it held; none for an unknown one.
  Result<std::optional<Taken>> take(std::string_view challenge);

  Database& db_;
  const Clock& clock_;
};

}  // namespace takosumi::controlplane
