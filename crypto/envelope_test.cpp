#include "crypto/envelope.hpp"

#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <filesystem>

#include "common/error_codes.hpp"
#include "crypto/crypto_test_support.hpp"
#include "crypto/sealed_box.hpp"
#include "crypto/sha256.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::crypto {
namespace {

namespace fs = std::filesystem;
using test_support::read_bytes;
using test_support::write_bytes;
using takosumi::testing::TempDir;

constexpr std::size_t kFullChunk = kChunkSize + crypto_secretstream_xchacha20poly1305_ABYTES;
constexpr std::size_t kStreamHeader = crypto_secretstream_xchacha20poly1305_HEADERBYTES;
const std::size_t kMultiChunk = 1024 * 1024 + 17;

EnvelopeHeader state_header() {
  return EnvelopeHeader{.kind = "state", .capsule_id = "cap_1", .run_id = "run_1",
                        .generation = 3, .lineage = "lineage-abc", .serial = 7,
                        .key_id = "k1"};
}

EnvelopeExpectation state_expectation() {
  return EnvelopeExpectation{.kind = "state", .capsule_id = "cap_1", .generation = 3};
}

std::string header_json_for(const std::string& content, std::int64_t claimed_size) {
  return R"({"kind":"state","capsuleId":"cap_1","runId":"run_1","generation":3,)"
         R"("lineage":"lineage-abc","serial":7,"plaintextSize":)" +
         std::to_string(claimed_size) + R"(,"plaintextSha256":")" + sha256_hex(content) +
         R"(","keyId":"k1"})";
}

// Builds an envelope from the layout documented in envelope.hpp alone, independent of
// encrypt_file, so the reader is checked against the documentation and a DEK holder's forgeries.
std::string build_envelope(const std::string& header_json, const BoxPublicKey& to,
                           const SecretBytes& dek, const std::string& content) {
  std::string out = "TKSENV01";
  for (int shift : {24, 16, 8, 0}) out += static_cast<char>((header_json.size() >> shift) & 0xff);
  out += header_json;
  const auto sealed = seal(dek.span(), to);
  out += static_cast<char>(sealed.size() >> 8);
  out += static_cast<char>(sealed.size() & 0xff);
  out.append(sealed.begin(), sealed.end());
  crypto_secretstream_xchacha20poly1305_state st;
  std::uint8_t stream_header[kStreamHeader];
  crypto_secretstream_xchacha20poly1305_init_push(&st, stream_header, dek.data());
  out.append(std::begin(stream_header), std::end(stream_header));
  for (std::size_t at = 0;; at += kChunkSize) {
    const std::size_t len = std::min(kChunkSize, content.size() - at);
    const bool last = len < kChunkSize;
    std::vector<std::uint8_t> chunk(len + crypto_secretstream_xchacha20poly1305_ABYTES);
    crypto_secretstream_xchacha20poly1305_push(
        &st, chunk.data(), nullptr, reinterpret_cast<const std::uint8_t*>(content.data() + at),
        len, reinterpret_cast<const std::uint8_t*>(header_json.data()), header_json.size(),
        last ? crypto_secretstream_xchacha20poly1305_TAG_FINAL
             : crypto_secretstream_xchacha20poly1305_TAG_MESSAGE);
    out.append(chunk.begin(), chunk.end());
    if (last) return out;
  }
}

// One directory holding "plain" and "env"; a failed decrypt must leave exactly these two.
class EnvelopeTest : public ::testing::Test {
 protected:
  Result<EnvelopeHeader> encrypt(const std::string& content) {
    write_bytes(plain_, content);
    auto written = encrypt_file(plain_, env_, state_header(), control_.public_key);
    if (!written) return std::unexpected(written.error());
    // The digest computed while writing is the file's, whatever its size.
    EXPECT_EQ(written->sha256, *sha256_file_hex(env_));
    return written->header;
  }

  // The agent's path: read the prefix, open the DEK, decrypt into out_.
  Result<EnvelopeHeader> decrypt(const BoxKeyPair& keys,
                                 const EnvelopeExpectation& expect = state_expectation()) {
    auto prefix = read_envelope_prefix(env_);
    if (!prefix) return std::unexpected(prefix.error());
    auto dek = open_envelope_dek(*prefix, keys);
    if (!dek) return std::unexpected(dek.error());
    return decrypt_file(env_, out_, *dek, expect);
  }
  Result<EnvelopeHeader> decrypt() { return decrypt(control_); }

