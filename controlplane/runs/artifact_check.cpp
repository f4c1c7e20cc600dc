#include "controlplane/runs/artifact_check.hpp"

#include <system_error>

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "crypto/envelope.hpp"
#include "protocol/plan_view.hpp"

namespace takosumi::controlplane {

namespace {

Status check_digest(std::string_view received_sha256, std::string_view claimed_sha256) {
  if (!is_sha256_hex(claimed_sha256))
    return fail(errc::kInvalidArgument, "X-Takosumi-Sha256 must be 64 lowercase hex characters");
  if (!is_sha256_hex(received_sha256))
    return fail(errc::kInternal, "the upload's body was not hashed as it was received");
  const std::string actual(received_sha256);
  if (actual != claimed_sha256)
    return fail(errc::kInvalidArgument, "body sha256 " + actual +
                                            " does not match X-Takosumi-Sha256 " +
                                            std::string(claimed_sha256));
  return {};
}

Result<std::uintmax_t> size_of(const std::filesystem::path& temp) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(temp, ec);
  if (ec) return fail(errc::kIoError, "stat " + temp.string() + ": " + ec.message());
  return size;
}

}  // namespace

Result<StoredArtifact> check_and_store_upload(const std::filesystem::path& temp,
                                              std::string_view received_sha256,
                                              std::string_view claimed_sha256,
                                              std::string_view kind, std::string_view capsule_id,
                                              const Keyring& keys, const BlobStore& blobs) {
  TAKOSUMI_TRY(check_digest(received_sha256, claimed_sha256));
  const std::string actual(received_sha256);
  auto size = size_of(temp);
  if (!size) return std::unexpected(size.error());
  auto prefix = crypto::read_envelope_prefix(temp);
  if (!prefix) return std::unexpected(prefix.error());
  if (prefix->header.kind != kind)
    return fail(errc::kInvalidArgument, "envelope kind \"" + prefix->header.kind +
                                            "\" does not match artifact kind \"" +
                                            std::string(kind) + "\"");
  if (prefix->header.capsule_id != capsule_id)
    return fail(errc::kInvalidArgument, "envelope belongs to capsule \"" +
                                            prefix->header.capsule_id + "\", not " +
                                            std::string(capsule_id));
  TAKOSUMI_TRY(keys.check_dek(*prefix));
  TAKOSUMI_TRY(blobs.adopt(temp, actual));
  return StoredArtifact{actual, static_cast<std::int64_t>(*size)};
}

Result<StoredArtifact> check_and_store_plan_view(const std::filesystem::path& temp,
                                                 std::string_view received_sha256,
                                                 std::string_view claimed_sha256,
                                                 std::string_view run_id, const BlobStore& blobs) {
  TAKOSUMI_TRY(check_digest(received_sha256, claimed_sha256));
  auto size = size_of(temp);
  if (!size) return std::unexpected(size.error());
  if (*size > protocol::kMaxPlanViewBytes)
    return fail(errc::kPayloadTooLarge, "a plan view is at most " +
                                            std::to_string(protocol::kMaxPlanViewBytes) + " bytes");
  auto text = read_file(temp, protocol::kMaxPlanViewBytes);
  if (!text) return std::unexpected(text.error());
  auto view = protocol::plan_view_from_text(*text);
  if (!view) return std::unexpected(view.error());
  if (view->run_id != run_id)
    return fail(errc::kInvalidArgument, "the plan view is of run \"" + view->run_id + "\", not " +
                                            std::string(run_id));
  const std::string actual(received_sha256);
  TAKOSUMI_TRY(blobs.adopt(temp, actual));
  return StoredArtifact{actual, static_cast<std::int64_t>(*size)};
}

}  // namespace takosumi::controlplane
