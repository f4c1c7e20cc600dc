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
#include "agent/bubblewrap_check.hpp"
#include "agent/json_log_formatter.hpp"
#include "agent/offline_run.hpp"
#include "agent/recover_command.hpp"
#include "agent/redacting_sink.hpp"
#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/version.hpp"
#include "config/agent_config.hpp"
#include "git/helper_main.hpp"
#include "git/remote_helper.hpp"
#include "net/beast_transport.hpp"
#include "net/failover_transport.hpp"
#include "service/metrics_listener.hpp"
#include "runner/policy/mirror_verify.hpp"
#include "runner/policy/verified_mirror.hpp"
#include "service/service_notifier.hpp"
#include "service/watchdog.hpp"

namespace {

constexpr const char* kUsage =
    "usage: takosumi-agent --config <agent.yaml> [--once | --check-config | --print-public-key]\n"
    "       takosumi-agent --config <agent.yaml> recover [--push | --discard RUN_ID]\n"
    "       takosumi-agent mirror verify <mirror dir> --pins <lock file>\n"
    "       takosumi-agent mirror add <packages dir> --to <mirror dir> --pins <lock file>\n"
    "       takosumi-agent --config <agent.yaml> keys export\n"
    "       takosumi-agent --config <agent.yaml> run-bundle execute <bundle> --out <result>\n"
    "  --config FILE     agent configuration (docs/configuration.md)\n"
    "  --once            take one Run, deliver it, deregister and exit (as ephemeral: true)\n"
    "  --check-config    load and validate the configuration and keys, then exit\n"
    "  --print-public-key  print this agent's public signing key (base64; created if there is\n"
    "                    none yet, as on start) for an operator's reset-keys, then exit\n"
    "  recover           show the Runs the journal and the spool hold (docs/operations.md)\n"
    "  mirror verify     check every provider package of a mirror against pinned h1:/zh: hashes\n"
    "                    in the format of OpenTofu's lock files (docs/air-gapped.md)\n"    "  mirror add        copy the packages `tofu providers mirror` made into the mirror, each\n"
    "                    checked against the pins before and after, then check the whole mirror\n"
    "    --push          deliver them now, also those held for the operator (agent stopped)\n"
    "    --discard ID    forget one Run's journal entry and spool (agent stopped)\n"
    "  keys export       print this agent's public keys and offline id (JSON) for\n"
    "                    POST /api/v1/agents/offline on the connected side (docs/air-gapped.md)\n"
    "  run-bundle execute  run an offline Run bundle without any network and write the signed\n"
    "                    result bundle to --out (docs/air-gapped.md)\n"
    "signals: TERM, INT or QUIT stop claiming and let running Runs finish; a second one cancels\n"
    "  them, a third exits at once (the next start delivers what is left); HUP reloads the\n"
    "  configuration\n"
    "environment: TAKOSUMI_DEPLOY_CONTROL_URL, TAKOSUMI_POOL_TOKEN, TAKOSUMI_AGENT_NAME override\n"
    "  the file\n";

struct Args {
  std::string config;
  bool check_only = false;
  bool once = false;
  bool print_public_key = false;
  bool recover = false;
  bool push = false;
  std::string discard;
  bool keys_export = false;
  std::string bundle;  // run-bundle execute
  std::string result;  // its --out
};

bool parse_args(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--config" && i + 1 < argc) {
      args.config = argv[++i];
    } else if (a == "--check-config") {
      args.check_only = true;
    } else if (a == "--once") {
      args.once = true;
    } else if (a == "--print-public-key") {
      args.print_public_key = true;
    } else if (a == "keys" && i + 1 < argc && std::string_view(argv[i + 1]) == "export") {
      args.keys_export = true;
      ++i;
    } else if (a == "run-bundle" && i + 2 < argc && std::string_view(argv[i + 1]) == "execute") {
      args.bundle = argv[i + 2];
      i += 2;
    } else if (a == "--out" && !args.bundle.empty() && i + 1 < argc) {
      args.result = argv[++i];
    } else if (a == "recover") {
      args.recover = true;
    } else if (a == "--push" && args.recover) {
      args.push = true;
    } else if (a == "--discard" && args.recover && i + 1 < argc) {
      args.discard = argv[++i];
    } else if (a == "--version") {
      std::cout << "takosumi-agent " << TAKOSUMI_VERSION << "\n";
      std::exit(0);
    } else {
      return false;
    }
  }
  const int modes = int(args.check_only) + int(args.print_public_key) + int(args.recover) +
                    int(args.once) + int(args.keys_export) + int(!args.bundle.empty());
  if (!args.bundle.empty() && args.result.empty()) return false;
  return !args.config.empty() && !(args.push && !args.discard.empty()) && modes <= 1;
}

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

}  // namespace

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

