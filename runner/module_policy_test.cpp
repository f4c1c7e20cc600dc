#include "runner/module_policy.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "common/error_codes.hpp"
#include "runner/provider_lock.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using takosumi::testing::TempDir;
using Set = std::set<std::string>;
using List = std::vector<std::string>;

::testing::AssertionResult has_text(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

std::string reg(std::string_view ns_type) {
  return "registry.opentofu.org/" + std::string(ns_type);
}

void write(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

ModuleScan scan_of(const TempDir& dir) {
  auto scan = scan_module(dir.path());
  EXPECT_TRUE(scan) << scan.error().to_string();
  return scan ? *scan : ModuleScan{};
}

ModuleScan scan_text(std::string_view main_tf, std::string_view name = "main.tf") {
  TempDir dir("policy-");
  write(dir / std::string(name), main_tf);
  return scan_of(dir);
}

TEST(ModuleScan, ReadsRequiredProvidersWithAndWithoutHost) {
  auto scan = scan_text(R"(terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = "~> 5.0" }
    acme = {
      source  = "Example.com:8443/Acme/Thing"
      version = ">= 1"
    }
    short = { source = "random" }
    legacy = "~> 1.0"
    nover  = { version = "1.0" }
  }
}
)");
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.providers, (Set{reg("hashicorp/aws"), "example.com:8443/acme/thing",
                                 reg("hashicorp/random"), reg("hashicorp/legacy"),
                                 reg("hashicorp/nover")}));
  EXPECT_EQ(scan.files, (List{"main.tf"}));
}

TEST(ModuleScan, ImpliesProvidersFromTypesAliasesAndProviderBlocks) {
  auto scan = scan_text(R"(provider "google" { region = "x" }
provider "aws" {
  alias = "west"
}
resource "aws_instance" "a" { provider = aws.west }
resource "null_resource" "n" {}
data "http" "h" {
  url = "https://example.com"
}
ephemeral "random_password" "p" { length = 8 }
resource "terraform_data" "t" {}
data "terraform_remote_state" "s" {}
resource "thing_x" "y" {
  provider = mycloud.eu
}
import {
  to = dns_record.r
  id = "r"
}
terraform {
  required_providers {
    mycloud = { source = "acme/cloud" }
  }
}
)");
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.providers,
            (Set{reg("hashicorp/google"), reg("hashicorp/aws"), reg("hashicorp/null"),
                 reg("hashicorp/http"), reg("hashicorp/random"), reg("acme/cloud"),
                 reg("hashicorp/dns")}));
}

TEST(ModuleScan, ResolvesLocalNamesWithinEachModuleDirectory) {
  TempDir dir("policy-");
  write(dir / "versions.tf",
        "terraform {\n  required_providers {\n    aws = { source = \"acme/aws\" }\n  }\n}\n");
  write(dir / "main.tf",
        "resource \"aws_instance\" \"x\" {}\nmodule \"m\" {\n  source = \"./modules/m\"\n}\n");
  write(dir / "modules/m/main.tf", "resource \"aws_instance\" \"y\" {}\n");
  auto scan = scan_of(dir);
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.providers, (Set{reg("acme/aws"), reg("hashicorp/aws")}));
  EXPECT_EQ(scan.files, (List{"main.tf", "modules/m/main.tf", "versions.tf"}));
  auto trailing = scan_module(dir.path() / "");
  ASSERT_TRUE(trailing);
  EXPECT_TRUE(trailing->complete) << trailing->incomplete_reason;
}

TEST(ModuleScan, FindsEveryKindOfProvisionerWithFileAndLine) {
  auto scan = scan_text(R"(resource "null_resource" "x" {
  provisioner "local-exec" {
    command = "echo hi"
  }
  provisioner "remote-exec" {
    inline = ["true"]
  }
  provisioner "file" {
    source      = "a"
    destination = "/tmp/a"
  }
  provisioner "habitat" {}
}
removed {
  from = null_resource.old
  provisioner "local-exec" {
    when    = destroy
    command = "echo bye"
  }
}
)", "main.tofu");
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.provisioners, (List{"main.tofu:2: local-exec in null_resource.x",
                          "main.tofu:5: remote-exec in null_resource.x",
                          "main.tofu:8: file in null_resource.x",
                          "main.tofu:12: habitat in null_resource.x",
                          "main.tofu:16: local-exec in a removed block"}));
}