  void expect_clean_failure(const Result<EnvelopeHeader>& r, std::string_view code) {
    ASSERT_FALSE(r) << "expected " << code;
    EXPECT_EQ(r.error().code, code) << r.error().to_string();
    EXPECT_EQ(dir_.entries(), (std::set<std::string>{"plain", "env"}))
        << "no output and no temporary file may remain";
  }

  void flip_byte(std::size_t at) {
    std::string bytes = read_bytes(env_);
    ASSERT_LT(at, bytes.size());
    bytes[at] = static_cast<char>(bytes[at] ^ 0x01);
    write_bytes(env_, bytes);
  }

  void cut_to(std::size_t size) {
    std::string bytes = read_bytes(env_);
    ASSERT_LT(size, bytes.size());
    write_bytes(env_, bytes.substr(0, size));
  }

  std::size_t payload_offset() {
    auto prefix = read_envelope_prefix(env_);
    EXPECT_TRUE(prefix) << prefix.error().to_string();
    return prefix ? prefix->payload_offset : 0;
  }
  std::size_t first_chunk_at() { return payload_offset() + kStreamHeader; }

  TempDir dir_;
  fs::path plain_ = dir_ / "plain";
  fs::path env_ = dir_ / "env";
  fs::path out_ = dir_ / "out";
  BoxKeyPair control_ = BoxKeyPair::generate();
};

class EnvelopeRoundTrip : public EnvelopeTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(EnvelopeRoundTrip, DecryptsToTheSameBytesWithTheDocumentedFraming) {
  const std::string content = test_support::pattern_bytes(GetParam());
  auto written = encrypt(content);
  ASSERT_TRUE(written) << written.error().to_string();
  EXPECT_EQ(written->plaintext_sha256, sha256_hex(content));
  EXPECT_EQ(written->plaintext_size, static_cast<std::int64_t>(content.size()));
  EXPECT_EQ(test_support::mode_of(env_), 0600u);
  // Full chunks, then a final chunk shorter than kChunkSize (empty when the size is a multiple).
  const std::size_t chunks = content.size() / kChunkSize + 1;
  EXPECT_EQ(fs::file_size(env_), first_chunk_at() + content.size() +
                                     chunks * crypto_secretstream_xchacha20poly1305_ABYTES);

  auto prefix = read_envelope_prefix(env_);
  ASSERT_TRUE(prefix);
  EXPECT_EQ(expected_envelope_size(*prefix), fs::file_size(env_));

  auto expect = state_expectation();
  expect.plaintext_sha256 = sha256_hex(content);
  auto read = decrypt(control_, expect);
  ASSERT_TRUE(read) << read.error().to_string();
  EXPECT_EQ(read_bytes(out_), content);
  EXPECT_EQ(test_support::mode_of(out_), 0600u);
  EXPECT_EQ(read->capsule_id, "cap_1");
  EXPECT_EQ(read->lineage, "lineage-abc");
  EXPECT_EQ(read->serial, 7);
  EXPECT_EQ(read->plaintext_sha256, written->plaintext_sha256);
  EXPECT_EQ(dir_.entries(), (std::set<std::string>{"plain", "env", "out"}));
}

INSTANTIATE_TEST_SUITE_P(Sizes, EnvelopeRoundTrip,
                         ::testing::Values(0, 1, kChunkSize - 1, kChunkSize, kChunkSize + 1,
                                           kMultiChunk,
                                           // read twice past the 4 MiB encrypted from memory
                                           4 * 1024 * 1024, 4 * 1024 * 1024 + 1));

TEST_F(EnvelopeTest, HeaderIsCanonicalJsonInFixedOrder) {
  ASSERT_TRUE(encrypt("x"));
  auto prefix = read_envelope_prefix(env_);
  ASSERT_TRUE(prefix) << prefix.error().to_string();
  EXPECT_EQ(prefix->header_json,
            R"({"kind":"state","capsuleId":"cap_1","runId":"run_1","generation":3,)"
            R"("lineage":"lineage-abc","serial":7,"plaintextSize":1,"plaintextSha256":")" +
                sha256_hex("x") + R"(","keyId":"k1"})");
  EXPECT_EQ(prefix->sealed_dek.size(), crypto_box_SEALBYTES + 32u);
  EXPECT_EQ(read_bytes(env_).substr(0, 8), "TKSENV01");
  EXPECT_EQ(prefix->payload_offset, 8 + 4 + prefix->header_json.size() + 2 + 80);
}

