#include "controlplane/runs/artifact_check.hpp"

#include <system_error>

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "crypto/envelope.hpp"
#include "crypto/sha256.hpp"
#include "protocol/run_report.hpp"

namespace takosumi::controlplane {

namespace {

Result<StoredArtifact> check_digest(const std::filesystem::path& temp,
                                    std::string_view claimed_sha256) {
  if (!is_sha256_hex(claimed_sha256))
    return fail(errc::kInvalidArgument, "X-Takosumi-Sha256 must be 64 lowercase hex characters");
  auto actual = crypto::sha256_file_hex(temp);
  if (!actual) return std::unexpected(actual.error());
  if (*actual != claimed_sha256)
    return fail(errc::kInvalidArgument, "body sha256 " + *actual +
                                            " does not match X-Takosumi-Sha256 " +
                                            std::string(claimed_sha256));
  std::error_code ec;
  const auto size = std::filesystem::file_size(temp, ec);
  if (ec) return fail(errc::kIoError, "stat " + temp.string() + ": " + ec.message());
  return StoredArtifact{*actual, static_cast<std::int64_t>(size)};
}

}  // namespace

Result<StoredArtifact> check_and_store_upload(const std::filesystem::path& temp,
                                              std::string_view claimed_sha256,
                                              std::string_view kind, std::string_view capsule_id,
                                              const Keyring& keys, const BlobStore& blobs) {
  auto stored = check_digest(temp, claimed_sha256);
  if (!stored) return stored;
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
  TAKOSUMI_TRY(blobs.adopt(temp, stored->sha256));
  return stored;
}

Result<StoredArtifact> check_and_store_report(const std::filesystem::path& temp,
                                              std::string_view claimed_sha256,
                                              const BlobStore& blobs) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(temp, ec);
  if (ec) return fail(errc::kIoError, "stat " + temp.string() + ": " + ec.message());
  if (size > protocol::kMaxRunReportBytes)
    return fail(errc::kPayloadTooLarge, "the run report is " + std::to_string(size) +
                                            " bytes, more than " +
                                            std::to_string(protocol::kMaxRunReportBytes));
  auto stored = check_digest(temp, claimed_sha256);
  if (!stored) return stored;
  TAKOSUMI_TRY(blobs.adopt(temp, stored->sha256));
  return stored;
}

}  // namespace takosumi::controlplane