TEST(ModuleScan, TextInHeredocsStringsAndTemplatesOpensNoBlock) {
  auto scan = scan_text(R"(resource "null_resource" "x" {
  triggers = {
    script = <<EOT
provisioner "x" {
  command = "}"
}
  EOT_IS_NOT_THE_END
EOT
    json     = "}{ \" } ${jsonencode({ a = "}", b = ["{"] })} $${ literal } %%{ literal }"
    tmpl     = "%{ if true }}%{ endif }${"}"}"
    indented = <<-EOT
      provisioner "y" {
      }
      EOT
    spanning = <<EOT
${join(",", [
EOT
])}
EOT
  }
  provisioner "local-exec" {
    command = "echo ${self.id} }"
  }
}
)");
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.provisioners, (List{"main.tf:21: local-exec in null_resource.x"}));
  EXPECT_EQ(scan.providers, (Set{reg("hashicorp/null")}));
}

// hclsyntax ends a heredoc at a line whose trimmed text is the marker, for << as for <<-, and
// trims Unicode spaces too; a scanner that missed that would read the provisioner as text.
TEST(ModuleScan, HeredocEndsWhereOpenTofuEndsIt) {
  for (std::string indent : {"    ", "\t", "\xC2\xA0", "\xE3\x80\x80"}) {
    auto scan = scan_text("resource \"null_resource\" \"y\" {\n  triggers = {\n"
                          "    a = <<EOT\ntext\n" +
                          indent + "EOT" + indent +
                          "\n  }\n  provisioner \"local-exec\" { command = \"x\" }\n}\n");
    EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
    EXPECT_EQ(scan.provisioners, (List{"main.tf:7: local-exec in null_resource.y"}));
  }
}

TEST(ModuleScan, IgnoresBlocksInComments) {
  auto scan = scan_text(R"(# provisioner "local-exec" {
// resource "aws_instance" "x" {
/* data "external" "e" {
   provisioner "local-exec" {} */
resource "null_resource" "x" { # }
  // }
  triggers = { a = 1 } /* } */
}
)");
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.providers, (Set{reg("hashicorp/null")}));
  EXPECT_TRUE(scan.provisioners.empty());
  EXPECT_TRUE(scan.external_data.empty());
}

TEST(ModuleScan, ReadsJsonSyntaxInArrayAndObjectForms) {
  TempDir dir("policy-");
  write(dir / "main.tf.json", R"({
  "terraform": [{"required_providers": [{"aws": {"source": "hashicorp/aws"}}]}],
  "resource": {
    "null_resource": {
      "a": {
        "provisioner": [
          {"local-exec": {"command": "x"}},
          {"file": {"source": "a", "destination": "b"}}
        ]
      },
      "b": [{"provisioner": {"remote-exec": {"inline": ["x"]}}}]
    },
    "aws_instance": {"c": {"provider": "aws.west"}}
  },
  "data": [{"external": {
    "e": {"program": ["sh"]}
  }}],
  "provider": {"google": [{}, {"alias": "x"}]}
}
)");
  write(dir / "more.tofu.json",
        R"({"terraform": {"required_providers": {"random": {"source": "Example.COM/Acme/Random"}}},
 "resource": {"random_id": {"r": {}}}})");
  auto scan = scan_of(dir);
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.providers, (Set{reg("hashicorp/aws"), reg("hashicorp/null"),
                                 reg("hashicorp/external"), reg("hashicorp/google"),
                                 "example.com/acme/random"}));
  EXPECT_EQ(scan.provisioners, (List{"main.tf.json:7: local-exec in null_resource.a",
                                             "main.tf.json:8: file in null_resource.a",
                                             "main.tf.json:11: remote-exec in null_resource.b"}));
  EXPECT_EQ(scan.external_data, (List{"main.tf.json:16: data.external.e"}));
  EXPECT_EQ(scan.files, (List{"main.tf.json", "more.tofu.json"}));
}

// boost::json keeps one of two equal keys; OpenTofu reads both, so the scan cannot trust it.
TEST(ModuleScan, JsonWithARepeatedKeyIsIncomplete) {
  auto scan = scan_text(R"({"resource": {"null_resource": {"a": {}}},
 "resource": {"null_resource": {"b": {"provisioner": {"local-exec": {"command": "x"}}}}}})",
                        "main.tf.json");
  EXPECT_FALSE(scan.complete);
  EXPECT_TRUE(
      has_text(scan.incomplete_reason, "main.tf.json: line 2: key \"resource\" appears twice"));
}