TEST_F(EnvelopeTest, TruncatedInTheMiddleOfAChunk) {
  ASSERT_TRUE(encrypt(test_support::pattern_bytes(kMultiChunk)));
  cut_to(first_chunk_at() + 3 * kFullChunk + 1000);
  expect_clean_failure(decrypt(), errc::kEnvelopeTruncated);
}

TEST_F(EnvelopeTest, TruncatedExactlyAtAChunkBoundary) {
  ASSERT_TRUE(encrypt(test_support::pattern_bytes(kMultiChunk)));
  cut_to(first_chunk_at() + 2 * kFullChunk);
  expect_clean_failure(decrypt(), errc::kEnvelopeTruncated);
}

TEST_F(EnvelopeTest, TruncatedInsideTheFinalChunkOrBeforeTheFirst) {
  ASSERT_TRUE(encrypt(test_support::pattern_bytes(100)));
  const std::size_t full = fs::file_size(env_);
  cut_to(full - 1);
  expect_clean_failure(decrypt(), errc::kEnvelopeTruncated);
  cut_to(first_chunk_at());
  expect_clean_failure(decrypt(), errc::kEnvelopeTruncated);
  cut_to(first_chunk_at() - 5);  // inside the secretstream header
  expect_clean_failure(decrypt(), errc::kEnvelopeTruncated);
  cut_to(20);  // inside the header JSON
  expect_clean_failure(decrypt(), errc::kEnvelopeTruncated);
}

TEST_F(EnvelopeTest, FlippedByteInAChunkIsTampered) {
  ASSERT_TRUE(encrypt(test_support::pattern_bytes(kMultiChunk)));
  flip_byte(first_chunk_at() + 5 * kFullChunk + 123);
  expect_clean_failure(decrypt(), errc::kEnvelopeTampered);
}

TEST_F(EnvelopeTest, FlippedByteInTheOnlyShortChunkIsTamperedNotTruncated) {
  ASSERT_TRUE(encrypt("a"));
  flip_byte(fs::file_size(env_) - 1);
  expect_clean_failure(decrypt(), errc::kEnvelopeTampered);
}

TEST_F(EnvelopeTest, FlippedByteInTheHeaderIsTampered) {
  ASSERT_TRUE(encrypt(test_support::pattern_bytes(kMultiChunk)));
  // Inside the lineage value, so the JSON stays valid and the expectation still matches: only
  // the AAD check can catch it.
  const std::size_t at = read_bytes(env_).find("lineage-abc");
  ASSERT_NE(at, std::string::npos);
  flip_byte(at + 3);
  expect_clean_failure(decrypt(), errc::kEnvelopeTampered);
}

TEST_F(EnvelopeTest, FlippedByteInTheSealedDekDoesNotOpen) {
  ASSERT_TRUE(encrypt("state"));
  flip_byte(payload_offset() - 10);
  expect_clean_failure(decrypt(), errc::kEnvelopeWrongKey);
}

TEST_F(EnvelopeTest, TrailingBytesAreTampered) {
  ASSERT_TRUE(encrypt(test_support::pattern_bytes(kChunkSize)));
  write_bytes(env_, read_bytes(env_) + "x");
  expect_clean_failure(decrypt(), errc::kEnvelopeTampered);
  write_bytes(env_, read_bytes(env_) + std::string(kFullChunk, 'y'));
  expect_clean_failure(decrypt(), errc::kEnvelopeTampered);
}

TEST_F(EnvelopeTest, WrongKeyCannotOpenTheDek) {
  ASSERT_TRUE(encrypt("state"));
  expect_clean_failure(decrypt(BoxKeyPair::generate()), errc::kEnvelopeWrongKey);
}

TEST_F(EnvelopeTest, WrongDekFailsAuthentication) {
  ASSERT_TRUE(encrypt("state"));
  SecretBytes other(32);
  randombytes_buf(other.data(), other.size());
  expect_clean_failure(decrypt_file(env_, out_, other, state_expectation()),
                       errc::kEnvelopeTampered);
}

TEST_F(EnvelopeTest, HeaderMismatchIsRefusedBeforeWritingAnything) {
  const std::string content = test_support::pattern_bytes(kMultiChunk);
  ASSERT_TRUE(encrypt(content));
  auto other_capsule = state_expectation();
  other_capsule.capsule_id = "cap_2";
  auto other_generation = state_expectation();
  other_generation.generation = 4;
  auto other_digest = state_expectation();
  other_digest.plaintext_sha256 = sha256_hex("something else");
  auto other_kind = state_expectation();
  other_kind.kind = "plan";
  for (const auto& expect : {other_capsule, other_generation, other_digest, other_kind}) {
    auto r = decrypt(control_, expect);
    expect_clean_failure(r, errc::kEnvelopeHeaderMismatch);
  }
  auto r = decrypt(control_, other_generation);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("generation is 3 but 4"), std::string::npos)
      << r.error().message;
}

