#include "runner/plan/plan_view_build.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <map>

#include "protocol/plan_view_text.hpp"
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

// The plan as the Run's log shows it (no summary line: the tests name what they look for).
std::vector<std::string> render_plan(const json::object& plan, const std::set<std::string>& mapped,
                                     std::size_t max_lines = 5000, std::size_t max_attributes = 500,
                                     const redaction::SecretSet* secrets = nullptr) {
  PlanViewLimits limits;
  limits.max_attributes_per_resource = max_attributes;
  return protocol::plan_view_lines(build_plan_view(plan, mapped, secrets, limits),
                                   {.max_lines = max_lines, .summary = false});
}

std::vector<std::string> render_drift(const json::object& plan) {
  return protocol::plan_view_lines(build_drift_view(plan, nullptr), {.drift = true});
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
  // An Output the Capsule does not map is named, its value never shown.
  EXPECT_NE(text.find("  + secret_token  # value not shown: not mapped by the Capsule"), std::string::npos) << text;
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
  const auto lines = render_plan(parse(R"({"resource_changes":[)" + changes + "]}"), {}, 10, 10);
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


// Values a Run must never let out are markers in the view, whatever tofu thought of them: one
// equal to a Run secret (a Connection value passed into a module as a plain variable), one shaped
// like a credential; a for_each key holding a secret is redacted in the address.
TEST(PlanView, RunSecretsAndCredentialShapesAreMarkersNotValues) {
  redaction::SecretSet secrets;
  ASSERT_TRUE(secrets.add("conn-value-7f3a9c"));
  const auto plan = parse(R"({"resource_changes":[
    {"address":"terraform_data.x[\"conn-value-7f3a9c\"]","type":"terraform_data",
     "change":{"actions":["create"],"before":null,
               "after":{"input":"conn-value-7f3a9c","dsn":"postgres://app:pw123456@db/app","plain":"ok"},
               "after_unknown":{"id":true}}}]})");
  const auto view = build_plan_view(plan, {}, &secrets);
  ASSERT_EQ(view.resources.size(), 1u);
  const auto& r = view.resources[0];
  EXPECT_EQ(r.address.find("conn-value-7f3a9c"), std::string::npos) << r.address;
  std::map<std::string, protocol::PlanAttribute> by_path;
  for (const auto& a : r.attributes) by_path[a.path] = a;
  EXPECT_EQ(by_path.at("input").after, std::string(protocol::kSensitiveValue));
  EXPECT_TRUE(by_path.at("input").sensitive);
  EXPECT_EQ(by_path.at("dsn").after, std::string(protocol::kSensitiveValue));
  EXPECT_EQ(by_path.at("plain").after, "\"ok\"");
  EXPECT_FALSE(by_path.at("plain").sensitive);
  EXPECT_EQ(by_path.at("id").after, std::string(protocol::kUnknownValue));
  EXPECT_TRUE(by_path.at("id").unknown);
  const auto text = json::serialize(protocol::to_json(view));
  EXPECT_EQ(text.find("conn-value-7f3a9c"), std::string::npos) << text;
  EXPECT_EQ(text.find("pw123456"), std::string::npos) << text;
}

// Every changing Output is named; values only for one the Capsule maps that is neither sensitive
// nor shaped like a credential. A plan whose only changes are Outputs says so by name.
TEST(PlanView, OutputsAreNamedAndOnlyMappedPlainOnesShowValues) {
  const auto plan = parse(R"({"output_changes":{
    "url":{"actions":["update"],"before":"a","after":"b"},
    "hidden":{"actions":["create"],"before":null,"after":"s3cr3t-out","after_sensitive":true},
    "leaky":{"actions":["create"],"before":null,"after":"postgres://u:leakpw99@h/db"},
    "unmapped":{"actions":["create"],"before":null,"after":"not-shown-value"},
    "same":{"actions":["no-op"],"before":"x","after":"x"}}})");
  auto view = build_plan_view(plan, {"url", "hidden", "leaky"}, nullptr);
  ASSERT_EQ(view.outputs.size(), 4u);
  std::map<std::string, protocol::PlanOutput> by_name;
  for (const auto& o : view.outputs) by_name[o.name] = o;
  EXPECT_TRUE(by_name.at("url").withheld.empty());
  ASSERT_EQ(by_name.at("url").attributes.size(), 1u);
  EXPECT_EQ(by_name.at("url").attributes[0].after, "\"b\"");
  EXPECT_EQ(by_name.at("hidden").withheld, "sensitive in the module");
  EXPECT_NE(by_name.at("leaky").withheld.find("password"), std::string::npos) << by_name.at("leaky").withheld;
  EXPECT_TRUE(by_name.at("leaky").attributes.empty());
  EXPECT_EQ(by_name.at("unmapped").withheld, "not mapped by the Capsule");
  const auto text = joined(protocol::plan_view_lines(view));
  for (const char* value : {"s3cr3t-out", "leakpw99", "not-shown-value"})
    EXPECT_EQ(text.find(value), std::string::npos) << value << " in\n" << text;
  EXPECT_NE(text.find("  ~ url = \"a\" -> \"b\""), std::string::npos) << text;
  EXPECT_NE(text.find("Plan: 0 to add, 0 to change, 0 to replace, 0 to destroy."), std::string::npos) << text;
  EXPECT_NE(text.find("Only Outputs change: url, hidden, leaky, unmapped."), std::string::npos) << text;
}