TEST(ModuleScan, FindsExternalData) {
  auto scan = scan_text(R"(terraform {
  required_providers {
    ext = { source = "hashicorp/external" }
  }
}
data "external" "x" {
  program = ["sh", "-c", "id"]
}
data "external" "y" {
  provider = ext
}
check "health" {
  data "external" "z" {}
}
)");
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.external_data, (List{"main.tf:6: data.external.x",
                                              "main.tf:9: data.external.y",
                                              "main.tf:13: data.external.z"}));
  EXPECT_EQ(scan.providers, (Set{reg("hashicorp/external")}));
}

// OpenTofu decodes escapes in labels and strings; "\u0065xternal" is the external data source.
TEST(ModuleScan, DecodesEscapesInLabelsAndSources) {
  auto scan = scan_text(
      "data \"\\u0065xternal\" \"w\" {}\nterraform {\n  required_providers {\n"
      "    x = { source = \"acme/\\u0078\" }\n  }\n}\nresource \"x_y\" \"z\" {}\n");
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.external_data, (List{"main.tf:1: data.external.w"}));
  EXPECT_EQ(scan.providers, (Set{reg("hashicorp/external"), reg("acme/x")}));
}

TEST(ModuleScan, ScansLocalModulesRecursivelyAndSkipsHiddenFiles) {
  TempDir dir("policy-");
  write(dir / "main.tf", "module \"net\" {\n  source = \"./modules/net\"\n}\n");
  write(dir / "modules/net/main.tf", "module \"sub\" {\n  source = \"../sub\"\n}\n");
  write(dir / "modules/sub/main.tf",
        "resource \"null_resource\" \"s\" {\n"
        "  provisioner \"local-exec\" { command = \"x\" }\n}\n");
  write(dir / ".git/hooks/x.tf", "resource \"aws_instance\" \"hidden\" {}\n");
  write(dir / ".editor.tf", "resource \"aws_instance\" \"ignored_by_tofu\" {}\n");
  write(dir / "README.md", "provisioner \"local-exec\" {}\n");
  auto scan = scan_of(dir);
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.files, (List{"main.tf", "modules/net/main.tf", "modules/sub/main.tf"}));
  EXPECT_EQ(scan.provisioners, (List{"modules/sub/main.tf:2: local-exec in null_resource.s"}));
  EXPECT_EQ(scan.providers, (Set{reg("hashicorp/null")}));
}

TEST(ModuleScan, RemoteModuleIsPendingUntilInitDownloadedIt) {
  TempDir dir("policy-");
  write(dir / "main.tf", "module \"vpc\" {\n  source  = \"terraform-aws-modules/vpc/aws\"\n}\n");
  auto before = scan_of(dir);
  EXPECT_TRUE(before.complete) << before.incomplete_reason;
  EXPECT_TRUE(before.remote_modules_pending);

  write(dir / ".terraform/modules/vpc/main.tf",
        "resource \"aws_vpc\" \"v\" {\n  provisioner \"local-exec\" { command = \"x\" }\n}\n"
        "module \"local\" {\n  source = \"./sub\"\n}\n");
  write(dir / ".terraform/modules/vpc/sub/main.tf", "resource \"random_id\" \"r\" {}\n");
  write(dir / ".terraform/providers/evil.tf", "this is { not scanned\n");
  auto after = scan_of(dir);
  EXPECT_TRUE(after.complete) << after.incomplete_reason;
  EXPECT_EQ(after.providers, (Set{reg("hashicorp/aws"), reg("hashicorp/random")}));
  EXPECT_EQ(after.provisioners,
            (List{".terraform/modules/vpc/main.tf:2: local-exec in aws_vpc.v"}));
  EXPECT_EQ(after.files, (List{".terraform/modules/vpc/main.tf",
                                       ".terraform/modules/vpc/sub/main.tf", "main.tf"}));
}

