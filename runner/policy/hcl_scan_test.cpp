#include "runner/policy/hcl_scan.hpp"

#include <gtest/gtest.h>

#include "runner/policy/hcl_lexer.hpp"
#include "runner/policy/tf_json_scan.hpp"

namespace takosumi::runner {
namespace {

ConfigBody parsed(std::string_view text) {
  auto body = parse_hcl(text);
  EXPECT_TRUE(body) << body.error().to_string();
  return body ? *body : ConfigBody{};
}

std::string parse_error(std::string_view text) {
  auto body = parse_hcl(text);
  EXPECT_FALSE(body);
  return body ? std::string{} : body.error().message;
}

TEST(HclScan, ReadsBlocksLabelsAndLines) {
  auto body = parsed(
      "\xEF\xBB\xBF# header\nresource aws_instance \"a\\u0062\" {\n\n  lifecycle {\n  }\n}\n");
  ASSERT_EQ(body.blocks.size(), 1u);
  const auto& block = body.blocks[0];
  EXPECT_EQ(block.type, "resource");
  EXPECT_EQ(block.labels, (std::vector<std::string>{"aws_instance", "ab"}));
  EXPECT_EQ(block.line, 2);
  ASSERT_EQ(block.body.blocks.size(), 1u);
  EXPECT_EQ(block.body.blocks[0].type, "lifecycle");
  EXPECT_EQ(block.body.blocks[0].line, 4);
}

TEST(HclScan, SummarisesAttributeValues) {
  auto body = parsed(R"(a = "plain\t\"q\" $${x}"
b = aws.west[0].id
c = { source = "hashicorp/aws", "version": "~> 5", nested = { x = 1 } }
d = "${var.x}"
e = upper("x")
f = -1
g = a ? b : c
h = provider::aws::arn_parse("x")
i = [for x in y : x]
j = {for k, v in m : k => v}
)");
  ASSERT_EQ(body.attributes.size(), 10u);
  const auto& a = body.attributes;
  EXPECT_EQ(a[0].value.kind, ValueKind::string);
  EXPECT_EQ(a[0].value.text, "plain\t\"q\" ${x}");
  EXPECT_EQ(a[1].value.kind, ValueKind::reference);
  EXPECT_EQ(a[1].value.text, "aws");
  EXPECT_EQ(a[2].value.kind, ValueKind::object);
  ASSERT_EQ(a[2].value.items.size(), 3u);
  EXPECT_EQ(a[2].value.items[0].key, "source");
  EXPECT_EQ(a[2].value.items[0].value.text, "hashicorp/aws");
  EXPECT_EQ(a[2].value.items[1].key, "version");
  EXPECT_EQ(a[2].value.items[2].value.kind, ValueKind::object);
  for (std::size_t i = 3; i < a.size(); ++i)
    EXPECT_EQ(a[i].value.kind, ValueKind::other) << a[i].name;
  EXPECT_EQ(a[9].line, 10);
}

// Nothing inside a string, template or heredoc counts as a brace of the body.
TEST(HclScan, TemplatesNestStringsAndHeredocs) {
  auto body = parsed(R"(x {
  a = "${ { k = "}" }["k"] }${"${"{"}"}"
  b = "%{ for s in ["}"] }${s}%{ endfor }"
  c = <<EOT
${ <<INNER
}
INNER
}
EOT
}
y {}
)");
  ASSERT_EQ(body.blocks.size(), 2u);
  EXPECT_EQ(body.blocks[0].body.attributes.size(), 3u);
  EXPECT_EQ(body.blocks[1].type, "y");
  EXPECT_EQ(body.blocks[1].line, 11);
}

TEST(HclScan, RefusesWhatItCannotFollow) {
  EXPECT_EQ(parse_error("a = \"open\n"), "line 1: newline in a quoted string");
  EXPECT_EQ(parse_error("a = \"${x"), "line 1: unterminated template sequence");
  EXPECT_EQ(parse_error("/* never closed\n"), "line 1: unterminated /* comment");
  EXPECT_EQ(parse_error("b {\n  a = (1\n}\n"), "line 3: mismatched bracket, found \"}\"");
  EXPECT_EQ(parse_error("a = 1\n}\n"), "line 2: } without a block to close, found \"}\"");
  EXPECT_EQ(parse_error("r \"${x}\" {}\n"),
            "line 1: a block label cannot hold a template, found \"\"${x}\"\"");
  EXPECT_EQ(parse_error("a = @\n"), "line 1: unexpected character");
  EXPECT_EQ(parse_error("a = <<EOT\nx\nEOTX\n"),
            "line 1: unterminated heredoc (no line with only EOT)");
}

TEST(HclScan, RefusesNestingDeeperThanTheLimit) {
  const std::string deep_object = "a = " + std::string(70, '{') + std::string(70, '}') + "\n";
  EXPECT_NE(parse_error(deep_object).find("nested deeper than 64 levels"), std::string::npos);
  std::string deep_blocks;
  for (int i = 0; i < 70; ++i) deep_blocks += "b {\n";
  EXPECT_NE(parse_error(deep_blocks).find("nested deeper than 64 levels"), std::string::npos);
  std::string deep_template = "a = ";
  for (int i = 0; i < 70; ++i) deep_template += "\"${";
  EXPECT_NE(parse_error(deep_template).find("template sequences nested too deeply"),
            std::string::npos);
}

TEST(TfJsonScan, ReadsBlocksWithLinesAndRefusesRepeatsAndDepth) {
  auto body = parse_tf_json(R"({
  "module": {"m": {"source": "./m"}},
  "resource": [{"null_resource": [{"x": {}}, {"y": {"provider": "null.alias"}}]}]
})");
  ASSERT_TRUE(body) << body.error().to_string();
  ASSERT_EQ(body->blocks.size(), 3u);
  EXPECT_EQ(body->blocks[0].labels, std::vector<std::string>{"m"});
  EXPECT_EQ(body->blocks[0].body.attributes.at(0).value.text, "./m");
  EXPECT_EQ(body->blocks[2].labels, (std::vector<std::string>{"null_resource", "y"}));
  EXPECT_EQ(body->blocks[2].line, 3);

  EXPECT_FALSE(parse_tf_json("[]"));
  EXPECT_FALSE(parse_tf_json("{} {}"));
  EXPECT_FALSE(parse_tf_json(R"({"resource": {"t": "not an object"}})"));
  EXPECT_EQ(parse_tf_json("{\"a\": 1,\n\"a\": 2}").error().message,
            "line 2: key \"a\" appears twice in one object");
  const std::string deep = "{\"a\": " + std::string(70, '[') + std::string(70, ']') + "}";
  EXPECT_NE(parse_tf_json(deep).error().message.find("invalid JSON"), std::string::npos);
}

}  // namespace
}  // namespace takosumi::runner
