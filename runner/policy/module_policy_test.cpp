#include "common/failure_codes.hpp"
#include "runner/policy/module_policy.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>

#include "common/error_codes.hpp"
#include "runner/policy/module_files.hpp"
#include "runner/policy/provider_lock.hpp"
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

TEST(ModuleScan, LocalModuleOutsideTheCheckoutIsIncompleteAndHiddenDirectoriesAreRead) {
  auto outside = scan_text("module \"o\" {\n  source = \"../../elsewhere\"\n}\n");
  EXPECT_FALSE(outside.complete);
  EXPECT_TRUE(has_text(outside.incomplete_reason,
                       "main.tf:1: module \"o\" source \"../../elsewhere\" leads outside the checkout"));
  auto missing = scan_text("module \"m\" {\n  source = \"./missing\"\n}\n");
  EXPECT_FALSE(missing.complete);
  EXPECT_TRUE(has_text(missing.incomplete_reason, "is dangling (missing does not exist)"));

  TempDir dir("policy-");
  write(dir / "main.tf", "module \"h\" {\n  source = \"./.hidden/m\"\n}\n");
  write(dir / ".hidden/m/main.tf", "resource \"null_resource\" \"h\" {\n"
                                   "  provisioner \"local-exec\" { command = \"x\" }\n}\n");
  // Never called, still read: the scan vouches for every directory of the tree.
  write(dir / ".uncalled/main.tf", "data \"external\" \"e\" {\n  program = [\"x\"]\n}\n");
  auto hidden = scan_of(dir);
  EXPECT_TRUE(hidden.complete) << hidden.incomplete_reason;
  EXPECT_EQ(hidden.provisioners, (List{".hidden/m/main.tf:2: local-exec in null_resource.h"}));
  EXPECT_EQ(hidden.external_data, (List{".uncalled/main.tf:1: data.external.e"}));

  auto templated = scan_text("module \"t\" {\n  source = \"./${var.x}\"\n}\n");
  EXPECT_FALSE(templated.complete);
  EXPECT_TRUE(has_text(templated.incomplete_reason, "module \"t\" has no literal source"));
}

// The monorepo layout: the Capsule's module path is infra/app, which calls a shared module two
// levels up. Everything the module reaches inside the checkout is read; nothing outside it is.
TEST(ModuleScan, FollowsLocalModuleCallsAcrossTheCheckout) {
  TempDir repo("policy-");
  write(repo / "infra/app/main.tf", "module \"label\" {\n  source = \"../../modules/label\"\n}\n");
  write(repo / "modules/label/main.tf", "module \"inner\" {\n  source = \"../inner\"\n}\n"
                                        "resource \"random_id\" \"r\" {}\n");
  write(repo / "modules/inner/main.tf", "resource \"null_resource\" \"i\" {\n"
                                        "  provisioner \"local-exec\" { command = \"x\" }\n}\n");
  write(repo / "modules/unused/main.tf", "resource \"aws_instance\" \"never_called\" {}\n");
  auto scan = scan_module(repo.path(), repo / "infra/app");
  ASSERT_TRUE(scan) << scan.error().to_string();
  EXPECT_TRUE(scan->complete) << scan->incomplete_reason;
  EXPECT_EQ(scan->files, (List{"../../modules/inner/main.tf", "../../modules/label/main.tf", "main.tf"}));
  EXPECT_EQ(scan->provisioners,
            (List{"../../modules/inner/main.tf:2: local-exec in null_resource.i"}));
  EXPECT_EQ(scan->providers, (Set{reg("hashicorp/null"), reg("hashicorp/random")}));

  write(repo / "infra/app/escape.tf", "module \"up\" {\n  source = \"../../../outside\"\n}\n");
  auto escaping = scan_module(repo.path(), repo / "infra/app");
  ASSERT_TRUE(escaping);
  EXPECT_FALSE(escaping->complete);
  EXPECT_TRUE(has_text(escaping->incomplete_reason, "leads outside the checkout"));
}

