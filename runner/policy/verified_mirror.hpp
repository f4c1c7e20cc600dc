#pragma once
// Where a Run's providers come from when the mirror is pinned (tofu.providerPins): an agent-owned
// copy of the pinned packages, each copied and then hashed as copied, so what a Run loads is what
// was checked. A writer of the mirror who swaps a file during the check, or later while a Run is
// going, changes nothing a Run loads: the copy is in the agent's state directory (0700), read-only.
// Layout: <store>/<generation>/<the mirror's layout of each package>; the generation is named by
// the packages and hashes it holds (sha256 of sorted "path hash" lines, 32 hex), made once in a
// temporary sibling renamed into place, and reused while the mirror's packages and hashes stay.
// The two most recently used other generations stay for Runs still using them; older ones go.
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "runner/policy/package_hash.hpp"
#include "runner/policy/provider_pins.hpp"

namespace takosumi::runner {

// Checks the mirror against the pins exactly as verify_mirror does, then returns the generation
// holding its packages (made now if needed). provider_checksum_mismatch as verify_mirror's, and
// when a package changed between the check and its copy; io errors of the store.
Result<std::filesystem::path> verified_mirror(const std::filesystem::path& mirror,
                                              const std::vector<ProviderPin>& pins,
                                              const std::filesystem::path& store,
                                              PackageHashCache* cache = nullptr);

// Where one Run's providers come from, and the pins they were checked against.
struct RunProviders {
  std::filesystem::path mirror;   // tofu.providerMirror, or the verified copy of its pinned packages
  std::vector<ProviderPin> pins;  // empty without tofu.providerPins
};

// A step of the Run before any of its tofu starts: without pins_file, the mirror as it is; with
// it, the mirror checked against the pins (verify_mirror), and with a store the verified copy
// (verified_mirror) from then on. A package altered on disk never runs. Blocking (it hashes
// packages, cached by their identity in cache). provider_checksum_mismatch for unreadable pins too.
Result<RunProviders> run_providers(const std::filesystem::path& mirror,
                                   const std::filesystem::path& pins_file,
                                   const std::filesystem::path& store, PackageHashCache* cache);

// `takosumi-agent mirror add FROM --to MIRROR --pins FILE` (docs/air-gapped.md): the packages
// of FROM (made on the connected side with `tofu providers mirror`), each checked against the pins
// before and after it is copied, placed in MIRROR readable by every user; a package already there
// with the same hash is left as it is, another one at its place is conflict. Then the whole
// mirror is checked against the pins, as an agent will. Names are as messages show them.
struct MirrorAddition {
  std::vector<std::string> added;
  std::vector<std::string> present;
};
Result<MirrorAddition> add_to_mirror(const std::filesystem::path& from,
                                     const std::filesystem::path& mirror,
                                     const std::vector<ProviderPin>& pins);

}  // namespace takosumi::runner