// Bounded: past its size a view counts the resources it leaves out; a long value is cut at a
// UTF-8 boundary and says how long it was.
TEST(PlanView, ALargePlanIsCutWithACountAndALongValueWithItsLength) {
  std::string changes;
  for (int i = 0; i < 100; ++i)
    changes += std::string(i ? "," : "") + R"({"address":"t.r)" + std::to_string(i) +
               R"(","change":{"actions":["create"],"before":null,"after":{"a":1}}})";
  PlanViewLimits limits;
  limits.max_bytes = 2000;
  const auto view = build_plan_view(parse(R"({"resource_changes":[)" + changes + "]}"), {}, nullptr, limits);
  EXPECT_GT(view.resources_omitted, 0);
  EXPECT_EQ(static_cast<std::int64_t>(view.resources.size()) + view.resources_omitted, 100);
  EXPECT_NE(joined(protocol::plan_view_lines(view)).find("more resources change"), std::string::npos);

  limits = {};
  limits.max_value_bytes = 10;
  const auto cut = build_plan_view(parse(R"({"resource_changes":[{"address":"t.long",
    "change":{"actions":["create"],"before":null,"after":{"s":"ééééééééééé"}}}]})"), {}, nullptr, limits);
  ASSERT_EQ(cut.resources.at(0).attributes.size(), 1u);
  const auto& after = *cut.resources[0].attributes[0].after;
  EXPECT_TRUE(after.ends_with("… (24 bytes)")) << after;
  EXPECT_EQ(after.substr(0, after.find("…")).size() % 2, 1u) << after;  // `"` then whole é's
}

TEST(PlanView, RoundTripsThroughJsonAndRefusesMalformedViews) {
  const auto plan = parse(R"({"resource_changes":[{"address":"random_pet.p","type":"random_pet",
     "action_reason":"replace_because_cannot_update",
     "change":{"actions":["delete","create"],"before":{"length":2},"after":{"length":3},
               "replace_paths":[["length"]]}}],
     "output_changes":{"name":{"actions":["update"],"before":"a","after":"b"}}})");
  auto view = build_plan_view(plan, {"name"}, nullptr);
  view.run_id = "run_1";
  view.summary.replace = 1;
  const auto round = protocol::plan_view_from_json(protocol::to_json(view));
  ASSERT_TRUE(round) << round.error().to_string();
  EXPECT_EQ(json::serialize(protocol::to_json(*round)), json::serialize(protocol::to_json(view)));
  EXPECT_TRUE(round->resources.at(0).attributes.at(0).forces_replacement);

  auto o = protocol::to_json(view);
  o["extra"] = 1;
  EXPECT_FALSE(protocol::plan_view_from_json(o));
  auto added_with_before = protocol::to_json(view);
  auto& attr = added_with_before["resources"].as_array()[0].as_object()["attributes"].as_array()[0].as_object();
  attr["change"] = "add";
  const auto refused = protocol::plan_view_from_json(added_with_before);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("only after"), std::string::npos) << refused.error().message;
}

// The view travels through the control plane: whatever it holds, rendering keeps it on its line
// and out of the terminal's control, C1 controls included; colour is the renderer's own.
TEST(PlanView, RenderingEscapesEveryControlAndColoursOnlyTheSymbols) {
  protocol::PlanView view;
  view.resources.push_back(protocol::PlanResource{"t.r[\"a\u009b2J\nb\"]", "t", {"create"}, "", {}, false});
  view.resources[0].attributes.push_back(
      protocol::PlanAttribute{"k\x1b", protocol::PlanAttribute::Change::add, std::nullopt,
                              "\"v\r\"", false, false, false});
  const auto plain = protocol::plan_view_lines(view);
  for (const auto& line : plain) {
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    EXPECT_EQ(line.find("\u009b"), std::string::npos) << line;
  }
  EXPECT_NE(joined(plain).find("  + t.r[\"a\\u009b2J\\u000ab\"]"), std::string::npos) << joined(plain);
  const auto coloured = joined(protocol::plan_view_lines(view, {.colour = true}));
  EXPECT_NE(coloured.find("\x1b[32m+\x1b[0m t.r"), std::string::npos) << coloured;
  EXPECT_NE(coloured.find("k\\u001b"), std::string::npos) << coloured;
}