// Links are judged by where they physically lead inside the checkout, never by their text: the
// sandbox may resolve what is dangling here (/proc/self/cwd/...) to something else.
TEST(ModuleScan, SymbolicLinksMustResolveInsideTheCheckout) {
  auto scan_with_link = [](const fs::path& target, const std::string& link) {
    TempDir dir("policy-");
    write(dir / "main.tf", "");
    write(dir / "sub/real.txt", "resource \"aws_instance\" \"x\" {}\n");
    fs::create_directories((dir / link).parent_path());
    fs::create_symlink(target, dir / link);
    return scan_of(dir);
  };
  const auto absolute = scan_with_link("/proc/self/cwd/sub/real.txt", "evil.tf");
  EXPECT_FALSE(absolute.complete);
  EXPECT_TRUE(has_text(absolute.incomplete_reason, "evil.tf: symbolic link goes through an absolute link"));
  // Not even a configuration file name: the scan vouches for the whole tree.
  const auto data = scan_with_link("/etc/hostname", "data.txt");
  EXPECT_FALSE(data.complete);
  const auto dangling = scan_with_link("nowhere/x.tf", "main2.tf");
  EXPECT_FALSE(dangling.complete);
  EXPECT_TRUE(has_text(dangling.incomplete_reason, "main2.tf: symbolic link is dangling"));
  const auto escaping = scan_with_link("../../../../etc/passwd", "sub/up.tf");
  EXPECT_FALSE(escaping.complete);
  EXPECT_TRUE(has_text(escaping.incomplete_reason, "sub/up.tf: symbolic link leads outside the checkout"));
  const auto in_hidden = scan_with_link("/tmp", ".hidden/tmp");
  EXPECT_FALSE(in_hidden.complete);
  EXPECT_TRUE(has_text(in_hidden.incomplete_reason, ".hidden/tmp: symbolic link goes through an absolute link"));

  // A link that climbs through another link: as text deep/er/up -> b/.. stays in deep/er, but b
  // leads to the root, so b/.. is the checkout's parent.
  TempDir climb("policy-");
  write(climb / "main.tf", "");
  fs::create_directories(climb / "deep/er");
  fs::create_symlink("../..", climb / "deep/er/b");
  fs::create_symlink("b/..", climb / "deep/er/up");
  auto climbed = scan_of(climb);
  EXPECT_FALSE(climbed.complete);
  EXPECT_TRUE(has_text(climbed.incomplete_reason, "deep/er/up: symbolic link leads outside the checkout"))
      << climbed.incomplete_reason;
}

TEST(ModuleScan, LinksInsideTheCheckoutAreFollowedAndCyclesEnd) {
  TempDir dir("policy-");
  write(dir / "shared/tool.txt", "resource \"null_resource\" \"n\" {\n"
                                 "  provisioner \"local-exec\" { command = \"x\" }\n}\n");
  write(dir / "shared/main.tf", "data \"external\" \"e\" {\n  program = [\"x\"]\n}\n");
  fs::create_symlink("shared/tool.txt", dir / "linked.tf");
  fs::create_directories(dir / "app");
  fs::create_symlink("../shared", dir / "app/mod");
  fs::create_symlink("..", dir / "app/loop");  // a cycle back to the root
  auto scan = scan_of(dir);
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.provisioners, (List{"linked.tf:2: local-exec in null_resource.n"}));
  EXPECT_EQ(scan.external_data,
            (List{"app/mod/main.tf:1: data.external.e", "shared/main.tf:1: data.external.e"}));
}

TEST(ModuleScan, AbsoluteLinksInDownloadedModulesAreIncomplete) {
  TempDir dir("policy-");
  write(dir / "main.tf", "module \"vpc\" {\n  source  = \"example.com/a/b/c\"\n}\n");
  write(dir / ".terraform/modules/vpc/main.tf", "");
  fs::create_symlink("/proc/self/cwd/evil.txt", dir / ".terraform/modules/vpc/evil.tf");
  // tofu links installed providers into the mirror: not configuration, not scanned.
  fs::create_directories(dir / ".terraform/providers");
  fs::create_symlink("/usr", dir / ".terraform/providers/mirror");
  auto scan = scan_of(dir);
  EXPECT_FALSE(scan.complete);
  EXPECT_TRUE(has_text(scan.incomplete_reason,
                       ".terraform/modules/vpc/evil.tf: symbolic link goes through an absolute link"));
}

TEST(ModuleScan, FindsEncryptionBlocksInBothSyntaxes) {
  auto hcl = scan_text(
      "terraform {\n  encryption {\n    key_provider \"external\" \"k\" {\n"
      "      command = [\"/bin/sh\", \"-c\", \"touch /tmp/x\"]\n    }\n  }\n}\n");
  EXPECT_TRUE(hcl.complete) << hcl.incomplete_reason;
  EXPECT_EQ(hcl.encryption, (List{"main.tf:2: terraform { encryption }"}));
  auto json = scan_text(R"({"terraform": [{"encryption": {"method": {"external": {"m": {}}}}}]})",
                        "main.tf.json");
  EXPECT_EQ(json.encryption, (List{"main.tf.json:1: terraform { encryption }"}));

  protocol::RunPolicy permissive;
  permissive.allow_provisioners = true;
  permissive.allow_external_data = true;
  auto refused = check_module_policy(hcl, permissive);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kEncryptionConfigDenied);
  EXPECT_TRUE(has_text(refused.error().message, "main.tf:2: terraform { encryption }"));
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

  TempDir fifo("policy-");
  ASSERT_EQ(::mkfifo((fifo / "main.tf").c_str(), 0600), 0);
  auto special = scan_of(fifo);
  EXPECT_FALSE(special.complete);
  EXPECT_TRUE(has_text(special.incomplete_reason, "main.tf: not a regular file"));
}

