#include "runner/plan/plan_render.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "runner/plan/attribute_changes.hpp"

namespace takosumi::runner {
namespace {

namespace json = boost::json;

json::object parse(std::string_view text) { return json::parse(text).as_object(); }

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST(AttributeChanges, NestedValuesAreFlattenedToTheLeavesThatDiffer) {
  const auto change = parse(R"({"actions":["update"],
    "before":{"name":"a","tags":{"env":"dev","team":"x"},"ports":[80,443],"same":1},
    "after":{"name":"b","tags":{"env":"prod","team":"x","new key":"y"},"ports":[80],"same":1},
    "after_unknown":{"id":true},"before_sensitive":{},"after_sensitive":{}})");
  const auto changes = attribute_changes(change, 100);
  std::vector<std::string> shown;
  for (const auto& c : changes) shown.push_back(c.path + "|" + c.before + "|" + c.after);
  EXPECT_EQ(shown, (std::vector<std::string>{"name|\"a\"|\"b\"", "tags.env|\"dev\"|\"prod\"",
                                             "tags[\"new key\"]||\"y\"", "ports[1]|443|",
                                             "id||(known after apply)"}));
  EXPECT_EQ(changes[2].kind, AttributeChange::Kind::added);
  EXPECT_EQ(changes[3].kind, AttributeChange::Kind::removed);
}

TEST(AttributeChanges, SensitiveValuesAreNeverRendered) {
  const auto change = parse(R"({"actions":["update"],
    "before":{"password":"old-secret-1","user":"u","conn":{"key":"k-secret"}},
    "after":{"password":"new-secret-2","user":"u","conn":{"key":"k-secret-2"}},
    "before_sensitive":{"password":true,"conn":{"key":true}},
    "after_sensitive":{"password":true,"conn":{"key":true}}})");
  const auto changes = attribute_changes(change, 100);
  ASSERT_EQ(changes.size(), 2u);
  for (const auto& c : changes) {
    EXPECT_EQ(c.before, kSensitive) << c.path;
    EXPECT_EQ(c.after, kSensitive) << c.path;
    EXPECT_TRUE(c.sensitive);
  }
  const auto text = joined(render_plan(parse(R"({"resource_changes":[{"address":"x.y","change":)" +
                                             json::serialize(change) + "}]}"),
                                       {}));
  EXPECT_EQ(text.find("secret"), std::string::npos) << text;
}

TEST(AttributeChanges, AValueCanNeverStartALineOfItsOwn) {
  const auto change = parse(R"({"actions":["create"],"before":null,
    "after":{"content":"benign\n  # local_file.f will be created\nPlan: 0 to add"}})");
  const auto lines = render_plan(parse(R"({"resource_changes":[{"address":"local_file.f","change":)" +
                                       json::serialize(change) + "}]}"),
                                 {});
  // Whatever the value holds, it stays inside its attribute's line.
  for (const auto& l : lines) {
    if (l.find("Plan: 0") == std::string::npos && l.find("will be created") == std::string::npos) continue;
    EXPECT_TRUE(l.starts_with("      + content = ") || l == "  # local_file.f will be created") << l;
  }
  const auto text = joined(lines);
  EXPECT_NE(text.find(R"(+ content = "benign\n  # local_file.f will be created\nPlan: 0 to add")"),
            std::string::npos)
      << text;
}

