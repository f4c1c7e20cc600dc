// The registration proof: a signature verifies only for the exact claim it was made for.
#include "crypto/registration_proof.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"

namespace takosumi::crypto {
namespace {

class RegistrationProofTest : public ::testing::Test {
 protected:
  RegistrationClaim claim() const {
    return {"c0ffee", "worker-1", agent_.public_key, box_.public_key, std::string(64, 'a'),
            control_.public_key};
  }
  void expect_refused(const RegistrationClaim& changed, const std::string& signature) const {
    auto verified = verify_registration(changed, signature);
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().code, errc::kRegistrationSignatureInvalid);
  }

  SignKeyPair agent_ = SignKeyPair::generate();
  BoxKeyPair box_ = BoxKeyPair::generate();
  SignKeyPair control_ = SignKeyPair::generate();
};

TEST_F(RegistrationProofTest, SignatureVerifiesForTheClaimItWasMadeFor) {
  const auto signature = sign_registration(claim(), agent_);
  EXPECT_TRUE(verify_registration(claim(), signature));
}

TEST_F(RegistrationProofTest, EveryFieldIsBound) {
  const auto signature = sign_registration(claim(), agent_);
  auto c = claim();
  c.challenge = "c0ffef";
  expect_refused(c, signature);
  c = claim();
  c.name = "worker-2";
  expect_refused(c, signature);
  c = claim();
  c.box_public_key = BoxKeyPair::generate().public_key;
  expect_refused(c, signature);
  c = claim();
  c.pool_token_sha256 = std::string(64, 'b');
  expect_refused(c, signature);
  c = claim();
  c.control_signing_key = SignKeyPair::generate().public_key;
  expect_refused(c, signature);
}

TEST_F(RegistrationProofTest, OnlyTheClaimedKeysOwnerCanSign) {
  // Knowing the public key is not enough: a signature by any other key is refused.
  const auto forged = sign_registration(claim(), SignKeyPair::generate());
  expect_refused(claim(), forged);
  expect_refused(claim(), "not base64!");
  expect_refused(claim(), "AAAA");
}

TEST_F(RegistrationProofTest, FieldsAreLengthPrefixedAndDomainSeparated) {
  auto a = claim();
  auto b = claim();
  a.challenge = "ab";
  a.name = "c";
  b.challenge = "a";
  b.name = "bc";
  EXPECT_NE(registration_message(a), registration_message(b));
  EXPECT_EQ(registration_message(a).substr(4, kRegistrationDomain.size()), kRegistrationDomain);
}

}  // namespace
}  // namespace takosumi::crypto
