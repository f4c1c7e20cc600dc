#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "protocol/credential_names.hpp"
#include "common/failure_codes.hpp"
#include "protocol/job_manifest.hpp"
#include "protocol/secret_bundle.hpp"
#include "tests/support/test_manifest.hpp"

namespace takosumi::protocol {
namespace {

SecretBundle sample_bundle() {
  SecretBundle b;
  ConnectionSecret c;
  c.id = "conn_1";
  c.name = "aws-prod";
  c.provider = "registry.opentofu.org/hashicorp/aws";
  c.mode = AuthMode::env;
  c.values.emplace("AWS_SECRET_ACCESS_KEY", SecretBytes::from_string("s3cr\"et\nvalue"));
  b.connections.push_back(std::move(c));
  ConnectionSecret f;
  f.id = "conn_2";
  f.name = "gcp";
  f.provider = "registry.opentofu.org/hashicorp/google";
  f.mode = AuthMode::files;
  f.values.emplace("GOOGLE_APPLICATION_CREDENTIALS", SecretBytes::from_string("{\"k\":1}"));
  b.connections.push_back(std::move(f));
  b.sensitive_variables.emplace("db_password", SecretBytes::from_string("hunter2-long"));
  return b;
}

TEST(CredentialNames, AcceptsUpperCaseNames) {
  EXPECT_TRUE(validate_credential_name("AWS_ACCESS_KEY_ID"));
  EXPECT_TRUE(validate_credential_name("_X1"));
}

TEST(CredentialNames, RefusesBadShapesWithTheRule) {
  for (std::string_view bad : {"", "aws_key", "1ABC", "A-B", "A B", "ÄB"}) {
    auto r = validate_credential_name(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, errc::kInvalidArgument);
    EXPECT_NE(r.error().message.find("^[A-Z_][A-Z0-9_]*$"), std::string::npos);
  }
  EXPECT_FALSE(validate_credential_name(std::string(129, 'A')));
}

TEST(CredentialNames, RefusesNamesTheRunnerOwns) {
  for (std::string_view reserved :
       {"PATH", "HOME", "TMPDIR", "HTTPS_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR",
        "TF_VAR_X", "TF_LOG", "TAKOSUMI_POOL_TOKEN", "OPENTOFU_X", "LD_PRELOAD", "LC_ALL",
        "GODEBUG"}) {
    auto r = validate_credential_name(reserved);
    ASSERT_FALSE(r) << reserved;
    EXPECT_NE(r.error().message.find("reserved"), std::string::npos) << r.error().message;
  }
}

// Names that change how a program starts: the shell's, the interpreters', the resolver's, the
// service manager's.
TEST(CredentialNames, RefusesNamesThatAlterHowProgramsStart) {
  for (std::string_view name :
       {"NOTIFY_SOCKET", "PERL5OPT", "PERL5LIB", "PYTHONSTARTUP", "PYTHONPATH", "PS4",
        "PROMPT_COMMAND", "HOSTALIASES", "RES_OPTIONS", "LOCALDOMAIN", "BASH_ENV", "ENV",
        "BASH_FUNC_ls%%", "RUBYOPT", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "NODE_OPTIONS",
        "GLIBC_TUNABLES", "MALLOC_CHECK_", "GCONV_PATH", "OPENSSL_CONF", "XDG_CONFIG_HOME",
        "SSH_AUTH_SOCK", "LISTEN_FDS", "LUA_INIT", "EDITOR", "LESSOPEN", "SSLKEYLOGFILE"}) {
    auto r = validate_credential_name(name);
    ASSERT_FALSE(r) << name;
  }
  for (std::string_view fine : {"AWS_ACCESS_KEY_ID", "GOOGLE_CREDENTIALS", "ARM_CLIENT_SECRET",
                                "KUBECONFIG", "DIGITALOCEAN_TOKEN", "PGPASSWORD"})
    EXPECT_TRUE(validate_credential_name(fine)) << fine;
}

TEST(CredentialNames, VariableNames) {
  EXPECT_TRUE(is_valid_variable_name("db_password"));
  EXPECT_TRUE(is_valid_variable_name("A-b_9"));
  EXPECT_FALSE(is_valid_variable_name("9a"));
  EXPECT_FALSE(is_valid_variable_name("a.b"));
  EXPECT_FALSE(is_valid_variable_name(""));
}

TEST(SecretBundle, RoundTripsValuesExactly) {
  auto text = serialize_secret_bundle(sample_bundle());
  auto parsed = parse_secret_bundle(text.reveal_as_string());
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  ASSERT_EQ(parsed->connections.size(), 2u);
  EXPECT_EQ(parsed->connections[0].provider, "registry.opentofu.org/hashicorp/aws");
  EXPECT_EQ(parsed->connections[0].values.at("AWS_SECRET_ACCESS_KEY").reveal_as_string(),
            "s3cr\"et\nvalue");
  EXPECT_EQ(parsed->connections[1].mode, AuthMode::files);
  EXPECT_EQ(parsed->sensitive_variables.at("db_password").reveal_as_string(), "hunter2-long");
}

TEST(SecretBundle, RefusesReservedAndDuplicateNames) {
  auto b = sample_bundle();
  b.connections[0].values.emplace("LD_PRELOAD", SecretBytes::from_string("/tmp/x.so"));
  auto r = validate_secret_bundle(b);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("LD_PRELOAD"), std::string::npos);

