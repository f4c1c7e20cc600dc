#include "controlplane/api/registration_challenges.hpp"

#include "common/error_codes.hpp"
#include "crypto/random_ids.hpp"

namespace takosumi::controlplane {
namespace {

std::string fetch_again() {
  return "; fetch a new one (POST /agent/v1/register/challenge) and register within " +
         std::to_string(RegistrationChallenges::kLifetimeSeconds) + " seconds";
}

}  // namespace

RegistrationChallenges::Issued RegistrationChallenges::issue(std::string pool_token_sha256) {
  const std::int64_t now = clock_.now_unix();
  forget_expired(now);
  while (by_challenge_.size() >= kMaxOutstanding)
    forget(by_challenge_.find(by_serial_.begin()->second));
  Issued issued{crypto::new_token(), now + kLifetimeSeconds};
  const std::uint64_t serial = next_serial_++;
  by_challenge_.emplace(issued.challenge,
                        Entry{std::move(pool_token_sha256), issued.expires_at, serial});
  by_serial_.emplace(serial, issued.challenge);
  return issued;
}

Status RegistrationChallenges::redeem(std::string_view challenge,
                                      std::string_view pool_token_sha256) {
  auto it = by_challenge_.find(challenge);
  if (it == by_challenge_.end())
    return fail(errc::kRegistrationChallengeInvalid,
                "registration challenge is unknown or was already used" + fetch_again());
  const Entry entry = it->second;
  forget(it);
  if (clock_.now_unix() >= entry.expires_at)
    return fail(errc::kRegistrationChallengeInvalid,
                "registration challenge expired at " + std::to_string(entry.expires_at) +
                    fetch_again());
  if (entry.pool_token_sha256 != pool_token_sha256)
    return fail(errc::kRegistrationChallengeInvalid,
                "registration challenge was issued for another pool token" + fetch_again());
  return {};
}

void RegistrationChallenges::forget(std::map<std::string, Entry, std::less<>>::iterator it) {
  by_serial_.erase(it->second.serial);
  by_challenge_.erase(it);
}

void RegistrationChallenges::forget_expired(std::int64_t now) {
  while (!by_serial_.empty()) {
    auto oldest = by_challenge_.find(by_serial_.begin()->second);
    if (oldest->second.expires_at > now) return;
    forget(oldest);
  }
}

}  // namespace takosumi::controlplane
