// takosumi: the operator's command line for a takosumi-control (docs/cli.md).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/api_client.hpp"
#include "cli/cli_settings.hpp"
#include "cli/commands.hpp"
#include "cli/completion.hpp"
#include "cli/output.hpp"
#include "common/version.hpp"

namespace {

using namespace takosumi::cli;

Environment environment() {
  Environment env;
  for (const char* name : {"TAKOSUMI_DEPLOY_CONTROL_URL", "TAKOSUMI_DEPLOY_CONTROL_TOKEN", "HOME",
                           "XDG_CONFIG_HOME"})
    if (const char* v = std::getenv(name)) env[name] = v;
  return env;
}

constexpr int kUsage = 64;  // EX_USAGE

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"takosumi " TAKOSUMI_VERSION ": plan, apply and inspect Capsules on a takosumi-control",
               "takosumi"};
  app.require_subcommand(1);
  // Global options may follow the subcommand: `takosumi plan CAP -o json`.
  app.fallthrough();
  app.set_version_flag("--version", "takosumi " TAKOSUMI_VERSION);
  CommandLineSettings flags;
  std::string output = "text";
  app.add_option("--url", flags.url, "control plane URL (else TAKOSUMI_DEPLOY_CONTROL_URL, else config)");
  app.add_option("--token-file", flags.token_file, "file holding the API token (else TAKOSUMI_DEPLOY_CONTROL_TOKEN, else config)");
  app.add_option("--ca-file", flags.ca_file, "CA certificate(s) to verify the control plane with");
  app.add_option("--client-cert", flags.client_cert_file, "client certificate for mutual TLS");
  app.add_option("--client-key", flags.client_key_file, "its key (owner-only)");
  app.add_option("--config", flags.config_file, "config file (default ~/.config/takosumi/config.yaml)");
  app.add_flag("--allow-insecure-http", flags.allow_insecure_http,
               "allow http:// to an address that is not loopback (tokens in clear)");
  app.add_option("-o,--output", output, "text or json")->check(CLI::IsMember({"text", "json"}));
  std::optional<Handler> chosen;
  add_commands(app, chosen);
  bool completion = false;
  app.add_subcommand("completion", "print the bash completion script: "
                                   "source <(takosumi completion)")
      ->callback([&] { completion = true; });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kUsage;
  }
  if (completion) {
    std::cout << kBashCompletion;
    return 0;
  }
  if (!chosen) return kUsage;
  auto settings = resolve_settings(flags, environment());
  if (!settings) {
    print_error(settings.error());
    return static_cast<int>(Exit::failure);
  }
  auto api = ApiClient::make(std::move(*settings));
  if (!api) {
    print_error(api.error());
    return static_cast<int>(Exit::failure);
  }
  const bool terminal = ::isatty(STDERR_FILENO) == 1 && ::isatty(STDOUT_FILENO) == 1;
  const Output out(output == "json", terminal, terminal && std::getenv("NO_COLOR") == nullptr);
  try {
    return static_cast<int>((*chosen)(Context{*api, out}));
  } catch (const CLI::ValidationError& e) {
    std::cerr << "takosumi: " << e.what() << "\n";
    return kUsage;
  } catch (const std::exception& e) {
    // An answer of a shape this CLI does not know (another version of the control plane).
    std::cerr << "takosumi: protocol_error: unexpected answer from the control plane (" << e.what()
              << ")\n";
    return static_cast<int>(Exit::unreachable);
  }
}