TEST_F(EnvelopeTest, FailedDecryptLeavesAnExistingOutputUntouched) {
  ASSERT_TRUE(encrypt(test_support::pattern_bytes(kMultiChunk)));
  flip_byte(fs::file_size(env_) - 3);
  write_bytes(out_, "previous");
  auto r = decrypt();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::kEnvelopeTampered);
  EXPECT_EQ(read_bytes(out_), "previous");
  EXPECT_EQ(dir_.entries(), (std::set<std::string>{"plain", "env", "out"}));
}

TEST_F(EnvelopeTest, ControlPlaneReSealsTheDekForTheAgent) {
  ASSERT_TRUE(encrypt("terraform state"));
  auto agent = BoxKeyPair::generate();
  auto prefix = read_envelope_prefix(env_);
  ASSERT_TRUE(prefix);
  auto dek = open_envelope_dek(*prefix, control_);
  ASSERT_TRUE(dek) << dek.error().to_string();
  auto for_agent = open_sealed(seal(dek->span(), agent.public_key), agent);
  ASSERT_TRUE(for_agent);
  ASSERT_TRUE(decrypt_file(env_, out_, *for_agent, state_expectation()));
  EXPECT_EQ(read_bytes(out_), "terraform state");
  EXPECT_EQ(open_sealed(seal(dek->span(), agent.public_key), control_).error().code,
            errc::kEnvelopeWrongKey);
}

TEST_F(EnvelopeTest, EncryptFailuresWriteNothing) {
  write_bytes(plain_, "x");
  auto bad_kind = state_header();
  bad_kind.kind = "secrets";
  auto r = encrypt_file(plain_, env_, bad_kind, control_.public_key);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::kInvalidArgument);
  EXPECT_EQ(encrypt_file(dir_ / "absent", env_, state_header(), control_.public_key).error().code,
            errc::kNotFound);
  EXPECT_EQ(dir_.entries(), std::set<std::string>{"plain"});
}

TEST_F(EnvelopeTest, EnvelopeBuiltFromTheDocumentedLayoutDecrypts) {
  const std::string content = test_support::pattern_bytes(2 * kChunkSize + 5);
  SecretBytes dek(32);
  randombytes_buf(dek.data(), dek.size());
  write_bytes(plain_, content);
  write_bytes(env_, build_envelope(header_json_for(content, static_cast<std::int64_t>(
                                                              content.size())),
                                   control_.public_key, dek, content));
  auto r = decrypt();
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(read_bytes(out_), content);
}

TEST_F(EnvelopeTest, AuthenticContentThatContradictsTheHeaderIsTampered) {
  // Only a DEK holder can do this (a buggy or hostile writer); the reader still refuses it.
  SecretBytes dek(32);
  randombytes_buf(dek.data(), dek.size());
  write_bytes(plain_, "");
  write_bytes(env_, build_envelope(header_json_for("other content", 1), control_.public_key, dek,
                                   "x"));
  expect_clean_failure(decrypt(), errc::kEnvelopeTampered);
  write_bytes(env_, build_envelope(header_json_for("x", 2), control_.public_key, dek, "x"));
  expect_clean_failure(decrypt(), errc::kEnvelopeTampered);
}

TEST(EnvelopePrefix, MalformedFraming) {
  EXPECT_EQ(parse_envelope_prefix("NOTANENV....").error().code, errc::kEnvelopeMalformed);
  EXPECT_EQ(parse_envelope_prefix("TKSE").error().code, errc::kEnvelopeTruncated);
  std::string huge_header = std::string("TKSENV01") + std::string("\x00\x01\x00\x00", 4);
  EXPECT_EQ(parse_envelope_prefix(huge_header).error().code, errc::kEnvelopeMalformed);
  // Valid framing, but the header JSON is not canonical (extra space).
  const std::string json = R"({ "kind":"state"})";
  std::string framed = "TKSENV01" + std::string("\x00\x00\x00", 3) +
                       static_cast<char>(json.size()) + json + std::string("\x00\x50", 2) +
                       std::string(80, 'd');
  EXPECT_EQ(parse_envelope_prefix(framed).error().code, errc::kEnvelopeMalformed);
}

}  // namespace
}  // namespace takosumi::crypto
