#include "runner/state/state_checkpoint.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>

#include "common/file_io.hpp"
#include "crypto/envelope.hpp"
#include "crypto/keys.hpp"
#include "runner/state/run_workspace.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string state_json(std::int64_t serial, const std::string& lineage, const std::string& name) {
  return R"({"version":4,"terraform_version":"1.10.0","serial":)" + std::to_string(serial) +
         R"(,"lineage":")" + lineage + R"(","outputs":{},"resources":[{"mode":"managed",)" +
         R"("type":"local_file","name":")" + name + R"(","provider":"p","instances":[]}]})";
}

class StateCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    manifest_.run_id = "run-1";
    manifest_.attempt = 2;
    manifest_.capsule_id = "cap-1";
    manifest_.source.module_path = "mod";
    manifest_.control_public_key = control_.public_key.to_base64();
    manifest_.control_key_id = "k1";
    manifest_.prior_state = protocol::PriorState{};
    manifest_.prior_state->generation = 4;
    manifest_.prior_state->serial = 7;
    manifest_.prior_state->lineage = "L";
    auto ws = RunWorkspace::create(work_, "run-1", 2);
    ASSERT_TRUE(ws) << ws.error().to_string();
    ws_.emplace(std::move(*ws));
    module_ = ws_->source() / "mod";
    fs::create_directories(module_);
  }

  void write_state(const std::string& text) {
    ASSERT_TRUE(write_file_atomic(module_ / "terraform.tfstate", text));
  }

  // Decrypts an envelope with the control plane's key, as the control plane would.
  std::string open(const fs::path& envelope) {
    auto prefix = crypto::read_envelope_prefix(envelope);
    EXPECT_TRUE(prefix);
    if (!prefix) return {};
    auto dek = crypto::open_envelope_dek(*prefix, control_);
    EXPECT_TRUE(dek);
    if (!dek) return {};
    const fs::path out = dir_ / "opened";
    auto header = crypto::decrypt_file(envelope, out, *dek, {"state", "cap-1", 5, std::nullopt});
    EXPECT_TRUE(header) << (header ? "" : header.error().to_string());
    auto text = read_file(out, 1 << 20);
    return text ? *text : "";
  }

  StateCheckpointer checkpointer() {
    return StateCheckpointer(*ws_, module_ / "terraform.tfstate", outbox(), manifest_,
                             config::kDefaultMaxStateBytes);
  }
  fs::path outbox() const { return dir_ / "spool"; }

  TempDir dir_;
  fs::path work_ = dir_ / "work";
  crypto::BoxKeyPair control_ = crypto::BoxKeyPair::generate();
  protocol::JobManifest manifest_;
  std::optional<RunWorkspace> ws_;
  fs::path module_;
};

TEST_F(StateCheckpointTest, SealsEachNewSerialAndNothingElse) {
  auto cp = checkpointer();
  auto none = cp.checkpoint();
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none) << "no state file yet";
  write_state(state_json(7, "L", "prior"));
  EXPECT_FALSE(*cp.checkpoint()) << "the prior state is not a checkpoint";
  write_state(state_json(8, "L", "first"));
  EXPECT_TRUE(*cp.checkpoint());
  EXPECT_FALSE(*cp.checkpoint()) << "unchanged";
  write_state(R"({"version":4,"serial":9,"lineage":"L","resour)");
  EXPECT_FALSE(*cp.checkpoint()) << "a state tofu is still writing is skipped";
  write_state(state_json(9, "L", "second"));
  EXPECT_TRUE(*cp.checkpoint());
  EXPECT_EQ(cp.count(), 2);
  const auto sealed = checkpoint_path(outbox(), manifest_);
  auto described = describe_sealed_state(sealed);
  ASSERT_TRUE(described) << described.error().to_string();
  EXPECT_EQ(described->identity.serial, 9);
  EXPECT_EQ(open(sealed), state_json(9, "L", "second"));
  EXPECT_FALSE(fs::exists(ws_->capture("checkpoint.tfstate"))) << "plaintext copy left behind";
}