TEST(ModuleScan, LocalModuleOutsideTheTreeOrInAHiddenDirectoryIsIncomplete) {
  auto outside = scan_text("module \"o\" {\n  source = \"../../elsewhere\"\n}\n");
  EXPECT_FALSE(outside.complete);
  EXPECT_TRUE(has_text(outside.incomplete_reason, "is outside the scanned directory"));
  auto hidden = scan_text("module \"h\" {\n  source = \"./.hidden/m\"\n}\n");
  EXPECT_FALSE(hidden.complete);
  EXPECT_TRUE(has_text(hidden.incomplete_reason, "is in a hidden directory"));
  auto templated = scan_text("module \"t\" {\n  source = \"./${var.x}\"\n}\n");
  EXPECT_FALSE(templated.complete);
  EXPECT_TRUE(has_text(templated.incomplete_reason, "module \"t\" has no literal source"));
}

TEST(ModuleScan, WhatItCannotFollowMakesItIncomplete) {
  auto heredoc = scan_text("locals {\n  a = <<EOT\nnever ends\n}\n");
  EXPECT_FALSE(heredoc.complete);
  EXPECT_TRUE(has_text(heredoc.incomplete_reason, "main.tf: line 2: unterminated heredoc"));

  auto braces = scan_text("resource \"null_resource\" \"x\" {\n");
  EXPECT_FALSE(braces.complete);
  EXPECT_TRUE(has_text(braces.incomplete_reason, "main.tf: line 2: end of file inside a block"));

  auto large = scan_text("# " + std::string(4 * 1024 * 1024, 'x') + "\n");
  EXPECT_FALSE(large.complete);
  EXPECT_TRUE(has_text(large.incomplete_reason, "main.tf: file too large"));

  TempDir linked("policy-");
  write(linked / "real.txt", "resource \"aws_instance\" \"x\" {}\n");
  fs::create_symlink(linked / "real.txt", linked / "main.tf");
  auto link = scan_of(linked);
  EXPECT_FALSE(link.complete);
  EXPECT_TRUE(has_text(link.incomplete_reason, "main.tf: is a symbolic link"));
}

TEST(ModuleScan, LimitsDepthAndFileCount) {
  TempDir deep("policy-");
  fs::path p = deep.path();
  for (int i = 0; i < 66; ++i) p /= "d";
  write(p / "main.tf", "");
  auto too_deep = scan_of(deep);
  EXPECT_FALSE(too_deep.complete);
  EXPECT_TRUE(has_text(too_deep.incomplete_reason, "directories nested deeper than 64"));

  TempDir many("policy-");
  for (int i = 0; i <= 10000; ++i) std::ofstream(many / ("f" + std::to_string(i) + ".tf"));
  auto too_many = scan_of(many);
  EXPECT_FALSE(too_many.complete);
  EXPECT_EQ(too_many.incomplete_reason, "more than 10000 configuration files");
  EXPECT_EQ(too_many.files.size(), 10000u);
}

TEST(ModuleScan, FailsOnlyWhenTheDirectoryCannotBeListed) {
  TempDir dir("policy-");
  auto scan = scan_module(dir / "missing");
  ASSERT_FALSE(scan);
  EXPECT_EQ(scan.error().code, errc::kIoError);
}

// The shape of the repository's example module, with its one-line blocks.
TEST(ModuleScan, ReadsTheExampleModule) {
  auto scan = scan_text(
      R"(terraform { required_providers { local = { source = "hashicorp/local" } random = { source = "hashicorp/random" } } }
resource "random_password" "db" { length = 32 }
resource "local_file" "f" { filename = "${path.module}/x" content = "}" }
)");
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.providers, (Set{reg("hashicorp/local"), reg("hashicorp/random")}));
  protocol::RunPolicy policy;
  policy.allowed_providers = List{reg("hashicorp/local"), reg("hashicorp/random")};
  EXPECT_TRUE(check_module_policy(scan, policy));
}

ModuleScan clean_scan() {
  ModuleScan scan;
  scan.providers = {reg("hashicorp/null"), reg("hashicorp/aws")};
  return scan;
}

