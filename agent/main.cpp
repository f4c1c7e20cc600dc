// takosumi-agent: parses arguments, builds the platform objects and hands over to AgentDaemon.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "agent/agent_daemon.hpp"
#include "agent/command_line.hpp"
#include "agent/service/bubblewrap_check.hpp"
#include "agent/service/json_log_formatter.hpp"
#include "agent/offline/offline_run.hpp"
#include "agent/durable/recover_command.hpp"
#include "agent/service/redacting_sink.hpp"
#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/version.hpp"
#include "config/agent_config.hpp"
#include "git/helper_main.hpp"
#include "git/remote_helper.hpp"
#include "net/beast_transport.hpp"
#include "net/failover_transport.hpp"
#include "service/metrics_listener.hpp"
#include "runner/host.hpp"
#include "service/service_notifier.hpp"
#include "service/watchdog.hpp"

namespace {

using takosumi::agent::Args;


// A helper program installed next to takosumi-agent unless the configuration names it (key).
takosumi::Status resolve_helper(std::filesystem::path& program, const char* name, const char* key) {
  if (program.empty()) {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
      return takosumi::fail(takosumi::errc::kConfigInvalid,
                            std::string(key) + ": cannot find this executable: " + ec.message());
    program = self.parent_path() / name;
  }
  if (::access(program.c_str(), X_OK) != 0)
    return takosumi::fail(takosumi::errc::kConfigInvalid,
                          std::string(key) + ": " + program.string() + " is not an executable; install " +
                              name + " next to takosumi-agent or set " + key);
  return {};
}

takosumi::Status resolve_helpers(takosumi::config::AgentConfig& c) {
  if (c.sandbox.enabled)
    TAKOSUMI_TRY(resolve_helper(c.sandbox.confine, "takosumi-confine", "sandbox.confine"));
  if (c.supervisor_disabled) {
    spdlog::warn("tofu.supervisor is none: tofu is killed with the agent, and an apply in flight "
                 "then loses what it did not persist (docs/operations.md)");
    return {};
  }
  return resolve_helper(c.supervisor, "takosumi-supervise", "tofu.supervisor");
}

int run_recover(const Args& args, const takosumi::config::AgentConfig& config) {
  if (!args.push && args.discard.empty()) {
    auto listed = takosumi::agent::print_recovery_listing(config.state_dir, config.work_dir, std::cout);
    if (!listed) {
      spdlog::error("recover: {}", listed.error().to_string());
      return 1;
    }
    return 0;
  }
  auto lock = takosumi::agent::lock_state_dir(config.state_dir);
  if (!lock) {
    spdlog::error("recover: {}", lock.error().to_string());
    return 1;
  }
  auto discarded = takosumi::agent::discard_journaled_run(config.state_dir, args.discard);
  if (!discarded) {
    spdlog::error("recover: {}", discarded.error().to_string());
    return 1;
  }
  std::cout << "run " << args.discard << ": journal entry and spool removed\n";
  return 0;
}

// The key the agent registers with, as an operator's reset-keys names it. Creates the key file if
// there is none, as the daemon does on start (run it as the agent's user).
int print_public_key(const takosumi::config::AgentConfig& c) {
  const auto keys_dir = c.state_dir / "keys";
  if (auto s = takosumi::ensure_directory(keys_dir, 0700); !s) {
    spdlog::error("{}", s.error().to_string());
    return 2;
  }
  auto sign = takosumi::crypto::load_or_create_sign_key(keys_dir / "agent-sign.key");
  if (!sign) {
    spdlog::error("{}", sign.error().to_string());
    return 2;
  }
  std::cout << sign->public_key.to_base64() << "\n";
  return 0;
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

takosumi::Result<takosumi::config::AgentConfig> load_config(const Args& args) {
  auto config = takosumi::config::load_agent_config(
      args.config, takosumi::config::process_environment(
                       {"TAKOSUMI_DEPLOY_CONTROL_URL", "TAKOSUMI_POOL_TOKEN", "TAKOSUMI_AGENT_NAME"}));
  if (config && args.once) config->ephemeral = true;
  return config;
}

void set_log_format(takosumi::config::LogFormat format) {
  if (format == takosumi::config::LogFormat::json)
    spdlog::set_formatter(std::make_unique<takosumi::agent::JsonLogFormatter>());
  else
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
}

// TERM, INT, QUIT: the first drains, the second cancels the running Runs, a third ends the
// process at once, as a crash would (the journal, the spool and the supervised tofu make that
// safe: the next start delivers what is left). HUP reloads. Re-armed until the daemon is done.
void await_signals(boost::asio::signal_set& signals, takosumi::agent::AgentDaemon& daemon,
                   const Args& args, int& stops) {
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    if (signal == SIGHUP) {
      auto fresh = load_config(args);
      if (fresh) {
        if (auto s = resolve_helpers(*fresh); !s) fresh = std::unexpected(s.error());
      }
      daemon.reload(std::move(fresh));
    } else if (++stops == 1) {
      daemon.request_stop();
    } else if (stops == 2) {
      daemon.cancel_running();
    } else {
      spdlog::warn("third stop signal: exiting now; what was not delivered is delivered at the "
                   "next start (takosumi-agent recover lists it)");
      spdlog::default_logger()->flush();
      std::_Exit(1);
    }
    await_signals(signals, daemon, args, stops);
  });
}

