#include "cli/yaml_json.hpp"

#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <fstream>

#include "common/error_codes.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::cli {
namespace {

TEST(YamlJsonTest, PlainScalarsKeepTheirTypeAndQuotedOnesStayStrings) {
  testing::TempDir dir;
  const auto file = dir.path() / "capsule.yaml";
  std::ofstream(file) << "name: web\nvariables:\n  enabled: true\n  count: 3\n  ratio: 0.5\n"
                         "  zone: \"3\"\n  tags: [a, b]\n  nothing: null\n  label: 'true'\n";
  auto body = read_yaml_as_json(file);
  ASSERT_TRUE(body) << body.error().to_string();
  EXPECT_EQ(boost::json::serialize(*body),
            R"({"name":"web","variables":{"enabled":true,"count":3,"ratio":5E-1,"zone":"3",)"
            R"("tags":["a","b"],"nothing":null,"label":"true"}})");
}

TEST(YamlJsonTest, WhatJsonCannotHoldStaysText) {
  testing::TempDir dir;
  const auto file = dir.path() / "odd.yaml";
  std::ofstream(file) << "a: nan\nb: .inf\nc: 12345678901234567890\nd: !!str 7\ne: True\nf: yes\n";
  auto body = read_yaml_as_json(file);
  ASSERT_TRUE(body) << body.error().to_string();
  EXPECT_EQ(boost::json::serialize(*body),
            R"({"a":"nan","b":".inf","c":"12345678901234567890","d":"7","e":true,"f":"yes"})");
}

TEST(YamlJsonTest, ABrokenFileNamesItself) {
  testing::TempDir dir;
  const auto file = dir.path() / "broken.yaml";
  std::ofstream(file) << "name: [unclosed\n";
  auto body = read_yaml_as_json(file);
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().code, errc::kConfigInvalid);
  EXPECT_NE(body.error().message.find("broken.yaml"), std::string::npos);
}

}  // namespace
}  // namespace takosumi::cli
