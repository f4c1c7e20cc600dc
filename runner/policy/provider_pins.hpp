#pragma once
// An operator's pinned list of provider packages, in the format of OpenTofu's dependency lock
// file (.terraform.lock.hcl), which `tofu providers lock` and `tofu init` write on the connected
// side:
//   provider "registry.opentofu.org/hashicorp/null" {
//     version     = "3.3.1"
//     constraints = "3.3.1"
//     hashes = ["h1:…", "zh:…"]
//   }
// Unlike one lock file, a pin list may name one provider in several blocks, one per version the
// mirror holds (lock files concatenated). The text is the operator's, but it decides what may run,
// so it is read strictly: anything else is refused with the line it is on.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace takosumi::runner {

struct ProviderPin {
  std::string address;  // lower case, e.g. "registry.opentofu.org/hashicorp/null"
  std::string version;
  std::vector<std::string> hashes;  // "h1:…" and "zh:…" as written
};

// invalid_argument ("line N: …") for anything but provider blocks of version, constraints and
// hashes; a block without a version or without hashes; a second block of one version.
Result<std::vector<ProviderPin>> parse_provider_pins(std::string_view text);

// The pins file (at most 4 MiB) read and parsed; errors name the file.
Result<std::vector<ProviderPin>> read_provider_pins(const std::filesystem::path& file);

// The pin of this provider version, if the list has one.
const ProviderPin* find_pin(const std::vector<ProviderPin>& pins, std::string_view address,
                            std::string_view version);

// A dependency lock file (the module's, or the one init left) against the pins: it must select
// only pinned versions, each with a hash its pin lists, so that the Run's providers are exactly
// the operator's whatever the module committed. The caller has checked that lock is a regular
// file of the Run's workspace (it lies where the module can write). Nothing to check without pins;
// provider_checksum_mismatch naming the provider, workspace_failed when it cannot be read.
Status check_lock_against_pins(const std::filesystem::path& lock, const std::vector<ProviderPin>& pins);

}  // namespace takosumi::runner