// One transport per control-plane URL; several (controlPlane.urls) fail over in turn.
takosumi::Result<std::unique_ptr<takosumi::net::HttpTransport>> make_transport(
    const takosumi::config::AgentConfig& config) {
  takosumi::net::BeastTransport::Options network;
  network.tls = config.control_tls;
  network.allow_insecure_http = config.allow_insecure_http;
  std::vector<takosumi::net::FailoverTransport::Replica> replicas;
  for (const auto& url : config.control_urls) {
    auto transport = takosumi::net::BeastTransport::make(url, network);
    if (!transport) return std::unexpected(transport.error());
    if (transport->in_clear_beyond_loopback())
      spdlog::warn("controlPlane.allowInsecureHttp: the pool token and this agent's credential "
                   "cross the network to {} in clear", url);
    replicas.push_back({url, std::make_unique<takosumi::net::BeastTransport>(std::move(*transport))});
  }
  if (replicas.size() == 1) return std::move(replicas.front().transport);
  return std::make_unique<takosumi::net::FailoverTransport>(std::move(replicas));
}

// `mirror verify DIR --pins FILE`: 0 when every package of the mirror matches its pin, 1 with each
// problem named otherwise.
int run_mirror_verify(const std::filesystem::path& mirror, const std::filesystem::path& pins_file) {
  auto pins = takosumi::runner::read_provider_pins(pins_file);
  if (!pins) {
    std::cerr << "takosumi-agent: " << pins.error().to_string() << "\n";
    return 1;
  }
  auto checked = takosumi::runner::verify_mirror(mirror, *pins);
  if (!checked) {
    std::cerr << "takosumi-agent: " << checked.error().to_string() << "\n";
    return 1;
  }
  std::cout << "mirror " << mirror.string() << ": " << *checked
            << " provider package(s), each matches its pin\n";
  return 0;
}

// `mirror add FROM --to MIRROR --pins FILE`: 0 when every package of FROM is in the mirror and the
// whole mirror matches its pins, 1 naming what is wrong otherwise.
int run_mirror_add(const std::filesystem::path& from, const std::filesystem::path& mirror,
                   const std::filesystem::path& pins_file) {
  auto pins = takosumi::runner::read_provider_pins(pins_file);
  if (!pins) {
    std::cerr << "takosumi-agent: " << pins.error().to_string() << "\n";
    return 1;
  }
  auto added = takosumi::runner::add_to_mirror(from, mirror, *pins);
  if (!added) {
    std::cerr << "takosumi-agent: " << added.error().to_string() << "\n";
    return 1;
  }
  for (const auto& name : added->added) std::cout << "added " << name << "\n";
  for (const auto& name : added->present) std::cout << "already there: " << name << "\n";
  std::cout << "mirror " << mirror.string() << ": every package matches its pin\n";
  return 0;
}

