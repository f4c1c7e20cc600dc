#pragma once
// Where and when a results document was measured: figures from different machines do not compare.
#include <boost/json.hpp>

#include <filesystem>
#include <string>

namespace takosumi::bench {

// {"cpu": model name, "cpus": online CPUs, "memMiB", "kernel"}.
boost::json::object machine_json();
// Now, UTC, as 2026-12-02T21:47:06Z.
std::string utc_now();
// The "terraform_version" tofu reports, or "" when it cannot be asked.
std::string tofu_version(const std::filesystem::path& tofu);

}  // namespace takosumi::bench