// An override file merged after the agent's would replace its local backend; tofu also looks for
// provisioner plugins in the working directory before its built-in ones.
TEST(ModuleScan, FindsBackendOverridesPluginFilesAndRemoteState) {
  TempDir dir("policy-");
  write(dir / "main.tf", "terraform {\n  backend \"s3\" {}\n}\n"
                         "data \"terraform_remote_state\" \"net\" {\n  backend = \"local\"\n}\n");
  write(dir / "zzz_override.tf", "terraform {\n  backend \"http\" {\n    address = \"x\"\n  }\n}\n");
  write(dir / "sub/override.tf.json", R"({"terraform": {"cloud": {"organization": "o"}}})");
  write(dir / std::string(kAgentOverrideFile), "terraform {\n  backend \"local\" {}\n}\n");
  write(dir / "terraform-provisioner-local-exec", "binary");
  write(dir / "terraform.d/plugins/x", "binary");
  auto scan = scan_of(dir);
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.backend_overrides, (List{"zzz_override.tf:2: backend \"http\" in an override file",
                                          "sub/override.tf.json:1: cloud in an override file"}));
  EXPECT_EQ(scan.external_data,
            (List{"main.tf:4: data.terraform_remote_state.net (configures a backend, which can run programs)"}));
  ASSERT_EQ(scan.plugin_files.size(), 2u);
  EXPECT_TRUE(has_text(scan.plugin_files[0], "terraform-provisioner-local-exec: a plugin binary"));
  EXPECT_TRUE(has_text(scan.plugin_files[1], "terraform.d: a plugin binary or directory"));

  protocol::RunPolicy permissive;
  permissive.allow_provisioners = true;
  permissive.allow_external_data = true;
  auto refused = check_module_policy(scan, permissive);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kBackendConfigDenied);
  scan.backend_overrides.clear();
  refused = check_module_policy(scan, permissive);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kProviderPolicyDenied);
  EXPECT_TRUE(has_text(refused.error().message, "providers come only from the agent's mirror"));
  scan.plugin_files.clear();
  EXPECT_TRUE(check_module_policy(scan, permissive));
  refused = check_module_policy(scan, protocol::RunPolicy{});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kExternalDataDenied);
}

// OpenTofu turns a local source's backslashes into separators: ..\evil is ../evil, not a
// directory named "..\evil".
TEST(ModuleScan, BackslashesInALocalSourceAreSeparators) {
  TempDir repo("policy-");
  write(repo / "app/main.tf", "module \"m\" {\n  source = \"..\\\\evil\"\n}\n");
  write(repo / "app/..\\evil/main.tf", "# a decoy only the literal name reaches\n");
  write(repo / "evil/main.tf", "resource \"null_resource\" \"e\" {\n"
                               "  provisioner \"local-exec\" { command = \"x\" }\n}\n");
  auto scan = scan_module(repo.path(), repo / "app");
  ASSERT_TRUE(scan) << scan.error().to_string();
  EXPECT_EQ(scan->provisioners, (List{"../evil/main.tf:2: local-exec in null_resource.e"}));
}

TEST(ModuleScan, LocalCommandRunsAProgramLikeExternalData) {
  auto scan = scan_text("data \"local_command\" \"d\" {\n  command = \"x\"\n}\n"
                        "ephemeral \"local_command\" \"e\" {\n  command = \"x\"\n}\n");
  EXPECT_TRUE(scan.complete) << scan.incomplete_reason;
  EXPECT_EQ(scan.external_data, (List{"main.tf:1: data.local_command.d (runs a command)",
                                      "main.tf:4: ephemeral.local_command.e (runs a command)"}));
  auto refused = check_module_policy(scan, protocol::RunPolicy{});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kExternalDataDenied);
}

// Links show one directory or file under many names; the work stays bounded all the same.
TEST(ModuleScan, LinksCannotMultiplyTheWork) {
  TempDir many("policy-");
  fs::create_directories(many / "data");
  for (int i = 0; i < 2000; ++i) std::ofstream(many / "data" / ("f" + std::to_string(i) + ".txt"));
  for (int i = 0; i < 60; ++i) fs::create_symlink("data", many / ("l" + std::to_string(i)));
  write(many / "main.tf", "");
  auto entries = scan_of(many);
  EXPECT_FALSE(entries.complete);
  EXPECT_TRUE(has_text(entries.incomplete_reason, "more than 100000 directory entries"))
      << entries.incomplete_reason;

  TempDir big("policy-");
  write(big / "big.txt", "# " + std::string(4 * 1024 * 1024 - 16, 'x') + "\n");
  for (int i = 0; i < 20; ++i) fs::create_symlink("big.txt", big / ("b" + std::to_string(i) + ".tf"));
  auto bytes = scan_of(big);
  EXPECT_FALSE(bytes.complete);
  EXPECT_TRUE(has_text(bytes.incomplete_reason, "the scan read more than 64 MiB")) << bytes.incomplete_reason;
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
  EXPECT_TRUE(has_text(external.error().message, "main.tf:12: data.external.e: reading data through a program"));
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
