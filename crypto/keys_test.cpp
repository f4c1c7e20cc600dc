#include "crypto/keys.hpp"

#include <gtest/gtest.h>
#include <sodium.h>

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "crypto/crypto_test_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::crypto {
namespace {

namespace fs = std::filesystem;
using test_support::mode_of;
using test_support::read_bytes;
using test_support::write_bytes;
using takosumi::testing::TempDir;

std::string key_file_text(std::string_view algorithm, std::size_t bytes) {
  return "takosumi-key v1 " + std::string(algorithm) + "\n" +
         base64_encode(std::string(bytes, '\x07')) + "\n";
}

TEST(KeyFiles, BoxKeyIsCreated0600InTheDocumentedFormatAndReloaded) {
  TempDir dir;
  const auto path = dir / "keys/box.key";  // parent is created too
  auto created = load_or_create_box_key(path);
  ASSERT_TRUE(created) << created.error().to_string();
  EXPECT_EQ(mode_of(path), 0600u);
  EXPECT_EQ(dir.entries(), std::set<std::string>{"keys"});
  EXPECT_EQ(fs::directory_iterator(dir / "keys")->path().filename(), "box.key");  // no temp left

  const std::string text = read_bytes(path);
  ASSERT_TRUE(text.starts_with("takosumi-key v1 x25519\n"));
  auto secret = base64_decode(text.substr(23, text.size() - 24));
  ASSERT_TRUE(secret);
  EXPECT_EQ(secret->size(), 32u);
  EXPECT_EQ(text.back(), '\n');

  auto loaded = load_or_create_box_key(path);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->public_key.bytes, created->public_key.bytes);
  EXPECT_EQ(std::vector(loaded->secret_key.span().begin(), loaded->secret_key.span().end()),
            *secret);
}

TEST(KeyFiles, SignKeyStoresTheSeedAndReloadsAWorkingKeyPair) {
  TempDir dir;
  const auto path = dir / "sign.key";
  auto created = load_or_create_sign_key(path);
  ASSERT_TRUE(created) << created.error().to_string();
  EXPECT_EQ(mode_of(path), 0600u);
  EXPECT_TRUE(read_bytes(path).starts_with("takosumi-key v1 ed25519\n"));
  EXPECT_EQ(read_bytes(path).size(), 24u + 44u + 1u);  // header, base64 of 32 bytes, newline

  auto loaded = load_sign_key(path);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->public_key.bytes, created->public_key.bytes);
  ASSERT_EQ(loaded->secret_key.size(), 64u);
  const std::string msg = "hello";
  std::uint8_t sig[crypto_sign_BYTES];
  crypto_sign_detached(sig, nullptr, as_bytes(msg).data(), msg.size(), loaded->secret_key.data());
  EXPECT_EQ(crypto_sign_verify_detached(sig, as_bytes(msg).data(), msg.size(),
                                        created->public_key.bytes.data()),
            0);
}

TEST(KeyFiles, GroupOrWorldAccessIsRefusedWithTheFix) {
  TempDir dir;
  const auto path = dir / "box.key";
  ASSERT_TRUE(load_or_create_box_key(path));
  for (auto mode : {fs::perms(0644), fs::perms(0640), fs::perms(0602)}) {
    fs::permissions(path, mode);
    auto loaded = load_box_key(path);
    ASSERT_FALSE(loaded);
    EXPECT_EQ(loaded.error().code, errc::kKeyFileInsecure);
    EXPECT_NE(loaded.error().message.find("chmod 600 " + path.string()), std::string::npos)
        << loaded.error().message;
  }
  // load_or_create must not "repair" an insecure key by replacing it.
  const std::string before = read_bytes(path);
  auto again = load_or_create_box_key(path);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, errc::kKeyFileInsecure);
  EXPECT_EQ(read_bytes(path), before);
}

TEST(KeyFiles, MissingKeyIsNotFound) {
  TempDir dir;
  auto loaded = load_sign_key(dir / "absent.key");
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code, errc::kNotFound);
}

