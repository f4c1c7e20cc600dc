// Dependencies over a real SQLite file: the graph never gets a cycle, however long, and a
// request is checked against the two Capsules it joins.
#include "controlplane/store/dependency_store.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "controlplane/store/catalog_store.hpp"
#include "controlplane/store/model/dependency_spec.hpp"
#include "controlplane/testing/test_support.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::controlplane {
namespace {

using takosumi::testing::FakeClock;
using takosumi::testing::TempDir;

class DependencyStoreTest : public ::testing::Test {
 protected:
  Capsule capsule(const std::string& workspace_id, const std::string& name) {
    CapsuleRequest req{name, {"file:///repo", "main", ""}, {}, {}, {}};
    req.output_allowlist = {{"out", {"out", "string", true}}};
    auto created = catalog_.create_capsule(workspace_id, req);
    EXPECT_TRUE(created) << created.error().to_string();
    return *created;
  }
  Result<Dependency> depend(const Capsule& consumer, const Capsule& producer) {
    return dependencies_.create(consumer, producer, {{"in", {"out", "string", true}}});
  }

  TempDir dir_;
  Database db_ = testing::open_test_db(dir_.path() / "control.db");
  FakeClock clock_{1000};
  CatalogStore catalog_{db_, clock_};
  DependencyStore dependencies_{db_, clock_};
  std::string ws_ = catalog_.create_workspace("one")->id;
};

TEST_F(DependencyStoreTest, AnEdgeThatClosesACycleIsRefusedNamingTheCycle) {
  const Capsule a = capsule(ws_, "a"), b = capsule(ws_, "b"), c = capsule(ws_, "c");
  ASSERT_TRUE(depend(a, b));  // a takes from b
  ASSERT_TRUE(depend(b, c));  // b takes from c
  auto closing = depend(c, a);
  ASSERT_FALSE(closing);
  EXPECT_EQ(closing.error().code, errc::kDependencyCycle);
  EXPECT_NE(closing.error().message.find(c.id + " -> " + a.id + " -> " + b.id + " -> " + c.id),
            std::string::npos)
      << closing.error().message;
  auto again = depend(a, b);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, errc::kConflict);
  ASSERT_TRUE(depend(a, c)) << "a diamond is not a cycle";
  EXPECT_EQ(dependencies_.as_consumer(a.id)->size(), 2u);
  EXPECT_EQ(dependencies_.as_producer(c.id)->size(), 2u);
  const std::string first = dependencies_.as_consumer(a.id)->front().id;
  EXPECT_EQ(dependencies_.get(first)->outputs.at("in").from, "out");
  ASSERT_TRUE(dependencies_.remove(first));
  EXPECT_EQ(dependencies_.remove(first).error().code, errc::kNotFound);
}

TEST_F(DependencyStoreTest, ARequestNeedsOneWorkspaceAPublicOutputAndAFreeVariable) {
  Capsule consumer = capsule(ws_, "app");
  const Capsule producer = capsule(ws_, "net");
  const Capsule elsewhere = capsule(catalog_.create_workspace("two")->id, "other");
  auto request = parse_dependency_request(
      {{"producerCapsuleId", producer.id},
       {"outputs", boost::json::object{{"in", boost::json::object{{"from", "out"}}}}}});
  ASSERT_TRUE(request) << request.error().to_string();
  EXPECT_EQ(request->outputs.at("in").type, "any");
  EXPECT_TRUE(request->outputs.at("in").required);
  EXPECT_TRUE(check_dependency(*request, consumer, producer, nullptr, {}));

  auto across = check_dependency(*request, consumer, elsewhere, nullptr, {});
  ASSERT_FALSE(across);
  EXPECT_NE(across.error().message.find("OutputShare"), std::string::npos);
  EXPECT_EQ(check_dependency(*request, consumer, consumer, nullptr, {}).error().code,
            errc::kDependencyCycle);
  auto private_output = *request;
  private_output.outputs.at("in").from = "internal";
  EXPECT_NE(check_dependency(private_output, consumer, producer, nullptr, {}).error().message.find(
                "not a public Output"),
            std::string::npos);
  Capsule gone = producer;
  gone.destroyed_at = 5;
  EXPECT_NE(check_dependency(*request, consumer, gone, nullptr, {}).error().message.find(
                "is destroyed"),
            std::string::npos);
  EXPECT_TRUE(check_not_sensitive(*request, producer, {"other"}));
  auto secret = check_not_sensitive(*request, producer, {"out"});
  ASSERT_FALSE(secret);
  EXPECT_EQ(secret.error().code, errc::kInvalidArgument);
  EXPECT_NE(secret.error().message.find("outputs.in.from \"out\""), std::string::npos)
      << secret.error().to_string();
  consumer.variables["in"] = "set already";
  EXPECT_NE(check_dependency(*request, consumer, producer, nullptr, {}).error().message.find(
                "already sets variable in"),
            std::string::npos);

  auto bad_type = parse_dependency_request(
      {{"producerCapsuleId", producer.id},
       {"outputs",
        boost::json::object{{"in", boost::json::object{{"from", "out"}, {"type", "int"}}}}}});
  ASSERT_FALSE(bad_type);
  EXPECT_NE(bad_type.error().message.find("outputs.in.type"), std::string::npos);
  auto none = parse_dependency_request(
      {{"producerCapsuleId", producer.id}, {"outputs", boost::json::object{}}});
  ASSERT_FALSE(none);
}

}  // namespace
}  // namespace takosumi::controlplane
