// Redaction on the byte stream, end to end with the real control plane, agent, bubblewrap and
// OpenTofu: a module's provisioner writes a Connection value (a canary, random per test) the ways
// a per-line redactor misses — in two writes 300 ms apart, which tofu prints as two lines; inside a
// line longer than 64 KiB, straddling the agent's line cut; and encoded as base64 (both alphabets,
// three alignments), hex (both cases) and percent-encoding — and maps
// filebase64("/proc/self/environ") as an Output. Afterwards neither the canary, nor any 8-byte
// piece of it, nor any of its encodings may be found on any surface: the public API, both
// programs' logs and both data directories.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>
#include <unordered_map>

#include "tests/support/encodings.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

constexpr const char* kNullProvider = "registry.opentofu.org/hashicorp/null";
// tofu's prefix of every line a provisioner prints (with -no-color).
constexpr std::string_view kPrefix = "null_resource.x (local-exec): ";
constexpr std::size_t kLineCut = 64 * 1024;  // the agent's longest line
constexpr std::size_t kBeforeCut = 12;       // canary bytes before the cut

std::string random_alnum(std::size_t n) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += kAlphabet[rd() % (sizeof kAlphabet - 1)];
  return out;
}

// No whitespace (so its pieces are indexed); '/', '+', '?' and '>' make its base64 alphabets and
// its percent-encoding differ from the plain forms.
std::string make_canary() { return "Cy" + random_alnum(14) + "/+?>" + random_alnum(14); }

// The module never names the canary: every form is made by the shell from the environment. The
// long line is written at once: tofu flushes a partial line after 100 ms without output, and drops
// a line of 64 KiB or more (bufio.Scanner), so it is made just short enough for tofu to print and
// long enough, with tofu's prefix, to cross the agent's cut.
std::string module_text() {
  const std::size_t pad = kLineCut - kPrefix.size() - kBeforeCut;
  return R"HCL(terraform {
  required_providers {
    null = { source = "hashicorp/null" }
  }
}
resource "null_resource" "x" {
  provisioner "local-exec" {
    command = <<-EOT
      c="$SPLIT_CANARY"
      printf 'split: %s' "$(printf '%s' "$c" | head -c 16)"; sleep 0.3
      printf '%s\n' "$(printf '%s' "$c" | tail -c +17)"
      pad=$(head -c )HCL" + std::to_string(pad) + R"HCL( /dev/zero | tr -c x x); printf '%s%s-tail\n' "$pad" "$c"
      for p in '' A AB; do
        printf 'b64: %s\n' "$(printf '%s%s' "$p" "$c" | base64 -w0)"
        printf 'b64: %s\n' "$(printf '%s%s' "$p" "$c" | base64 -w0 | tr '+/' '-_')"
      done
      printf 'hex: %s\n' "$(printf '%s' "$c" | od -An -v -tx1 | tr -d ' \n')"
      printf 'HEX: %s\n' "$(printf '%s' "$c" | od -An -v -tx1 | tr -d ' \n' | tr a-f A-F)"
      printf 'url: %s\n' "$(printf '%s' "$c" | sed -e 's|/|%2F|g' -e 's|+|%2B|g' -e 's|?|%3F|g' -e 's|>|%3E|g')"
    EOT
  }
}
output "environ" { value = filebase64("/proc/self/environ") }
)HCL";
}

// Every 8-byte (or `width`) piece of text.
std::vector<std::string> pieces(std::string_view text, std::size_t width = 8) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at + width <= text.size(); ++at) out.emplace_back(text.substr(at, width));
  return out;
}

// What must appear nowhere, with a name for the failure message: the canary and its pieces, and
// each encoding (the characters that depend on the canary alone) and its pieces.
std::vector<std::pair<std::string, std::string>> forbidden(const std::string& canary) {
  std::vector<std::pair<std::string, std::string>> out{{"the canary", canary}};
  for (const auto& p : pieces(canary)) out.emplace_back("an 8-byte piece of the canary", p);
  for (const bool url : {false, true})
    for (std::size_t before = 0; before < 3; ++before) {
      const auto blob = base64(std::string(before, 'A') + canary, url);
      const auto form = blob.substr((8 * before + 5) / 6, 8 * (before + canary.size()) / 6 - (8 * before + 5) / 6);
      out.emplace_back("its base64", form);
      for (const auto& p : pieces(form)) out.emplace_back("a piece of its base64", p);
    }
  for (const bool upper : {false, true}) {
    out.emplace_back("its hex", hex(canary, upper));
    for (const auto& p : pieces(hex(canary, upper), 16)) out.emplace_back("a piece of its hex", p);
  }
  std::string percent;
  for (const char c : canary)
    percent += std::isalnum(static_cast<unsigned char>(c)) ? std::string(1, c) : "%" + hex(std::string(1, c), true);
  out.emplace_back("its percent-encoding", percent);
  return out;
}

// Finds any of many needles (each at least 8 bytes) in one pass over a text.
class NeedleFinder {
 public:
  explicit NeedleFinder(std::vector<std::pair<std::string, std::string>> needles)
      : needles_(std::move(needles)) {
    for (std::size_t i = 0; i < needles_.size(); ++i)
      by_head_[needles_[i].second.substr(0, 8)].push_back(i);
  }
  // The name of every needle found in text, once per needle.
  std::set<std::string> names_in(std::string_view text) const {
    std::set<std::string> found;
    for (std::size_t at = 0; at + 8 <= text.size(); ++at) {
      const auto it = by_head_.find(std::string(text.substr(at, 8)));
      if (it == by_head_.end()) continue;
      for (const auto i : it->second)
        if (text.substr(at).starts_with(needles_[i].second)) found.insert(needles_[i].first);
    }
    return found;
  }

