// The runner publishes Outputs and the control plane re-checks them; both now run the one type
// check of protocol/output_type.hpp. Before, an Output mapped with an unknown type failed the Run
// on the agent and was silently dropped by the control plane. Now both refuse it, naming the type
// and what to fix, each with its layer's code (a Run failure code on the agent).
#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "controlplane/store/model/capsule_spec.hpp"
#include "common/failure_codes.hpp"
#include "runner/plan/output_filter.hpp"

namespace takosumi {
namespace {

namespace json = boost::json;

constexpr std::string_view kExpected = "unknown output type \"map\" (known: string, number, bool, "
                                       "any); fix the Capsule's outputAllowlist";

TEST(OutputTypeAgreement, UnknownTypeIsRefusedByRunnerAndControlPlaneAlike) {
  const protocol::OutputMapping mapping{"endpoint", "map", false};
  auto runner_side = runner::filter_outputs(
      R"({"endpoint":{"sensitive":false,"type":"string","value":"db.internal"}})",
      {{"url", mapping}});
  ASSERT_FALSE(runner_side);
  EXPECT_EQ(runner_side.error().code, errc::kManifestInvalid);
  EXPECT_NE(runner_side.error().message.find(kExpected), std::string::npos)
      << runner_side.error().message;

  auto control_side = controlplane::filter_outputs(json::object{{"url", "db.internal"}},
                                                   controlplane::OutputAllowlist{{"url", mapping}});
  ASSERT_FALSE(control_side) << "the control plane must not drop the Output silently";
  EXPECT_EQ(control_side.error().code, errc::kInvalidArgument);
  EXPECT_NE(control_side.error().message.find(kExpected), std::string::npos)
      << control_side.error().message;
}

TEST(OutputTypeAgreement, KnownTypesPublishTheSameValues) {
  const protocol::OutputMapping mapping{"endpoint", "string", false};
  auto runner_side = runner::filter_outputs(
      R"({"endpoint":{"sensitive":false,"type":"string","value":"db.internal"}})",
      {{"url", mapping}});
  ASSERT_TRUE(runner_side) << runner_side.error().message;
  auto control_side = controlplane::filter_outputs(runner_side->outputs,
                                                   controlplane::OutputAllowlist{{"url", mapping}});
  ASSERT_TRUE(control_side) << control_side.error().message;
  EXPECT_EQ(*control_side, runner_side->outputs);
}

}  // namespace
}  // namespace takosumi
