#include "common/failure_codes.hpp"
#include "protocol/signed_manifest.hpp"

#include <gtest/gtest.h>

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "crypto/signature.hpp"
#include "tests/support/fake_clock.hpp"

using takosumi::testing::FakeClock;

namespace takosumi::protocol {
namespace {

constexpr std::int64_t kNow = 1'764'469'000;

JobManifest manifest(std::string nonce = "nonce-1", std::int64_t expires_at = kNow + 900,
                               std::string agent = "agt_1") {
  JobManifest m;
  m.run_id = "run_1";
  m.attempt = 1;
  m.agent_id = std::move(agent);
  m.type = RunType::plan;
  m.workspace_id = "ws_1";
  m.capsule_id = "cap_1";
  m.source = {"file:///repo", std::string(40, 'a'), "infra"};
  m.variables = {{"region", "eu-1"}};
  m.control_public_key = crypto::BoxKeyPair::generate().public_key.to_base64();
  m.control_key_id = "k1";
  m.issued_at = kNow;
  m.expires_at = expires_at;
  m.nonce = std::move(nonce);
  return m;
}

SignedManifest sign_raw(std::string_view payload, const crypto::SignKeyPair& key) {
  return {base64_encode(payload), crypto::sign_detached(payload, key)};
}

class ManifestTest : public ::testing::Test {
 protected:
  void expect_code(const SignedManifest& s, std::string_view code) {
    auto r = verifier_.verify(s);
    ASSERT_FALSE(r) << "expected " << code;
    EXPECT_EQ(r.error().code, code) << r.error().to_string();
  }

  crypto::SignKeyPair control_ = crypto::SignKeyPair::generate();
  FakeClock clock_{kNow};
  ManifestVerifier verifier_{control_.public_key, "agt_1", clock_};
};

TEST_F(ManifestTest, ValidManifestPassesWithItsContent) {
  auto r = verifier_.verify(sign_manifest(manifest(), control_));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->run_id, "run_1");
  EXPECT_EQ(r->agent_id, "agt_1");
  EXPECT_EQ(r->source.module_path, "infra");
  EXPECT_EQ(r->variables.at("region"), "eu-1");
  EXPECT_EQ(r->expires_at, kNow + 900);
}

TEST_F(ManifestTest, PayloadIsTheSerializedManifestJson) {
  auto m = manifest();
  auto s = sign_manifest(m, control_);
  auto payload = base64_decode(s.payload);
  ASSERT_TRUE(payload);
  EXPECT_EQ(std::string(as_chars(*payload)), serialize(to_json(m)));
}

TEST_F(ManifestTest, SignedByAnotherKeyIsBadSignature) {
  expect_code(sign_manifest(manifest(), crypto::SignKeyPair::generate()), errc::kManifestBadSignature);
}

TEST_F(ManifestTest, PayloadAlteredAfterSigningIsBadSignature) {
  auto s = sign_manifest(manifest(), control_);
  auto payload = base64_decode(s.payload);
  ASSERT_TRUE(payload);
  std::string text(as_chars(*payload));
  auto at = text.find("agt_1");
  ASSERT_NE(at, std::string::npos);
  text[at + 4] = '2';  // still valid JSON, now addressed to agt_2
  s.payload = base64_encode(text);
  expect_code(s, errc::kManifestBadSignature);
}

TEST_F(ManifestTest, MalformedSignatureOrPayloadEncodingIsBadSignature) {
  auto s = sign_manifest(manifest(), control_);
  auto short_sig = s;
  short_sig.signature = base64_encode(std::string(63, 's'));
  expect_code(short_sig, errc::kManifestBadSignature);
  auto not_base64 = s;
  not_base64.payload = "%%%";
  expect_code(not_base64, errc::kManifestBadSignature);
}

TEST_F(ManifestTest, SignedButInvalidManifestIsInvalid) {
  expect_code(sign_raw("not json", control_), errc::kManifestInvalid);
  expect_code(sign_raw(R"({"runId":"run_1"})", control_), errc::kManifestInvalid);
  expect_code(sign_raw(std::string(1024 * 1024 + 1, ' '), control_), errc::kManifestInvalid);
}

// A signed payload that readers may understand in two ways (first or last "agentId") is refused,
// even though its signature verifies.
TEST_F(ManifestTest, SignedManifestWithADuplicateKeyIsInvalid) {
  const std::string text = serialize(to_json(manifest()));
  ASSERT_EQ(text.front(), '{');
  const std::string doubled = R"({"agentId":"agt_2",)" + text.substr(1);
  auto r = verifier_.verify(sign_raw(doubled, control_));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::kManifestInvalid);
  EXPECT_NE(r.error().message.find("duplicate key \"agentId\""), std::string::npos)
      << r.error().message;
}

TEST_F(ManifestTest, ExpiresAtExpiresAt) {
  auto s = sign_manifest(manifest("n", kNow + 10), control_);
  clock_.advance(10);
  expect_code(s, errc::kManifestExpired);
  FakeClock earlier{kNow + 9};
  ManifestVerifier fresh{control_.public_key, "agt_1", earlier};
  EXPECT_TRUE(fresh.verify(s)) << "one second before expiry is still valid";
}

TEST_F(ManifestTest, OtherAgentIsWrongAgent) {
  expect_code(sign_manifest(manifest("n", kNow + 900, "agt_2"), control_),
              errc::kManifestWrongAgent);
}

TEST_F(ManifestTest, ChecksRunInTheDocumentedOrder) {
  // Expired and for another agent: expiry is reported. Other key and expired: signature.
  auto both = sign_manifest(manifest("n", kNow, "agt_2"), control_);
  expect_code(both, errc::kManifestExpired);
  expect_code(sign_manifest(manifest("n", kNow), crypto::SignKeyPair::generate()),
              errc::kManifestBadSignature);
}

TEST_F(ManifestTest, SameManifestTwiceIsReplayed) {
  auto s = sign_manifest(manifest(), control_);
  ASSERT_TRUE(verifier_.verify(s));
  expect_code(s, errc::kManifestReplayed);
  // A different manifest reusing the nonce is a replay too.
  auto m = manifest();
  m.run_id = "run_2";
  expect_code(sign_manifest(m, control_), errc::kManifestReplayed);
}

TEST_F(ManifestTest, RefusedManifestsDoNotBurnTheirNonce) {
  ASSERT_FALSE(verifier_.verify(sign_manifest(manifest("n", kNow + 900, "agt_2"), control_)));
  EXPECT_TRUE(verifier_.verify(sign_manifest(manifest("n"), control_)));
}

TEST_F(ManifestTest, NonceIsForgottenOnceItsManifestExpired) {
  ASSERT_TRUE(verifier_.verify(sign_manifest(manifest("n", kNow + 60), control_)));
  clock_.advance(60);
  // The old manifest is now refused as expired, so the nonce need not be remembered: a new
  // manifest reusing it is judged on its own.
  expect_code(sign_manifest(manifest("n", kNow + 60), control_), errc::kManifestExpired);
  EXPECT_TRUE(verifier_.verify(sign_manifest(manifest("n", kNow + 600), control_)));
  expect_code(sign_manifest(manifest("n", kNow + 600), control_), errc::kManifestReplayed);
}

}  // namespace
}  // namespace takosumi::protocol
