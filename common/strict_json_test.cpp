// The strict parse every JSON body and manifest goes through: duplicate keys are refused at any
// depth, naming the key and where it is; everything json::parse accepts is otherwise accepted.
#include "common/strict_json.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"

namespace takosumi {
namespace {

void expect_duplicate(std::string_view text, const std::string& message) {
  auto v = parse_json_strict(text);
  ASSERT_FALSE(v) << text;
  EXPECT_EQ(v.error().code, errc::kInvalidArgument);
  EXPECT_EQ(v.error().message, message);
}

TEST(StrictJson, RefusesDuplicateKeysNamingThem) {
  expect_duplicate(R"({"name":"a","name":"b"})", "duplicate key \"name\"");
  expect_duplicate(R"({"source":{"ref":"main","gitUrl":"x","ref":"evil"}})",
                   "duplicate key \"ref\" in source");
  expect_duplicate(R"({"jobs":[{"a":1},{"b":1,"b":2}]})", "duplicate key \"b\" in jobs[]");
  expect_duplicate(R"([[{"x":{"y":1,"y":1}}]])", "duplicate key \"y\" in [][].x");
  // Escapes are decoded before keys are compared: "\u006eame" is "name".
  expect_duplicate(R"({"name":1,"\u006eame":2})", "duplicate key \"name\"");
}

TEST(StrictJson, AcceptsWhatJsonAccepts) {
  auto v = parse_json_strict(R"( {"a":{"k":1},"b":{"k":[1,2.5,"s",true,null]},"k":-3} )");
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->at("a").at("k"), 1);
  EXPECT_EQ(v->at("b").at("k").as_array().size(), 5u);
  EXPECT_EQ(v->at("k"), -3);
  EXPECT_TRUE(parse_json_strict("[]"));
  EXPECT_TRUE(parse_json_strict(R"({"a":{},"b":{}})"));
  // A key long enough to arrive in parts is still one key.
  const std::string long_key(100000, 'k');
  EXPECT_FALSE(parse_json_strict("{\"" + long_key + "\":1,\"" + long_key + "\":2}"));
  EXPECT_TRUE(parse_json_strict("{\"" + long_key + "\":1,\"" + long_key + "x\":2}"));
}

TEST(StrictJson, RefusesWhatIsNotOneDocument) {
  for (std::string_view bad : {"", "{", "{} {}", "{\"a\":1,}", "nul"}) {
    auto v = parse_json_strict(bad);
    ASSERT_FALSE(v) << bad;
    EXPECT_EQ(v.error().code, errc::kInvalidArgument);
    EXPECT_NE(v.error().message.find("invalid JSON"), std::string::npos) << v.error().message;
  }
}

TEST(StrictJson, ParseObjectIsStrict) {
  auto o = parse_object(R"({"leaseToken":"a","leaseToken":"b"})", 1024);
  ASSERT_FALSE(o);
  EXPECT_EQ(o.error().message, "duplicate key \"leaseToken\"");
}

TEST(KnownFields, NamesTheUnknownFieldAndTheKnownOnes) {
  json::object o{{"name", "a"}, {"outputAllowList", json::object{}}};
  auto st = check_known_fields(o, {"name", "outputAllowlist"});
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, errc::kInvalidArgument);
  EXPECT_EQ(st.error().message,
            "unknown field \"outputAllowList\" (known: name, outputAllowlist)");
  auto nested = check_known_fields(json::object{{"rev", "x"}}, {"gitUrl", "ref"}, "source");
  ASSERT_FALSE(nested);
  EXPECT_EQ(nested.error().message, "unknown field \"source.rev\" (known: gitUrl, ref)");
  auto none = check_known_fields(json::object{{"x", 1}}, {});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "unknown field \"x\" (known: none)");
  EXPECT_TRUE(check_known_fields(json::object{{"name", "a"}}, {"name", "outputAllowlist"}));
}

TEST(JsonFields, OversizedBodyIsRefused) {
  auto r = parse_object(std::string(100, ' '), 10);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::kPayloadTooLarge);
}

}  // namespace
}  // namespace takosumi
