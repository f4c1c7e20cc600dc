// The blob store on real files, and on a PostgreSQL store (the pg.* run) the blobs shared
// through the database: what one replica stored, another reads, whatever its size
// (postgres_test.cpp: a damaged database copy is never used).
#include "controlplane/store/blob_store.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "controlplane/testing/test_support.hpp"
#include "crypto/sha256.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::controlplane {
namespace {

std::string content(const std::filesystem::path& path) {
  return read_file(path, 64 << 20).value_or("<unreadable>");
}

// Bytes that differ chunk to chunk, so a chunk out of place would change the digest.
std::string pattern(std::size_t size) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<char>((i * 7 + i / 4093) & 0xff);
  return out;
}

class BlobStoreTest : public ::testing::Test {
 protected:
  takosumi::testing::TempDir dir_;
  std::optional<PostgresSettings> postgres_ = takosumi::testing::new_test_store();
  Database db_ = takosumi::testing::open_test_db(dir_.path() / "control.db", postgres_);
  BlobStore blobs_ = *BlobStore::open(dir_.path() / "a", postgres_);
};

TEST_F(BlobStoreTest, StoresByDigestAndAdoptsCheckedUploads) {
  auto sha = blobs_.put("envelope bytes");
  ASSERT_TRUE(sha) << sha.error().to_string();
  EXPECT_EQ(*sha, crypto::sha256_hex("envelope bytes"));
  EXPECT_TRUE(*blobs_.contains(*sha));
  EXPECT_EQ(content(*blobs_.path_for(*sha)), "envelope bytes");

  const std::string big = pattern(2 * kBlobChunkBytes + 12345);
  const auto temp = blobs_.new_temp_path();
  ASSERT_TRUE(write_file_atomic(temp, big, 0600));
  const std::string big_sha = crypto::sha256_hex(big);
  ASSERT_TRUE(blobs_.adopt(temp, big_sha));
  EXPECT_FALSE(std::filesystem::exists(temp));
  EXPECT_EQ(content(*blobs_.path_for(big_sha)), big);

  const std::string unknown(64, 'a');
  EXPECT_FALSE(*blobs_.contains(unknown));
  EXPECT_FALSE(std::filesystem::exists(*blobs_.path_for(unknown)));
  EXPECT_EQ(blobs_.path_for("../../etc/passwd").error().code, errc::kInvalidArgument);
}

// On SQLite the blobs are the data directory's files: another data directory has none of them.
TEST_F(BlobStoreTest, AnotherReplicaReadsWhatOneStoredThroughAPostgresStore) {
  BlobStore other = *BlobStore::open(dir_.path() / "b", postgres_);
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, kBlobChunkBytes,
                                 3 * kBlobChunkBytes + 7}) {
    const std::string bytes = pattern(size);
    auto sha = blobs_.put(bytes);
    ASSERT_TRUE(sha) << sha.error().to_string();
    if (!postgres_) {
      EXPECT_FALSE(*other.contains(*sha));
      EXPECT_FALSE(std::filesystem::exists(*other.path_for(*sha)));
      continue;
    }
    EXPECT_TRUE(*other.contains(*sha)) << size;
    auto path = other.path_for(*sha);
    ASSERT_TRUE(path) << path.error().to_string();
    EXPECT_EQ(*path, dir_.path() / "b" / "blobs" / *sha);
    EXPECT_EQ(content(*path), bytes) << size;
  }
  if (postgres_) {
    EXPECT_EQ(*db_.single_integer("SELECT chunks FROM blobs WHERE sha256 = ?",
                                  crypto::sha256_hex(pattern(3 * kBlobChunkBytes + 7))),
              4);
  }
}

}  // namespace
}  // namespace takosumi::controlplane
