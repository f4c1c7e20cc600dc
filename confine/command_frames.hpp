#pragma once
// The wire between the agent and `takosumi-confine --serve` (confine/command_server.hpp), the
// one process that stays in a Run phase's sandbox and runs that phase's tofu commands one after
// the other. Plain standard C++: the server links no project library.
//
// Agent → server (the server's stdin): one request per command,
//   u32 length (little-endian, at most kMaxRequestBytes), then NUL-terminated strings:
//   cwd, capture ("0" | "1"), argc, argv[0..argc), envc, env[0..envc).
// Server → agent (the server's stdout): frames, u8 type, u32 length (at most kMaxFrameBytes), payload:
//   kReady      once, when the sandbox is confined and commands may come (empty);
//   kStdout / kStderr / kCapture   the running command's output, as read (kCapture: its stdout when
//               the request asked for a capture — data that must never reach a log);
//   kExit       the command has ended and nothing of it runs any more: "E<code>" or "S<signal>".
// Nothing else reaches the agent: the commands never hold the server's stdin or stdout.
#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace takosumi::confine {

inline constexpr std::size_t kMaxRequestBytes = 1u << 20;
inline constexpr std::size_t kMaxFrameBytes = 64u << 10;
inline constexpr std::size_t kFrameHeaderBytes = 5;

enum class FrameType : std::uint8_t {
  kReady = 'R',
  kStdout = 'o',
  kStderr = 'e',
  kCapture = 'c',
  kExit = 'x',
};

struct CommandRequest {
  std::string cwd;
  bool capture = false;
  std::vector<std::string> argv;  // argv[0] is the absolute program
  std::vector<std::string> env;   // "NAME=value": the complete environment
};

// The request's bytes, length prefix included; an error when it is larger than kMaxRequestBytes
// or a string holds a NUL.
std::expected<std::string, std::string> encode_request(const CommandRequest& request);
// The payload after the length prefix.
std::expected<CommandRequest, std::string> decode_request(std::string_view payload);

std::string frame_header(FrameType type, std::uint32_t length);
std::uint32_t read_u32(const unsigned char* bytes);

// kExit's payload, and what it says: exit code, or the signal that ended the command.
std::string exit_payload(bool signalled, int value);
struct CommandEnd {
  bool signalled = false;
  int value = 0;
};
std::expected<CommandEnd, std::string> parse_exit_payload(std::string_view payload);

}  // namespace takosumi::confine
