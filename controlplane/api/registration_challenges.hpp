#pragma once
// Registration challenges (docs/protocol.md "Register"): random, single-use, short-lived, each
// bound to the pool token that asked for it. Held in memory only: a restart forgets them and an
// agent simply fetches another. At most kMaxOutstanding exist at once; issuing past that drops the
// oldest, so a pool-token holder cannot grow memory, and can only make a waiting agent fetch again
// by out-issuing its round trip. Not thread-safe: the server's io thread owns it.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "common/clock.hpp"
#include "common/error.hpp"

namespace takosumi::controlplane {

class RegistrationChallenges {
 public:
  static constexpr std::size_t kMaxOutstanding = 1024;
  static constexpr std::int64_t kLifetimeSeconds = 60;

  struct Issued {
    std::string challenge;  // 64 hex characters (256 random bits)
    std::int64_t expires_at = 0;
  };

  explicit RegistrationChallenges(const Clock& clock) : clock_(clock) {}

  Issued issue(std::string pool_token_sha256);
  // Uses the challenge up, whatever the outcome. registration_challenge_invalid unless it was
  // issued for this pool token, not used before, and has not expired.
  Status redeem(std::string_view challenge, std::string_view pool_token_sha256);
  std::size_t outstanding() const { return by_challenge_.size(); }

 private:
  struct Entry {
    std::string pool_token_sha256;
    std::int64_t expires_at = 0;
    std::uint64_t serial = 0;
  };
  void forget(std::map<std::string, Entry, std::less<>>::iterator it);
  void forget_expired(std::int64_t now);

  const Clock& clock_;
  std::map<std::string, Entry, std::less<>> by_challenge_;
  std::map<std::uint64_t, std::string> by_serial_;  // issue order: expiry order while the
                                                    // clock does not step back
  std::uint64_t next_serial_ = 0;
};

}  // namespace takosumi::controlplane