TEST(KeyFiles, MalformedContentIsKeyFileInvalid) {
  TempDir dir;
  const auto path = dir / "bad.key";
  const std::string cases[] = {
      "takosumi-key v2 x25519\n" + base64_encode(std::string(32, 'k')) + "\n",  // header
      key_file_text("ed25519", 32),                                             // algorithm
      key_file_text("x25519", 31),                                              // length
      key_file_text("x25519", 33),                                              // length
      "takosumi-key v1 x25519\n!!!not base64!!!\n",                             // base64
      "takosumi-key v1 x25519\n" + base64_encode(std::string(32, 'k')) + "\n\n",  // junk
      "",
  };
  for (const auto& text : cases) {
    write_bytes(path, text);
    fs::permissions(path, fs::perms(0600));
    auto loaded = load_box_key(path);
    ASSERT_FALSE(loaded) << text;
    EXPECT_EQ(loaded.error().code, errc::kKeyFileInvalid) << text;
    EXPECT_NE(loaded.error().message.find(path.string()), std::string::npos);
  }
  write_bytes(path, key_file_text("x25519", 32));
  fs::permissions(path, fs::perms(0600));
  EXPECT_TRUE(load_box_key(path)) << "control case must load";
}

TEST(KeyFiles, HandWrittenFileWithoutFinalNewlineLoads) {
  TempDir dir;
  const auto path = dir / "box.key";
  auto text = key_file_text("x25519", 32);
  write_bytes(path, text.substr(0, text.size() - 1));
  fs::permissions(path, fs::perms(0600));
  EXPECT_TRUE(load_box_key(path));
}

TEST(PublicKeys, Base64RoundTripAndValidation) {
  auto pair = BoxKeyPair::generate();
  auto back = BoxPublicKey::from_base64(pair.public_key.to_base64());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->bytes, pair.public_key.bytes);

  EXPECT_EQ(BoxPublicKey::from_base64(base64_encode(std::string(31, 'x'))).error().code,
            errc::kInvalidArgument);
  EXPECT_EQ(BoxPublicKey::from_base64("not base64").error().code, errc::kInvalidArgument);
  // All zeros is a low-order point: sealing to it would fail.
  EXPECT_EQ(BoxPublicKey::from_base64(base64_encode(std::string(32, '\0'))).error().code,
            errc::kInvalidArgument);

  auto sign = SignKeyPair::generate();
  auto sign_back = SignPublicKey::from_base64(sign.public_key.to_base64());
  ASSERT_TRUE(sign_back);
  EXPECT_EQ(sign_back->bytes, sign.public_key.bytes);
  EXPECT_FALSE(SignPublicKey::from_base64(base64_encode(std::string(33, 'x'))));
}

TEST(PublicKeys, PinnedKeyFileRoundTrip) {
  TempDir dir;
  const auto path = dir / "control.pub";
  auto pair = SignKeyPair::generate();
  ASSERT_TRUE(write_public_key_file(path, pair.public_key.to_base64()));
  EXPECT_EQ(read_bytes(path), pair.public_key.to_base64() + "\n");
  auto loaded = load_sign_public_key(path);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->bytes, pair.public_key.bytes);

  EXPECT_EQ(write_public_key_file(path, "c2hvcnQ=").error().code, errc::kInvalidArgument);
  EXPECT_EQ(read_bytes(path), pair.public_key.to_base64() + "\n") << "refused write kept file";
}

TEST(PublicKeys, PinnedKeyFileErrors) {
  TempDir dir;
  const auto path = dir / "control.pub";
  write_bytes(path, "garbage\n");
  fs::permissions(path, fs::perms(0644));
  EXPECT_EQ(load_sign_public_key(path).error().code, errc::kKeyFileInvalid);

  ASSERT_TRUE(write_public_key_file(path, SignKeyPair::generate().public_key.to_base64()));
  fs::permissions(path, fs::perms(0666));  // anyone could swap the pinned key
  auto loaded = load_sign_public_key(path);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code, errc::kKeyFileInsecure);
  EXPECT_EQ(load_sign_public_key(dir / "absent.pub").error().code, errc::kNotFound);
}

}  // namespace
}  // namespace takosumi::crypto