// What --check-config reports once everything it checks holds.
int report_config_ok(const takosumi::config::AgentConfig& config,
                     const takosumi::agent::SandboxProbe& sandbox,
                     const std::vector<std::string>& tofu_builds) {
  if (config.control_urls.empty())
    std::cout << "configuration ok: offline agent " << config.name
              << " (no control plane; it runs Run bundles)\n";
  else
    std::cout << "configuration ok: agent " << config.name << ", control plane " << config.control_url
              << "\n";
  for (const auto& line : takosumi::agent::describe_sandbox(sandbox, config)) std::cout << line << "\n";
  for (const auto& line : tofu_builds) std::cout << line << "\n";
  return 0;
}

// The daemon (or `recover --push`, which is the daemon delivering what it holds and exiting) on one
// io_context with its signals, watchdog and metrics listener.
int run_daemon(const Args& args, takosumi::config::AgentConfig config, takosumi::agent::AgentKeys keys,
               takosumi::net::HttpTransport& transport, takosumi::agent::SandboxProbe sandbox,
               const sigset_t& stop_signals) {
  boost::asio::io_context io;
  takosumi::SystemClock clock;
  takosumi::service::ServiceNotifier notifier;
  takosumi::service::Watchdog watchdog(io.get_executor(), notifier);
  const auto stall_hook = takosumi::service::install_test_stall_hook(io.get_executor());
  const std::string metrics_listen = config.metrics.listen;
  takosumi::agent::AgentDaemon daemon(io.get_executor(), std::move(config), std::move(keys), transport,
                                      clock, std::move(sandbox), notifier);
  std::optional<takosumi::service::MetricsListener> metrics;
  if (!metrics_listen.empty()) {
    metrics.emplace(io.get_executor(),
                    takosumi::service::MetricsEndpoints{daemon.metrics().registry(),
                                                        [&] { daemon.refresh_metrics(); },
                                                        [&] { return daemon.not_ready(); }});
    auto port = metrics->listen(metrics_listen);
    if (!port) {
      spdlog::error("{}", port.error().to_string());
      return 2;
    }
    spdlog::info("metrics and health on {} (port {})", metrics_listen, *port);
  }
  boost::asio::signal_set signals(io, SIGINT, SIGTERM, SIGQUIT);
  signals.add(SIGHUP);
  int stops = 0;
  await_signals(signals, daemon, args, stops);
  watchdog.start();
  // Unblocked before any child is started: tofu and its supervisor must not inherit the mask.
  ::sigprocmask(SIG_UNBLOCK, &stop_signals, nullptr);
  int exit_code = 1;
  auto work = args.push ? daemon.async_push_recovery() : daemon.async_run();
  boost::asio::co_spawn(io, std::move(work), [&](std::exception_ptr e, int code) {
    if (e) {
      spdlog::critical("bug: stray exception escaped the agent loop");
      code = 70;
    }
    exit_code = code;
    signals.cancel();
    watchdog.stop();
    if (stall_hook) stall_hook->cancel();
    if (metrics) metrics->stop();
  });
  io.run();
  return exit_code;
}

