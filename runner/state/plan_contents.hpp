#pragma once
// What a sealed plan holds: the plan file, and the sensitive values `tofu show -json` of it named
// when the plan Run read it. The apply takes those values for redaction from here, before tofu
// prints a line, instead of running `tofu show -json` of the same plan again (a tofu start, and
// a parse of the whole plan JSON). Both come out of the same envelope, bound by the plan's
// digest, so the values are exactly those of the plan being applied.
//
// Layout (integers big-endian): "TKSPLAN", a revision byte, u64 plan size, the plan file's bytes,
// u32 count, then count times (u32 size, the value's bytes). The revision is that of the code that
// found the values (redaction/sensitive_values.cpp): bump kPlanSecretsRevision whenever it finds
// more, and an apply of a plan sealed with an older revision asks `tofu show -json` again instead
// of trusting the older, shorter list. A plan sealed by an agent before this layout is the bare
// plan file (a zip archive, "PK\3\4…"): it is taken as it is, and the apply runs `tofu show -json`
// for the values as it always did.
//
// An agent older than this layout cannot apply a plan sealed in it (it hands the whole plaintext
// to tofu): upgrade every agent of a pool before the upgraded ones plan (docs/operations.md).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"

namespace takosumi::runner {

inline constexpr char kPlanSecretsRevision = '1';

// Writes the plan file and the values to out (mode 0600), which must not exist. Errors: io_error.
Status write_plan_contents(const std::filesystem::path& plan_file,
                           const std::vector<SecretBytes>& values,
                           const std::filesystem::path& out);

// Writes the plan file held by contents to plan_out (which must not exist) and returns the
// values; nullopt when they must be asked of tofu: a bare plan file of an older agent (moved to
// plan_out as it is) or values of another revision than kPlanSecretsRevision.
// contents is removed either way. Errors: state_integrity_failed for a malformed layout; io_error.
Result<std::optional<std::vector<SecretBytes>>> split_plan_contents(
    const std::filesystem::path& contents, const std::filesystem::path& plan_out);

}  // namespace takosumi::runner