// Sensitive on one side hides both sides (the unmarked side is the secret's value now or
// before), and a value shown whole (the other side unknown, or another type) is hidden when a
// mark holds anywhere inside it.
TEST(AttributeChanges, ASensitiveMarkOnEitherSideOrInsideAWholeValueHidesIt) {
  const auto becomes_sensitive = parse(R"({"actions":["update"],
    "before":{"port":5432},"after":{"port":5433},
    "before_sensitive":{},"after_sensitive":{"port":true}})");
  auto changes = attribute_changes(becomes_sensitive, 100);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].before, kSensitive);
  EXPECT_EQ(changes[0].after, kSensitive);
  EXPECT_TRUE(changes[0].sensitive);

  const auto replaced_block = parse(R"({"actions":["delete","create"],
    "before":{"blk":[{"pin":"4711","label":"x"}]},"after":{},
    "after_unknown":{"blk":true},"before_sensitive":{"blk":[{"pin":true}]},"after_sensitive":{}})");
  changes = attribute_changes(replaced_block, 100);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].path, "blk");
  EXPECT_EQ(changes[0].before, kSensitive);
  EXPECT_EQ(changes[0].after, kUnknown);

  const auto scalar_to_object = parse(R"({"actions":["update"],
    "before":{"cfg":"plain"},"after":{"cfg":{"pw":"4711"}},
    "before_sensitive":{},"after_sensitive":{"cfg":{"pw":true}}})");
  changes = attribute_changes(scalar_to_object, 100);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].before, "\"plain\"");
  EXPECT_EQ(changes[0].after, kSensitive);
  for (const auto* plan : {&becomes_sensitive, &replaced_block, &scalar_to_object})
    for (const auto& c : attribute_changes(*plan, 100)) {
      EXPECT_EQ(c.before.find("4711"), std::string::npos) << c.path;
      EXPECT_EQ(c.after.find("4711"), std::string::npos) << c.path;
      EXPECT_EQ(c.before.find("5432"), std::string::npos) << c.path;
    }
}

// A map of many keys is walked once per key (a module chooses its size), and the cut is said
// only when a change past it exists.
TEST(AttributeChanges, AHugeMapIsWalkedOnceAndTheCutIsSaidOnlyWhenMoreChange) {
  json::object before, after;
  for (int i = 0; i < 200000; ++i) {
    before["k" + std::to_string(i)] = i;
    after["k" + std::to_string(i)] = i;
  }
  after["k7"] = -7;
  before["gone"] = 1;
  json::object change{{"actions", json::array{"update"}}, {"before", json::object{{"m", before}}},
                      {"after", json::object{{"m", after}}}};
  bool truncated = true;
  auto changes = attribute_changes(change, 2, &truncated);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].path, "m.k7");
  EXPECT_EQ(changes[1].path, "m.gone");
  EXPECT_FALSE(truncated);
  changes = attribute_changes(change, 1, &truncated);
  EXPECT_EQ(changes.size(), 1u);
  EXPECT_TRUE(truncated);
}

// Whatever the log would redact is a marker in the view too: a piece of a Run secret, a token
// used as a for_each key (the address is then not shown).
TEST(PlanView, PiecesOfSecretsAndCredentialKeysAreMarkers) {
  redaction::SecretSet secrets;
  ASSERT_TRUE(secrets.add("Zq8vK2mP9xW4nR7tL5yB"));
  const auto plan = parse(R"({"resource_changes":[
    {"address":"t.a","type":"t","change":{"actions":["create"],"before":null,
     "after":{"prefix":"id-Zq8vK2mP9xW4n","plain":"fine"}}},
    {"address":"t.b[\"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"]","type":"t",
     "change":{"actions":["create"],"before":null,"after":{"x":1}}}]})");
  const auto view = build_plan_view(plan, {}, &secrets);
  ASSERT_EQ(view.resources.size(), 2u);
  std::map<std::string, protocol::PlanAttribute> by_path;
  for (const auto& a : view.resources[0].attributes) by_path[a.path] = a;
  EXPECT_EQ(by_path.at("prefix").after, std::string(protocol::kSensitiveValue));
  EXPECT_EQ(by_path.at("plain").after, "\"fine\"");
  EXPECT_EQ(view.resources[1].address, std::string(protocol::kSensitiveValue));
  const auto text = json::serialize(protocol::to_json(view));
  EXPECT_EQ(text.find("Zq8vK2mP9xW4n"), std::string::npos) << text;
  EXPECT_EQ(text.find("ghp_abcdefghij"), std::string::npos) << text;
}