TEST(PlanRender, ReplacementsDeletesAndForcingAttributesAreNamed) {
  const auto plan = parse(R"({"resource_changes":[
    {"address":"random_pet.name","action_reason":"replace_because_cannot_update",
     "change":{"actions":["delete","create"],"before":{"length":2,"id":"a-b"},
               "after":{"length":3},"after_unknown":{"id":true},"replace_paths":[["length"]]}},
    {"address":"local_file.gone","change":{"actions":["delete"],"before":{"filename":"/x"},"after":null}},
    {"address":"terraform_data.same","change":{"actions":["no-op"],"before":{"a":1},"after":{"a":1}}}],
    "output_changes":{"url":{"actions":["update"],"before":"a","after":"b"},
                      "secret_token":{"actions":["create"],"before":null,"after":"t0ken-value"}}})");
  const auto text = joined(render_plan(plan, {"url"}));
  EXPECT_NE(text.find("  # random_pet.name must be replaced"), std::string::npos) << text;
  EXPECT_NE(text.find("      ~ length = 2 -> 3  # forces replacement"), std::string::npos) << text;
  EXPECT_NE(text.find("      ~ id = \"a-b\" -> (known after apply)"), std::string::npos) << text;
  EXPECT_NE(text.find("  # local_file.gone will be destroyed"), std::string::npos) << text;
  EXPECT_NE(text.find("      - filename = \"/x\""), std::string::npos) << text;
  EXPECT_EQ(text.find("terraform_data.same"), std::string::npos) << text;
  EXPECT_NE(text.find("  ~ url = \"a\" -> \"b\""), std::string::npos) << text;
  // An Output the Capsule does not map is counted, never named or shown.
  EXPECT_NE(text.find("  (1 more Output the Capsule does not map change; not shown)"), std::string::npos) << text;
  EXPECT_EQ(text.find("secret_token"), std::string::npos) << text;
  EXPECT_EQ(text.find("t0ken-value"), std::string::npos) << text;
}

// A mapped Output holding an object is reviewed leaf by leaf, its sensitive leaves marked.
TEST(PlanRender, AMappedObjectOutputShowsEveryLeafThatChanges) {
  const auto plan = parse(R"({"output_changes":{"endpoint":{"actions":["update"],
    "before":{"host":"a.example","port":80,"tags":["x"]},
    "after":{"host":"b.example","port":80,"tags":["x","y"]},
    "after_sensitive":false,"before_sensitive":false}}})");
  const auto text = joined(render_plan(plan, {"endpoint"}));
  EXPECT_NE(text.find("  ~ endpoint.host = \"a.example\" -> \"b.example\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  ~ endpoint.tags[1] = \"y\"\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("port"), std::string::npos) << text;
}

// A for_each key is the module's to choose: one resource's line cannot become several.
TEST(PlanRender, AnAddressCannotBreakItsLine) {
  const auto plan = parse(R"({"resource_changes":[{"address":"t.r[\"a\ntakosumi: end\u001b[2J\"]",
    "change":{"actions":["create"],"before":null,"after":{"a":1}}}]})");
  const auto lines = render_plan(plan, {});
  for (const auto& line : lines) {
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  }
  EXPECT_NE(joined(lines).find("  # t.r[\"a\\u000atakosumi: end\\u001b[2J\"] will be created"), std::string::npos)
      << joined(lines);
}

TEST(PlanRender, ALongPlanIsCutWithACount) {
  std::string changes;
  for (int i = 0; i < 50; ++i)
    changes += std::string(i ? "," : "") + R"({"address":"t.r)" + std::to_string(i) +
               R"(","change":{"actions":["create"],"before":null,"after":{"a":1}}})";
  const auto lines = render_plan(parse(R"({"resource_changes":[)" + changes + "]}"), {}, {10, 10});
  ASSERT_EQ(lines.size(), 11u);
  EXPECT_NE(lines.back().find("more lines not shown"), std::string::npos) << lines.back();
}

TEST(PlanRender, DriftNamesWhatChangedOrVanishedOutsideOpenTofu) {
  const auto plan = parse(R"({"resource_drift":[
    {"address":"local_file.a","change":{"actions":["update"],"before":{"content":"x"},"after":{"content":"y"}}},
    {"address":"local_file.b","change":{"actions":["delete"],"before":{"content":"z"},"after":null}}]})");
  const auto text = joined(render_drift(plan));
  EXPECT_NE(text.find("  # local_file.a has changed outside OpenTofu"), std::string::npos) << text;
  EXPECT_NE(text.find("      ~ content = \"x\" -> \"y\""), std::string::npos) << text;
  EXPECT_NE(text.find("  # local_file.b has been deleted outside OpenTofu"), std::string::npos) << text;
}

}  // namespace
}  // namespace takosumi::runner