  auto d = sample_bundle();
  d.connections[1].values.emplace("AWS_SECRET_ACCESS_KEY", SecretBytes::from_string("x"));
  auto dup = validate_secret_bundle(d);
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().message.find("another Connection"), std::string::npos);
}

TEST(SecretBundle, RefusesUnqualifiedProviders) {
  EXPECT_TRUE(is_qualified_provider_address("registry.opentofu.org/hashicorp/aws"));
  EXPECT_TRUE(is_qualified_provider_address("example.com:8443/acme/thing"));
  EXPECT_FALSE(is_qualified_provider_address("hashicorp/aws"));
  EXPECT_FALSE(is_qualified_provider_address("aws"));
  EXPECT_FALSE(is_qualified_provider_address("registry.opentofu.org//aws"));
  EXPECT_FALSE(is_qualified_provider_address("Registry.opentofu.org/hashicorp/aws"));
  auto b = sample_bundle();
  b.connections[0].provider = "hashicorp/aws";
  EXPECT_FALSE(validate_secret_bundle(b));
}

TEST(SecretBundle, ParseErrorsAreManifestInvalidAndNeverEchoValues) {
  auto r = parse_secret_bundle(R"({"connections":[{"id":"c","name":"n","provider":"a.b/c/d",)"
                               R"("authMode":"env","values":{"path":"CANARY-VALUE-1"}}]})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::kManifestInvalid);
  EXPECT_EQ(r.error().message.find("CANARY-VALUE-1"), std::string::npos);
  EXPECT_FALSE(parse_secret_bundle("not json"));
  auto dup = parse_secret_bundle(R"({"connections":[],"sensitiveVariables":{"pw":"CANARY-1",)"
                                 R"("pw":"CANARY-2"}})");
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, errc::kManifestInvalid);
  EXPECT_NE(dup.error().message.find("duplicate key \"pw\" in sensitiveVariables"),
            std::string::npos) << dup.error().message;
  EXPECT_EQ(dup.error().message.find("CANARY"), std::string::npos);
  EXPECT_FALSE(parse_secret_bundle(std::string(kMaxSecretBundleBytes + 1, ' ')));
}

TEST(SecretBundle, ManifestCarriesTheSealedText) {
  auto m = testing::test_manifest("run_1", RunType::plan, {"file:///x", std::string(40, 'a'), ""});
  m.nonce = "n";
  m.sealed_secrets = "c2VhbGVk";
  auto back = job_manifest_from_json(to_json(m));
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->sealed_secrets, "c2VhbGVk");
  m.sealed_secrets.clear();
  EXPECT_FALSE(to_json(m).contains("secrets"));
}

}  // namespace
}  // namespace takosumi::protocol
