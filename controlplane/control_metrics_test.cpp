// The queue-depth series an autoscaler reads, by agent pool and required labels: a Run counts
// under its Capsule's pool and labels, leaves the count when an agent takes it, and a series that
// drained shows 0 once and is then dropped (the default pool's stays).
#include <prometheus/text_serializer.h>

#include "controlplane/control_metrics.hpp"
#include "controlplane/testing/run_queue_fixture.hpp"

namespace takosumi::controlplane {
namespace {

class ControlMetricsTest : public RunQueueTest {
 protected:
  std::string scrape() {
    EXPECT_TRUE(metrics_.refresh(db_, clock_, 0));
    return prometheus::TextSerializer().Serialize(metrics_.registry()->Collect());
  }

  ControlMetrics metrics_{"test", {}};
};

TEST_F(ControlMetricsTest, QueueDepthIsByPoolAndRequiredLabelsAndDrainedSeriesGo) {
  ASSERT_TRUE(pools_.create("gpu", {}, "admin"));
  Capsule trainer = capsule("trainer");
  ASSERT_TRUE(catalog_.set_agent_requirements(trainer.id, {"gpu", {"cuda", "region=eu"}}));
  plan(*catalog_.get_capsule(trainer.id));
  plan(capsule("web"));

  std::string text = scrape();
  EXPECT_NE(text.find("takosumi_control_queue_depth{labels=\"cuda,region=eu\",pool=\"gpu\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("takosumi_control_queue_depth{labels=\"\",pool=\"default\"} 1"),
            std::string::npos)
      << text;

  auto cred = agents_.register_agent({"gpu-1", "0.1.0", {"cuda", "region=eu"}, 2, "box", "sign"},
                                     RegistrationContext{"ptk_gpu", "", "gpu"});
  ASSERT_TRUE(cred);
  EXPECT_EQ(claim(*agents_.authenticate(cred->agent_token), 2).size(), 1u);
  text = scrape();
  EXPECT_NE(text.find("takosumi_control_queue_depth{labels=\"cuda,region=eu\",pool=\"gpu\"} 0"),
            std::string::npos)
      << "a drained series shows 0 once:\n" << text;
  text = scrape();
  EXPECT_EQ(text.find("pool=\"gpu\""), std::string::npos) << "then it is dropped:\n" << text;
  EXPECT_NE(text.find("takosumi_control_queue_depth{labels=\"\",pool=\"default\"} 1"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace takosumi::controlplane
