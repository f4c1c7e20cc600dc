#include "controlplane/store/registration_challenges.hpp"

#include "common/clock.hpp"
#include "common/error_codes.hpp"
#include "crypto/random_ids.hpp"
#include "crypto/sha256.hpp"

namespace takosumi::controlplane {
namespace {

std::string fetch_again() {
  return "; fetch a new one (POST /agent/v1/register/challenge) and register within " +
         std::to_string(RegistrationChallenges::kLifetimeSeconds) + " seconds";
}

}  // namespace

Result<RegistrationChallenges::Issued> RegistrationChallenges::issue(
    std::string_view pool_token_sha256) {
  const std::int64_t now = clock_.now_unix();
  Issued issued{crypto::new_token(), now + kLifetimeSeconds};
  TAKOSUMI_TRY(in_transaction(db_, [&]() -> Status {
    // Expired ones go first, then the oldest past the bound.
    TAKOSUMI_TRY(db_.run("DELETE FROM registration_challenges WHERE expires_at <= ?", now));
    auto count = db_.single_integer("SELECT count(*) FROM registration_challenges");
    if (!count) return std::unexpected(count.error());
    if (*count >= kMaxOutstanding)
      TAKOSUMI_TRY(db_.run("DELETE FROM registration_challenges WHERE rowid IN (SELECT rowid FROM"
                           " registration_challenges ORDER BY rowid LIMIT ?)",
                           *count - kMaxOutstanding + 1));
    return db_.run("INSERT INTO registration_challenges (challenge_sha256, pool_token_sha256,"
                   " expires_at) VALUES (?, ?, ?)",
                   crypto::sha256_hex(issued.challenge), pool_token_sha256, issued.expires_at);
  }));
  return issued;
}

// The challenge is taken out of the store in one transaction, and only then judged: a refused
// one is used up as well.
Status RegistrationChallenges::redeem(std::string_view challenge,
                                      std::string_view pool_token_sha256) {
  auto taken = in_transaction(db_, [&] { return take(challenge); });
  if (!taken) return std::unexpected(taken.error());
  if (!*taken)
    return fail(errc::kRegistrationChallengeInvalid,
                "registration challenge is unknown or was already used" + fetch_again());
  if (clock_.now_unix() >= (*taken)->expires_at)
    return fail(errc::kRegistrationChallengeInvalid,
                "registration challenge expired at " + utc_timestamp((*taken)->expires_at) +
                    fetch_again());
  if ((*taken)->pool_token_sha256 != pool_token_sha256)
    return fail(errc::kRegistrationChallengeInvalid,
                "registration challenge was issued for another pool token" + fetch_again());
  return {};
}

Result<std::optional<RegistrationChallenges::Taken>> RegistrationChallenges::take(
    std::string_view challenge) {
  const std::string key = crypto::sha256_hex(challenge);
  auto s = db_.query("SELECT pool_token_sha256, expires_at FROM registration_challenges"
                     " WHERE challenge_sha256 = ?",
                     key);
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<Taken>();
  Taken taken;
  ColumnReader(*s) >> taken.pool_token_sha256 >> taken.expires_at;
  TAKOSUMI_TRY(db_.run("DELETE FROM registration_challenges WHERE challenge_sha256 = ?", key));
  return std::optional<Taken>(std::move(taken));
}

Result<std::int64_t> RegistrationChallenges::outstanding() {
  return db_.single_integer("SELECT count(*) FROM registration_challenges");
}

}  // namespace takosumi::controlplane
