#pragma once
#include <functional>
#include <string_view>

namespace takosumi::redaction {

// Receives every output line of tofu (and the runner's own notices), on the io thread.
using LogSink = std::function<void(std::string_view line)>;

}  // namespace takosumi::redaction
