#include "protocol/bundle_file.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "common/file_io.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::protocol {
namespace {

namespace fs = std::filesystem;
using takosumi::testing::TempDir;

void put(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

class BundleFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    put(tmp_.path() / "a", "alpha bytes");
    put(tmp_.path() / "b", std::string(200000, 'b'));
    files_ = {{"state.env", tmp_.path() / "a"}, {"source.pack", tmp_.path() / "b"}};
    auto described = describe_members(files_);
    ASSERT_TRUE(described);
    members_ = *described;
    index_ = boost::json::serialize(boost::json::object{{"members", to_json(members_)}});
    ASSERT_TRUE(write_bundle(bundle(), index_, files_));
  }
  fs::path bundle() const { return tmp_.path() / "run.bundle"; }
  Result<std::vector<BundleMember>> members_of(const OpenedBundle& b) {
    return bundle_members_from_json(boost::json::parse(b.index).as_object().at("members"),
                                    {"state.env", "source.pack", "plan.env"});
  }
  void flip_byte(std::uint64_t offset) {
    std::fstream f(bundle(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(c ^ 1));
  }

  TempDir tmp_;
  std::vector<std::pair<std::string, fs::path>> files_;
  std::vector<BundleMember> members_;
  std::string index_;
};

TEST_F(BundleFileTest, MembersComeBackExactlyAsWritten) {
  auto opened = open_bundle(bundle());
  ASSERT_TRUE(opened) << opened.error().to_string();
  EXPECT_EQ(opened->index, index_);
  auto members = members_of(*opened);
  ASSERT_TRUE(members) << members.error().to_string();
  ASSERT_TRUE(extract_members(*opened, *members, tmp_.path() / "out", 1 << 20));
  EXPECT_EQ(*read_file(tmp_.path() / "out/state.env", 1 << 20), "alpha bytes");
  EXPECT_EQ(*read_file(tmp_.path() / "out/source.pack", 1 << 20), std::string(200000, 'b'));
}

TEST_F(BundleFileTest, AFlippedMemberByteIsRefusedNamingTheMember) {
  auto opened = open_bundle(bundle());
  ASSERT_TRUE(opened);
  flip_byte(opened->members_offset + 20);  // inside source.pack
  auto s = extract_members(*opened, *members_of(*opened), tmp_.path() / "out", 1 << 20);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, "bundle_invalid");
  EXPECT_NE(s.error().message.find("source.pack"), std::string::npos);
}

TEST_F(BundleFileTest, ATruncatedOrExtendedFileIsRefused) {
  {
    std::ofstream(bundle(), std::ios::app | std::ios::binary) << "x";
    auto opened = open_bundle(bundle());
    ASSERT_TRUE(opened);
    auto s = extract_members(*opened, *members_of(*opened), tmp_.path() / "o1", 1 << 20);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, "bundle_invalid");
  }
  fs::resize_file(bundle(), fs::file_size(bundle()) - 10);
  auto opened = open_bundle(bundle());
  ASSERT_TRUE(opened);
  auto s = extract_members(*opened, *members_of(*opened), tmp_.path() / "o2", 1 << 20);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, "bundle_invalid");
  fs::resize_file(bundle(), 30);
  EXPECT_EQ(open_bundle(bundle()).error().code, "bundle_invalid");
}

TEST_F(BundleFileTest, MembersOverTheLimitAreRefusedBeforeAnyCopy) {
  auto opened = open_bundle(bundle());
  ASSERT_TRUE(opened);
  auto s = extract_members(*opened, *members_of(*opened), tmp_.path() / "out", 1000);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, "payload_too_large");
  EXPECT_FALSE(fs::exists(tmp_.path() / "out"));
}

TEST_F(BundleFileTest, UnknownDuplicateOrMalformedMembersAreRefused) {
  const std::vector<std::string> allowed{"state.env"};
  const auto parse = [&](const char* text) {
    return bundle_members_from_json(boost::json::parse(text), allowed);
  };
  const std::string sha(64, 'a');
  EXPECT_EQ(parse(("[{\"name\":\"../etc\",\"size\":1,\"sha256\":\"" + sha + "\"}]").c_str())
                .error().code, "bundle_invalid");
  EXPECT_EQ(parse(("[{\"name\":\"other\",\"size\":1,\"sha256\":\"" + sha + "\"}]").c_str())
                .error().code, "bundle_invalid");
  EXPECT_EQ(parse(("[{\"name\":\"state.env\",\"size\":-1,\"sha256\":\"" + sha + "\"}]").c_str())
                .error().code, "bundle_invalid");
  EXPECT_EQ(parse("[{\"name\":\"state.env\",\"size\":1,\"sha256\":\"xyz\"}]").error().code,
            "bundle_invalid");
  EXPECT_EQ(parse(("[{\"name\":\"state.env\",\"size\":1,\"sha256\":\"" + sha +
                   "\"},{\"name\":\"state.env\",\"size\":1,\"sha256\":\"" + sha + "\"}]").c_str())
                .error().code, "bundle_invalid");
  EXPECT_TRUE(parse(("[{\"name\":\"state.env\",\"size\":1,\"sha256\":\"" + sha + "\"}]").c_str()));
}

TEST_F(BundleFileTest, AnythingElseIsNotABundle) {
  put(tmp_.path() / "plain", "hello, this is not a bundle at all, not even close");
  EXPECT_EQ(open_bundle(tmp_.path() / "plain").error().code, "bundle_invalid");
  put(tmp_.path() / "huge", "takosumi-bundle 1\nffffffffffffffff\n");
  EXPECT_EQ(open_bundle(tmp_.path() / "huge").error().code, "bundle_invalid");
}

}  // namespace
}  // namespace takosumi::protocol
