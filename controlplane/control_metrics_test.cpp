// The queue-depth series an autoscaler reads, by agent pool and required labels: a Run counts
// under its Capsule's pool and labels, leaves the count when an agent takes it, and a series that
// drained shows 0 for ten minutes and then goes (every pool's unlabelled series stays).
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

TEST_F(ControlMetricsTest, QueueDepthIsByPoolAndRequiredLabelsAndDrainedSeriesGoAfterAWhile) {
  ASSERT_TRUE(pools_.create({.name = "gpu", .workspaces = {"*"}}));
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
  const Agent gpu = *agents_.authenticate(cred->agent_token);
  auto jobs = claim(gpu, 2);
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_TRUE(queue_.completion().complete(jobs[0].claimed.run.id, gpu, report(jobs[0])));
  text = scrape();
  EXPECT_NE(text.find("takosumi_control_queue_depth{labels=\"cuda,region=eu\",pool=\"gpu\"} 0"),
            std::string::npos)
      << "a drained series shows 0:\n" << text;
  clock_.advance(599);
  text = scrape();
  EXPECT_NE(text.find("takosumi_control_queue_depth{labels=\"cuda,region=eu\",pool=\"gpu\"} 0"),
            std::string::npos)
      << "for ten minutes, whatever the scrape interval:\n" << text;
  clock_.advance(1);
  text = scrape();
  EXPECT_EQ(text.find("labels=\"cuda,region=eu\""), std::string::npos) << "then it goes:\n" << text;
  EXPECT_NE(text.find("takosumi_control_queue_depth{labels=\"\",pool=\"gpu\"} 0"),
            std::string::npos)
      << "every pool's unlabelled series stays:\n" << text;
  EXPECT_NE(text.find("takosumi_control_queue_depth{labels=\"\",pool=\"default\"} 1"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace takosumi::controlplane
