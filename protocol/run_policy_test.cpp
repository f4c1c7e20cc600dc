#include <gtest/gtest.h>

#include "protocol/job_manifest.hpp"
#include "protocol/run_policy.hpp"

namespace takosumi::protocol {
namespace {

const std::string kAws = "registry.opentofu.org/hashicorp/aws";
const std::string kNull = "registry.opentofu.org/hashicorp/null";
const std::string kLocal = "registry.opentofu.org/hashicorp/local";

using List = std::vector<std::string>;

TEST(RunPolicy, CombineOnlyTakesPermissionsAway) {
  RunPolicy pool;
  pool.allow_provisioners = true;
  pool.allow_external_data = true;
  RunPolicy run;
  run.allow_provisioners = true;
  auto c = combine(pool, run);
  EXPECT_TRUE(c.allow_provisioners);
  EXPECT_FALSE(c.allow_external_data) << "the Capsule did not allow it";
  EXPECT_FALSE(c.allowed_providers) << "no side has an allow list";
  EXPECT_EQ(c.network, NetworkMode::full);

  pool.allow_provisioners = false;
  EXPECT_FALSE(combine(pool, run).allow_provisioners) << "the pool forbids it";
  run.network = NetworkMode::none;
  EXPECT_EQ(combine(pool, run).network, NetworkMode::none);
}

TEST(RunPolicy, AllowListsIntersectAndDenyListsUnite) {
  RunPolicy pool;
  pool.allowed_providers = List{kLocal, kNull};
  pool.denied_providers = {kAws};
  RunPolicy run;
  EXPECT_EQ(combine(pool, run).allowed_providers, (List{kLocal, kNull}));
  run.allowed_providers = List{kAws, kNull};
  run.denied_providers = {kLocal};
  auto c = combine(pool, run);
  EXPECT_EQ(c.allowed_providers, (List{kNull}));
  EXPECT_EQ(c.denied_providers, (List{kAws, kLocal}));
  run.allowed_providers = List{kAws};
  EXPECT_EQ(combine(pool, run).allowed_providers, List{}) << "disjoint lists allow nothing";
}

TEST(RunPolicy, JsonRoundTripAndValidation) {
  RunPolicy p;
  p.allowed_providers = List{kNull};
  p.denied_providers = {kAws};
  p.allow_provisioners = true;
  p.network = NetworkMode::none;
  auto back = run_policy_from_json(to_json(p));
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(*back, p);

  auto bad = run_policy_from_json(json::object{{"allowedProviders", json::array{"hashicorp/aws"}}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("fully qualified"), std::string::npos);
  EXPECT_FALSE(run_policy_from_json(json::object{{"network", "host"}}));
  auto empty = run_policy_from_json(json::object{});
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, RunPolicy{});
}

}  // namespace
}  // namespace takosumi::protocol
