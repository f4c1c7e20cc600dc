#pragma once
// What a sealed plan holds: the plan file, and the sensitive values `tofu show -json` of it named
// when the plan Run read it. The apply takes those values for redaction from here, before tofu
// prints a line, instead of running `tofu show -json` of the same plan again (a tofu start, and
// a parse of the whole plan JSON). Both come out of the same envelope, bound by the plan's
// digest, so the values are exactly those of the plan being applied.
//
// Layout (integers big-endian): "TKSPLAN1", u64 plan size, the plan file's bytes, u32 count, then
// count times (u32 size, the value's bytes). A plan sealed by an agent before this layout is the
// bare plan file (a zip archive, "PK\3\4…"): it is taken as it is, with no values, and the apply
// runs `tofu show -json` for them as it always did.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"

namespace takosumi::runner {

// Writes the plan file and the values to out (mode 0600), which must not exist. Errors: io_error.
Status write_plan_contents(const std::filesystem::path& plan_file,
                           const std::vector<SecretBytes>& values,
                           const std::filesystem::path& out);

// Writes the plan file held by contents to plan_out (which must not exist) and returns the
// values; nullopt for the bare plan file of an older agent, which is moved to plan_out as it is.
// contents is removed either way. Errors: state_integrity_failed for a malformed layout; io_error.
Result<std::optional<std::vector<SecretBytes>>> split_plan_contents(
    const std::filesystem::path& contents, const std::filesystem::path& plan_out);

}  // namespace takosumi::runner
