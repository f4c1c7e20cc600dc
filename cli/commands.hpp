#pragma once
// The CLI's subcommands over the public API (docs/cli.md). Each returns the exit code.
#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>

#include "cli/api_client.hpp"
#include "cli/output.hpp"

namespace takosumi::cli {

// What every subcommand works with, made once the command line is parsed.
struct Context {
  const ApiClient& api;
  const Output& out;
};

using Handler = std::function<Exit(const Context&)>;

// Adds the subcommands to app; the chosen one's handler lands in `chosen`.
void add_commands(CLI::App& app, std::optional<Handler>& chosen);

}  // namespace takosumi::cli
