// takosumi-agent: parses arguments, builds the platform objects and hands over to AgentDaemon.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <iostream>
#include <string>

#include "agent/agent_daemon.hpp"
#include "agent/beast_transport.hpp"
#include "agent/redacting_sink.hpp"
#include "common/file_io.hpp"
#include "config/agent_config.hpp"

namespace {

constexpr const char* kUsage =
    "usage: takosumi-agent --config <agent.yaml> [--check-config]\n"
    "  --config FILE     agent configuration (docs/configuration.md)\n"
    "  --check-config    load and validate the configuration and keys, then exit\n"
    "environment: TAKOSUMI_DEPLOY_CONTROL_URL, TAKOSUMI_POOL_TOKEN override the file\n";

struct Args {
  std::string config;
  bool check_only = false;
};

bool parse_args(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--config" && i + 1 < argc) {
      args.config = argv[++i];
    } else if (a == "--check-config") {
      args.check_only = true;
    } else if (a == "--version") {
      std::cout << "takosumi-agent " << TAKOSUMI_VERSION << "\n";
      std::exit(0);
    } else {
      return false;
    }
  }
  return !args.config.empty();
}

takosumi::Result<takosumi::agent::AgentKeys> load_keys(const takosumi::config::AgentConfig& c) {
  namespace crypto = takosumi::crypto;
  auto keys_dir = c.state_dir / "keys";
  if (auto s = takosumi::ensure_directory(keys_dir, 0700); !s) return std::unexpected(s.error());
  auto box = crypto::load_or_create_box_key(keys_dir / "agent-box.key");
  if (!box) return std::unexpected(box.error());
  auto sign = crypto::load_or_create_sign_key(keys_dir / "agent-sign.key");
  if (!sign) return std::unexpected(sign.error());
  auto pinned = crypto::load_sign_public_key(c.control_signing_key);
  if (!pinned) return std::unexpected(pinned.error().with_context("controlPlane.signingPublicKeyFile"));
  return takosumi::agent::AgentKeys{std::move(*box), std::move(*sign), *pinned};
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, args)) {
    std::cerr << kUsage;
    return 2;
  }
  // Every line the agent logs passes the secrets of the Runs in flight and the patterns.
  spdlog::set_default_logger(takosumi::agent::make_redacting_stderr_logger("takosumi-agent"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  auto config = takosumi::config::load_agent_config(
      args.config, takosumi::config::process_environment(
                       {"TAKOSUMI_DEPLOY_CONTROL_URL", "TAKOSUMI_POOL_TOKEN"}));
  if (!config) {
    spdlog::error("{}", config.error().to_string());
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(config->log_level));
  auto keys = load_keys(*config);
  if (!keys) {
    spdlog::error("{}", keys.error().to_string());
    return 2;
  }
  auto transport = takosumi::agent::BeastTransport::make(config->control_url);
  if (!transport) {
    spdlog::error("{}", transport.error().to_string());
    return 2;
  }
  if (args.check_only) {
    std::cout << "configuration ok: agent " << config->name << ", control plane "
              << config->control_url << "\n";
    return 0;
  }

  boost::asio::io_context io;
  takosumi::SystemClock clock;
  takosumi::agent::AgentDaemon daemon(io.get_executor(), std::move(*config), std::move(*keys),
                                      *transport, clock);
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) daemon.request_stop();
  });
  int exit_code = 1;
  boost::asio::co_spawn(io, daemon.async_run(), [&](std::exception_ptr e, int code) {
    if (e) {
      spdlog::critical("bug: stray exception escaped the agent loop");
      code = 70;
    }
    exit_code = code;
    signals.cancel();
  });
  io.run();
  return exit_code;
}