 private:
  std::vector<std::pair<std::string, std::string>> needles_;
  std::unordered_map<std::string, std::vector<std::size_t>> by_head_;
};

// Every regular file under dir, read once.
std::vector<std::pair<fs::path, std::string>> read_tree(const fs::path& dir) {
  std::vector<std::pair<fs::path, std::string>> files;
  for (const auto& e : fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied)) {
    if (!e.is_regular_file() || e.is_symlink()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    files.emplace_back(e.path(), std::string((std::istreambuf_iterator<char>(in)), {}));
  }
  return files;
}

class RedactionTest : public ::testing::Test {
 protected:
  std::string create_connection(const std::string& value) {
    auto r = stack_.api().post("/api/v1/connections",
                               json::object{{"workspaceId", stack_.workspace_id()},
                                            {"name", "split-canary"},
                                            {"provider", kNullProvider},
                                            {"authMode", "env"},
                                            {"values", json::object{{"SPLIT_CANARY", value}}}});
    EXPECT_EQ(r.status, 201u) << r.body;
    return r.json.is_object() ? str(r.json.as_object(), "id") : "";
  }

  std::string create_capsule(const std::string& connection) {
    return stack_.create_capsule_from(json::object{
        {"name", "split"},
        {"source", json::object{{"gitUrl", repo_.url()}, {"ref", "main"}, {"modulePath", ""}}},
        {"outputAllowlist",
         json::object{{"environ", json::object{{"from", "environ"}, {"type", "string"}}}}},
        {"connections", json::array{connection}},
        {"policy", json::object{{"allowProvisioners", true}}}});
  }

  // The Run's log as text: its chunks joined.
  std::string log_text(const json::object& run) {
    auto r = stack_.api().get("/api/v1/runs/" + str(run, "id") + "/logs");
    std::string text;
    for (const auto& chunk : r.json.at("chunks").as_array()) text += str(chunk.as_object(), "text");
    return text;
  }

  Stack stack_;
  TestGitRepo repo_{stack_.root() / "repo"};
};

// The lines tofu printed arrived, redacted: if the provisioner had not run (or tofu had cut the
// long line itself), these would be missing and the sweep below would prove nothing.
void expect_printed_and_redacted(const std::string& log) {
  EXPECT_NE(log.find(std::string(kPrefix) + "split: [REDACTED]\n"), std::string::npos) << log;
  EXPECT_NE(log.find(std::string(kPrefix) + "[REDACTED]\n"), std::string::npos) << log;
  // Redacted whole, then cut at 64 KiB.
  const std::string redacted = std::string(kPrefix) +
                               std::string(kLineCut - kPrefix.size() - kBeforeCut, 'x') + "[REDACTED]-tail";
  EXPECT_NE(log.find("\n" + redacted.substr(0, kLineCut) + "\n" + redacted.substr(kLineCut) + "\n"),
            std::string::npos)
      << "no 64 KiB line";
  std::size_t b64 = 0;
  for (auto at = log.find("b64: "); at != std::string::npos; at = log.find("b64: ", at + 1))
    if (log.substr(at, log.find('\n', at) - at).find("[REDACTED]") != std::string::npos) ++b64;
  EXPECT_EQ(b64, 6u) << log;
  for (const char* line : {"hex: [REDACTED]\n", "HEX: [REDACTED]\n", "url: [REDACTED]\n"})
    EXPECT_NE(log.find(line), std::string::npos) << line << " missing from " << log;
}

TEST_F(RedactionTest, NoPieceOrEncodingOfAConnectionValueReachesAnySurface) {
  const std::string canary = make_canary();
  repo_.commit({{"main.tf", module_text()}});
  const auto connection = create_connection(canary);
  const auto capsule = create_capsule(connection);

  auto plan = stack_.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack_.agent_logs();
  auto applied = stack_.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied) << stack_.agent_logs();
  expect_printed_and_redacted(log_text(applied));

  // filebase64("/proc/self/environ") holds the canary at some offset of a base64 blob.
  const auto refused = applied.at("refusedOutputs").as_array();
  EXPECT_EQ(refused.size(), 1u) << json::serialize(applied);
  if (refused.size() == 1) {
    EXPECT_EQ(str(refused[0].as_object(), "name"), "environ");
    EXPECT_NE(str(refused[0].as_object(), "reason").find("base64"), std::string::npos)
        << json::serialize(refused[0]);
  }
  auto outputs = stack_.api().get("/api/v1/capsules/" + capsule + "/outputs");
  EXPECT_FALSE(outputs.json.at("outputs").as_object().contains("environ")) << outputs.body;

  stack_.stop_agents();
  const auto surface = stack_.public_surface({capsule}, {connection});
  const auto agent_log = stack_.agent_logs();
  const auto control_log = stack_.control_log();
  const NeedleFinder finder(forbidden(canary));
  for (const auto& what : finder.names_in(surface)) ADD_FAILURE() << what << " found in the public API";
  for (const auto& what : finder.names_in(agent_log)) ADD_FAILURE() << what << " found in the agent's log";
  for (const auto& what : finder.names_in(control_log)) ADD_FAILURE() << what << " found in the control log";
  for (const auto& dir : {stack_.data_dir(), stack_.agent_dir(0)})
    for (const auto& [path, text] : read_tree(dir))
      for (const auto& what : finder.names_in(text)) ADD_FAILURE() << what << " found in " << path;
  // The sweep itself finds what it looks for.
  EXPECT_EQ(finder.names_in("x" + base64("AB" + canary, true) + "x").size(), 2u);
}

}  // namespace
}  // namespace takosumi::testing