TEST(ModulePolicy, RefusesProvidersNotAllowedOrDenied) {
  protocol::RunPolicy allow;
  allow.allowed_providers = std::vector<std::string>{reg("hashicorp/null")};
  auto refused = check_module_policy(clean_scan(), allow);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kProviderPolicyDenied);
  EXPECT_TRUE(has_text(refused.error().message,
                       "the module uses provider registry.opentofu.org/hashicorp/aws, which is not "
                        "on the Run's allowed provider list; add it to allowedProviders"));

  protocol::RunPolicy deny;
  deny.denied_providers = {reg("hashicorp/aws")};
  auto denied = check_module_policy(clean_scan(), deny);
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code, errc::kProviderPolicyDenied);
  EXPECT_TRUE(has_text(denied.error().message, "hashicorp/aws, which the Run's policy denies; "
                                                "remove it from deniedProviders"));

  allow.allowed_providers->push_back(reg("hashicorp/aws"));
  EXPECT_TRUE(check_module_policy(clean_scan(), allow));
}

TEST(ModulePolicy, RefusesProvisionersAndExternalDataUnlessAllowed) {
  auto scan = clean_scan();
  scan.provisioners = {"main.tf:2: local-exec in null_resource.x",
                       "main.tf:9: file in null_resource.y"};
  scan.external_data = {"main.tf:12: data.external.e"};
  protocol::RunPolicy policy;
  auto provisioner = check_module_policy(scan, policy);
  ASSERT_FALSE(provisioner);
  EXPECT_EQ(provisioner.error().code, errc::kProvisionerDenied);
  EXPECT_TRUE(has_text(provisioner.error().message,
                       "main.tf:2: local-exec in null_resource.x (and 1 more): provisioners"));
  EXPECT_TRUE(has_text(provisioner.error().message, "set allowProvisioners to true"));

  policy.allow_provisioners = true;
  auto external = check_module_policy(scan, policy);
  ASSERT_FALSE(external);
  EXPECT_EQ(external.error().code, errc::kExternalDataDenied);
  EXPECT_TRUE(has_text(external.error().message, "main.tf:12: data.external.e: the external data"));
  EXPECT_TRUE(has_text(external.error().message, "set allowExternalData to true"));

  policy.allow_external_data = true;
  EXPECT_TRUE(check_module_policy(scan, policy));
}

TEST(ModulePolicy, IncompleteScanIsRefusedWheneverThePolicyRefusesSomething) {
  auto scan = clean_scan();
  scan.complete = false;
  scan.incomplete_reason = "main.tf:1: a symbolic link";
  protocol::RunPolicy open;
  open.allow_provisioners = true;
  open.allow_external_data = true;
  EXPECT_TRUE(check_module_policy(scan, open));
  auto no_provisioners = open;
  no_provisioners.allow_provisioners = false;
  EXPECT_EQ(check_module_policy(scan, no_provisioners).error().code, errc::kProvisionerDenied);
  auto no_external = open;
  no_external.allow_external_data = false;
  EXPECT_EQ(check_module_policy(scan, no_external).error().code, errc::kExternalDataDenied);

  protocol::RunPolicy deny;
  deny.denied_providers = {reg("hashicorp/external")};
  auto refused = check_module_policy(scan, deny);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kProviderPolicyDenied);
  EXPECT_EQ(refused.error().message,
            "the module could not be fully scanned: " + scan.incomplete_reason +
                "; a Run with a provider list refuses what it cannot check");

  protocol::RunPolicy allow;
  allow.allowed_providers = std::vector<std::string>{reg("hashicorp/null"), reg("hashicorp/aws")};
  EXPECT_EQ(check_module_policy(scan, allow).error().code, errc::kProviderPolicyDenied);
}

TEST(ModulePolicy, ChecksTheProvidersTheLockFileSelected) {
  const auto locked = locked_providers(
      "provider \"registry.opentofu.org/hashicorp/null\" {\n  version = \"3.2.2\"\n}\n"
      "provider \"registry.opentofu.org/hashicorp/aws\" {\n  version = \"5.0.0\"\n}\n");
  protocol::RunPolicy policy;
  policy.allowed_providers = std::vector<std::string>{reg("hashicorp/null")};
  auto refused = check_locked_providers(locked, policy);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kProviderPolicyDenied);
  EXPECT_TRUE(has_text(refused.error().message,
                       "the lock file selects provider registry.opentofu.org/hashicorp/aws"));
  policy.allowed_providers->push_back(reg("hashicorp/aws"));
  EXPECT_TRUE(check_locked_providers(locked, policy));
  EXPECT_TRUE(check_locked_providers({}, policy));
}

}  // namespace
}  // namespace takosumi::runner