TEST_F(StateCheckpointTest, RecoveryPrefersTheSurvivingWorkspace) {
  auto cp = checkpointer();
  write_state(state_json(8, "L", "checkpointed"));
  ASSERT_TRUE(*cp.checkpoint());
  write_state(state_json(10, "L", "final"));
  auto found = recover_newest_state(work_, outbox(), manifest_, config::kDefaultMaxStateBytes);
  ASSERT_TRUE(found) << found.error().to_string();
  ASSERT_TRUE(*found);
  EXPECT_EQ((*found)->source, "terraform.tfstate");
  EXPECT_EQ((*found)->sealed.identity.serial, 10);
  EXPECT_EQ((*found)->sealed.artifact.path, sealed_state_path(outbox(), manifest_));
  EXPECT_EQ(open((*found)->sealed.artifact.path), state_json(10, "L", "final"));
}

TEST_F(StateCheckpointTest, RecoveryAfterARebootUsesTheCheckpoint) {
  auto cp = checkpointer();
  write_state(state_json(8, "L", "checkpointed"));
  ASSERT_TRUE(*cp.checkpoint());
  ASSERT_TRUE(ws_->wipe());  // the tmpfs is gone
  auto found = recover_newest_state(work_, outbox(), manifest_, config::kDefaultMaxStateBytes);
  ASSERT_TRUE(found) << found.error().to_string();
  ASSERT_TRUE(*found);
  EXPECT_EQ((*found)->source, "checkpoint");
  EXPECT_EQ((*found)->sealed.identity.serial, 8);
  EXPECT_FALSE(fs::exists(checkpoint_path(outbox(), manifest_)));
  EXPECT_EQ(open((*found)->sealed.artifact.path), state_json(8, "L", "checkpointed"));
}

TEST_F(StateCheckpointTest, RecoveryFallsBackWhenTheWorkspaceStateIsTorn) {
  auto cp = checkpointer();
  write_state(state_json(8, "L", "checkpointed"));
  ASSERT_TRUE(*cp.checkpoint());
  write_state(R"({"version":4,"serial":9,"lin)");
  auto found = recover_newest_state(work_, outbox(), manifest_, config::kDefaultMaxStateBytes);
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->source, "checkpoint");
  EXPECT_EQ((*found)->sealed.identity.serial, 8);
}

TEST_F(StateCheckpointTest, NothingToRecoverWhenTheApplyChangedNothing) {
  write_state(state_json(7, "L", "prior"));
  auto found = recover_newest_state(work_, outbox(), manifest_, config::kDefaultMaxStateBytes);
  ASSERT_TRUE(found);
  EXPECT_FALSE(*found);
  ASSERT_TRUE(ws_->wipe());
  auto gone = recover_newest_state(work_, outbox(), manifest_, config::kDefaultMaxStateBytes);
  ASSERT_TRUE(gone);
  EXPECT_FALSE(*gone) << "no workspace and no checkpoint";
}

TEST_F(StateCheckpointTest, AFifoOrALinkInPlaceOfTheStateIsNoCheckpoint) {
  auto cp = checkpointer();
  ASSERT_EQ(::mkfifo((module_ / "terraform.tfstate").c_str(), 0600), 0);
  auto fifo = cp.checkpoint();
  ASSERT_TRUE(fifo);
  EXPECT_FALSE(*fifo) << "a FIFO must neither block nor be read";
  fs::remove(module_ / "terraform.tfstate");
  ASSERT_TRUE(write_file_atomic(dir_ / "elsewhere.tfstate", state_json(99, "L", "foreign")));
  fs::create_symlink(dir_ / "elsewhere.tfstate", module_ / "terraform.tfstate");
  auto link = cp.checkpoint();
  ASSERT_TRUE(link);
  EXPECT_FALSE(*link);
}

TEST_F(StateCheckpointTest, RecoveryIgnoresALinkOutOfTheWorkspace) {
  auto cp = checkpointer();
  write_state(state_json(8, "L", "checkpointed"));
  ASSERT_TRUE(*cp.checkpoint());
  ASSERT_TRUE(write_file_atomic(dir_ / "elsewhere.tfstate", state_json(99, "L", "foreign")));
  fs::remove(module_ / "terraform.tfstate");
  fs::create_symlink(dir_ / "elsewhere.tfstate", module_ / "terraform.tfstate");
  auto found = recover_newest_state(work_, outbox(), manifest_, config::kDefaultMaxStateBytes);
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->sealed.identity.serial, 8);
}

}  // namespace
}  // namespace takosumi::runner