// The bound is the serialised size (values are JSON text: their quotes double), Outputs count,
// and every name is cut to what the control plane takes, so the view it gets is one it accepts.
TEST(PlanView, TheSerialisedViewStaysUnderItsBoundsAndTheControlPlaneTakesIt) {
  const std::string quotes(3000, '"');
  std::string changes;
  for (int i = 0; i < 40; ++i)
    changes += std::string(i ? "," : "") + R"({"address":"t.r)" + std::to_string(i) + R"(","type":"t",
      "change":{"actions":["create"],"before":null,"after":{"q":)" + json::serialize(json::string(quotes)) + "}}}";
  const std::string long_key(5000, 'k');
  changes += R"(,{"address":"t.long[\")" + std::string(3000, 'a') + R"(\"]","type":"t",
      "change":{"actions":["create"],"before":null,"after":{")" + long_key + R"(":1}}})";
  const std::string plan_text = R"({"resource_changes":[)" + changes + R"(],"output_changes":{
      "big":{"actions":["create"],"before":null,"after":)" + json::serialize(json::string(quotes)) + R"(},
      ")" + std::string(300, 'o') + R"(":{"actions":["create"],"before":null,"after":"v"}}})";
  PlanViewLimits limits;
  limits.max_bytes = 60000;
  auto view = build_plan_view(parse(plan_text), {"big"}, nullptr, limits);
  view.run_id = "run_1";
  EXPECT_GT(view.resources_omitted, 0);
  EXPECT_LE(json::serialize(protocol::to_json(view)).size(), limits.max_bytes);
  bool big_named = false;
  for (const auto& o : view.outputs)
    if (o.name == "big") big_named = true;
  EXPECT_TRUE(big_named);
  const auto taken = protocol::plan_view_from_json(protocol::to_json(view));
  EXPECT_TRUE(taken) << taken.error().to_string();

  limits = {};
  auto whole = build_plan_view(parse(plan_text), {"big"}, nullptr, limits);
  whole.run_id = "run_1";
  EXPECT_EQ(whole.resources_omitted, 0);
  const auto all = protocol::plan_view_from_json(protocol::to_json(whole));
  ASSERT_TRUE(all) << all.error().to_string();
  EXPECT_LE(all->resources.back().address.size(), protocol::kMaxPlanAddressBytes);
  EXPECT_LE(all->resources.back().attributes.at(0).path.size(), protocol::kMaxPlanPathBytes);
}

// Characters that print nothing but move or hide text reach no terminal as themselves.
TEST(PlanView, BidirectionalAndInvisibleCharactersAreEscaped) {
  protocol::PlanView view;
  view.resources.push_back(protocol::PlanResource{"t.r", "t", {"update"}, "", {}, false});
  view.resources[0].attributes.push_back(protocol::PlanAttribute{
      "k\u200b", protocol::PlanAttribute::Change::update, "\"a\u202e\"", "\"b\u2066\ufeff\"", false,
      false, false});
  const auto text = joined(protocol::plan_view_lines(view));
  for (const char* c : {"\u200b", "\u202e", "\u2066", "\ufeff"}) EXPECT_EQ(text.find(c), std::string::npos);
  EXPECT_NE(text.find("k\\u200b = \"a\\u202e\" -> \"b\\u2066\\ufeff\""), std::string::npos) << text;
  EXPECT_EQ(protocol::one_line("é ü ✓"), "é ü ✓");
}

// Counts are counts; a plan that only forgets resources is not "No changes".
TEST(PlanView, NegativeCountsAreRefusedAndAForgetIsAChange) {
  protocol::PlanView view;
  view.run_id = "run_1";
  auto o = protocol::to_json(view);
  o["changeSummary"].as_object()["add"] = -1;
  EXPECT_FALSE(protocol::plan_view_from_json(o));
  view.resources.push_back(protocol::PlanResource{"t.r", "t", {"forget"}, "", {}, false});
  const auto text = joined(protocol::plan_view_lines(view));
  EXPECT_EQ(text.find("No changes."), std::string::npos) << text;
  EXPECT_NE(text.find("will be forgotten"), std::string::npos) << text;
}

}  // namespace
}  // namespace takosumi::runner