int main(int argc, char** argv) {
  // The agent as its own Git helper (git/remote_helper.hpp): a Run's fetch, killable at a deadline.
  if (argc == 2 && std::string_view(argv[1]) == takosumi::git::kHelperCommand)
    return takosumi::git::git_helper_main();
  if (argc == 6 && std::string_view(argv[1]) == "mirror" && std::string_view(argv[2]) == "verify" &&
      std::string_view(argv[4]) == "--pins")
    return run_mirror_verify(argv[3], argv[5]);
  if (argc == 8 && std::string_view(argv[1]) == "mirror" && std::string_view(argv[2]) == "add" &&
      std::string_view(argv[4]) == "--to" && std::string_view(argv[6]) == "--pins")
    return run_mirror_add(argv[3], argv[5], argv[7]);
  // A SIGTERM that arrives while the agent starts (systemd stopping it right after a restart)
  // waits until the handler below is in place and then stops the agent cleanly, instead of
  // killing it half-started.
  sigset_t stop_signals;
  ::sigemptyset(&stop_signals);
  ::sigaddset(&stop_signals, SIGTERM);
  ::sigaddset(&stop_signals, SIGINT);
  ::sigaddset(&stop_signals, SIGQUIT);
  ::sigaddset(&stop_signals, SIGHUP);
  ::sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  Args args;
  if (!parse_args(argc, argv, args)) {
    std::cerr << kUsage;
    return 2;
  }
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
  if (args.print_public_key) return print_public_key(*config);
  auto keys = load_keys(*config);
  if (!keys) {
    spdlog::error("{}", keys.error().to_string());
    return 2;
  }
  if (args.keys_export) {
    std::cout << takosumi::agent::offline_keys_json(*config, *keys) << "\n";
    return 0;
  }
  const bool offline = !args.bundle.empty();
  // What an offline agent does besides bundles: check its configuration, list and discard what its
  // journal holds (recover without --push).
  const bool needs_control_plane = !offline && !args.check_only && !(args.recover && !args.push);
  if (needs_control_plane && config->control_urls.empty()) {
    spdlog::error("controlPlane.url is not set: this agent is offline and only runs "
                  "`run-bundle execute` (docs/air-gapped.md)");
    return 2;
  }
  // An offline agent has no control plane to build a transport for.
  auto transport = config->control_urls.empty()
                       ? takosumi::Result<std::unique_ptr<takosumi::net::HttpTransport>>(nullptr)
                       : make_transport(*config);
  if (!transport) {
    spdlog::error("{}", transport.error().to_string());
    return 2;
  }
  if (args.recover && !args.push) return run_recover(args, *config);
  if (auto s = resolve_helpers(*config); !s) {
    spdlog::error("{}", s.error().to_string());
    return 2;
  }
  // --check-config only looks; the daemon may create its cgroup parent.
  auto sandbox = takosumi::agent::probe_sandbox(*config, !args.check_only);
  if (auto s = takosumi::agent::check_tofu_binary(sandbox, *config); !s) {
    spdlog::error("{}", s.error().to_string());
    return 2;
  }
  auto tofu_builds = takosumi::agent::describe_tofu_builds(sandbox, *config);
  if (!tofu_builds) {
    spdlog::error("{}", tofu_builds.error().to_string());
    return 2;
  }
  // --check-config (the unit's ExecStartPre) refuses a host where no sandbox can be built; the
  // daemon itself says so and goes on, and each Run fails sandbox_failed with the reason.
  if (auto s = takosumi::agent::check_bubblewrap(*config); !s) {
    spdlog::error("{}", s.error().to_string());
    if (args.check_only) return 2;
  }
  // The pins read, and the mirror checked against them, as each Run will: a start (the unit's
  // ExecStartPre) with a mistyped pins path or a tampered mirror stops here instead of failing
  // every Run. Only at --check-config: a start without it checks at each Run anyway.
  if (args.check_only && !config->provider_pins.empty()) {
    const int verified = run_mirror_verify(config->provider_mirror, config->provider_pins);
    if (verified != 0) return 2;
  }
  if (args.check_only) {
    if (config->control_urls.empty())
      std::cout << "configuration ok: offline agent " << config->name
                << " (no control plane; it runs Run bundles)\n";
    else
      std::cout << "configuration ok: agent " << config->name << ", control plane "
                << config->control_url << "\n";
    for (const auto& line : takosumi::agent::describe_sandbox(sandbox, *config))
      std::cout << line << "\n";
    for (const auto& line : *tofu_builds) std::cout << line << "\n";
    return 0;
  }
  for (const auto& line : takosumi::agent::describe_sandbox(sandbox, *config))
    spdlog::info("{}", line);
  for (const auto& line : *tofu_builds) spdlog::info("{}", line);
  if (config->sandbox.enabled && sandbox.landlock.abi == 0 && !config->sandbox.exec_control_required)
    spdlog::warn("sandbox.execControl is best-effort and the kernel has no Landlock: modules can "
                 "run any program the sandbox can read");

  // One agent per state directory: its journal and spool are this process's alone.
  auto state_lock = takosumi::agent::lock_state_dir(config->state_dir);
  if (!state_lock) {
    spdlog::error("{}", state_lock.error().to_string());
    return 2;
  }
  if (offline) {
    // Unblocked before any child is started: tofu and its supervisor must not inherit the mask.
    ::sigprocmask(SIG_UNBLOCK, &stop_signals, nullptr);
    takosumi::SystemClock clock;
    return takosumi::agent::execute_run_bundle({*config, *keys, sandbox, clock}, args.bundle,
                                               args.result);
  }
  boost::asio::io_context io;
  takosumi::SystemClock clock;
  takosumi::service::ServiceNotifier notifier;
  takosumi::service::Watchdog watchdog(io.get_executor(), notifier);
  const auto stall_hook = takosumi::service::install_test_stall_hook(io.get_executor());
  const std::string daemon_config_metrics = config->metrics.listen;
  takosumi::agent::AgentDaemon daemon(io.get_executor(), std::move(*config), std::move(*keys),
                                      **transport, clock, std::move(sandbox), notifier);
  std::optional<takosumi::service::MetricsListener> metrics;
  if (!daemon_config_metrics.empty()) {
    metrics.emplace(io.get_executor(),
                    takosumi::service::MetricsEndpoints{daemon.metrics().registry(),
                                                        [&] { daemon.refresh_metrics(); },
                                                        [&] { return daemon.not_ready(); }});
    auto port = metrics->listen(daemon_config_metrics);
    if (!port) {
      spdlog::error("{}", port.error().to_string());
      return 2;
    }
    spdlog::info("metrics and health on {} (port {})", daemon_config_metrics, *port);
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