// Every mode that reads the configuration: the keys, the transport, the sandbox and the tofu build
// checked in the order a start needs them, then the mode itself. Exit 2 for a configuration or host
// that cannot work, with the reason logged.
int run_configured(const Args& args, takosumi::config::AgentConfig& config, const sigset_t& stop_signals) {
  auto refuse = [](const takosumi::Error& e) {
    spdlog::error("{}", e.to_string());
    return 2;
  };
  if (args.print_public_key) return print_public_key(config);
  auto keys = load_keys(config);
  if (!keys) return refuse(keys.error());
  if (args.keys_export) {
    std::cout << takosumi::agent::offline_keys_json(config, *keys) << "\n";
    return 0;
  }
  const bool offline = !args.bundle.empty();
  // What an offline agent does besides bundles: check its configuration, list and discard what its
  // journal holds (recover without --push).
  const bool needs_control_plane = !offline && !args.check_only && !(args.recover && !args.push);
  if (needs_control_plane && config.control_urls.empty()) {
    spdlog::error("controlPlane.url is not set: this agent is offline and only runs "
                  "`run-bundle execute` (docs/air-gapped.md)");
    return 2;
  }
  // An offline agent has no control plane to build a transport for.
  auto transport = config.control_urls.empty()
                       ? takosumi::Result<std::unique_ptr<takosumi::net::HttpTransport>>(nullptr)
                       : make_transport(config);
  if (!transport) return refuse(transport.error());
  if (args.recover && !args.push) return run_recover(args, config);
  if (auto s = resolve_helpers(config); !s) return refuse(s.error());
  // --check-config only looks; the daemon may create its cgroup parent.
  auto sandbox = takosumi::agent::probe_sandbox(config, !args.check_only);
  if (auto s = takosumi::agent::check_tofu_binary(sandbox, config); !s) return refuse(s.error());
  auto tofu_builds = takosumi::agent::describe_tofu_builds(sandbox, config);
  if (!tofu_builds) return refuse(tofu_builds.error());
  // --check-config (the unit's ExecStartPre) refuses a host where no sandbox can be built; the
  // daemon itself says so and goes on, and each Run fails sandbox_failed with the reason.
  if (auto s = takosumi::agent::check_bubblewrap(config); !s) {
    spdlog::error("{}", s.error().to_string());
    if (args.check_only) return 2;
  }
  if (args.check_only) {
    // The pins read, and the mirror checked against them, as each Run will: a start (the unit's
    // ExecStartPre) with a mistyped pins path or a tampered mirror stops here instead of failing
    // every Run.
    if (!config.provider_pins.empty() &&
        run_mirror_verify(config.provider_mirror, config.provider_pins) != 0)
      return 2;
    return report_config_ok(config, sandbox, *tofu_builds);
  }
  for (const auto& line : takosumi::agent::describe_sandbox(sandbox, config)) spdlog::info("{}", line);
  for (const auto& line : *tofu_builds) spdlog::info("{}", line);
  if (config.sandbox.enabled && sandbox.landlock.abi == 0 && !config.sandbox.exec_control_required)
    spdlog::warn("sandbox.execControl is best-effort and the kernel has no Landlock: modules can "
                 "run any program the sandbox can read");
  // One agent per state directory: its journal and spool are this process's alone.
  auto state_lock = takosumi::agent::lock_state_dir(config.state_dir);
  if (!state_lock) return refuse(state_lock.error());
  if (offline) {
    // Unblocked before any child is started: tofu and its supervisor must not inherit the mask.
    ::sigprocmask(SIG_UNBLOCK, &stop_signals, nullptr);
    takosumi::SystemClock clock;
    return takosumi::agent::execute_run_bundle({config, *keys, sandbox, clock}, args.bundle, args.result);
  }
  return run_daemon(args, std::move(config), std::move(*keys), **transport, std::move(sandbox),
                    stop_signals);
}

}  // namespace

int main(int argc, char** argv) {
  // The agent as its own Git helper (git/remote_helper.hpp): a Run's fetch, killable at a deadline.
  if (argc == 2 && std::string_view(argv[1]) == takosumi::git::kHelperCommand)
    return takosumi::git::git_helper_main();
  Args args;
  if (auto done = parse_args(argc, argv, args)) return *done;
  if (args.mirror == Args::Mirror::verify) return run_mirror_verify(args.mirror_dir, args.pins);
  if (args.mirror == Args::Mirror::add) return run_mirror_add(args.packages_dir, args.mirror_dir, args.pins);
  // A SIGTERM that arrives while the agent starts (systemd stopping it right after a restart)
  // waits until the daemon's handler is in place and then stops the agent cleanly, instead of
  // killing it half-started.
  sigset_t stop_signals;
  ::sigemptyset(&stop_signals);
  for (int signal : {SIGTERM, SIGINT, SIGQUIT, SIGHUP}) ::sigaddset(&stop_signals, signal);
  ::sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  // Every line the agent logs passes the secrets of the Runs in flight and the patterns.
  spdlog::set_default_logger(takosumi::agent::make_redacting_stderr_logger("takosumi-agent"));
  set_log_format(takosumi::config::LogFormat::text);
  auto config = load_config(args);
  if (!config) {
    spdlog::error("{}", config.error().to_string());
    return 2;
  }
  set_log_format(config->log_format);
  spdlog::set_level(spdlog::level::from_str(config->log_level));
  return run_configured(args, *config, stop_signals);
}
