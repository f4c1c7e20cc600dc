#include "redaction/bundle_secrets.hpp"

#include <gtest/gtest.h>

namespace takosumi::redaction {
namespace {

TEST(BundleSecrets, EveryValueOfTheBundleIsASecretAndAShortOneIsNamedNotShown) {
  protocol::SecretBundle bundle;
  protocol::ConnectionSecret aws;
  aws.name = "aws-prod";
  aws.values.emplace("AWS_SECRET_ACCESS_KEY", SecretBytes::from_string("wJalrXUtnFEMI/K7MDENG"));
  aws.values.emplace("AWS_REGION_PIN", SecretBytes::from_string("eu1"));
  bundle.connections.push_back(std::move(aws));
  bundle.sensitive_variables.emplace("db_password", SecretBytes::from_string("correct horse battery"));
  SecretSet secrets;
  const auto said = collect_bundle_secrets(bundle, secrets);
  EXPECT_TRUE(secrets.contains_secret("key=wJalrXUtnFEMI/K7MDENG"));
  EXPECT_TRUE(secrets.contains_secret("pw: correct horse battery"));
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("the value of AWS_REGION_PIN (Connection aws-prod)"), std::string::npos) << said[0];
  EXPECT_EQ(said[0].find("eu1"), std::string::npos) << "never the value";
}

}  // namespace
}  // namespace takosumi::redaction
