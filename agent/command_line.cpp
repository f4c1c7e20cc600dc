#include "agent/command_line.hpp"

#include <CLI/CLI.hpp>

#include "common/version.hpp"

namespace takosumi::agent {
namespace {

// Said under --help: how the daemon takes signals and what the environment overrides.
constexpr const char* kFooter =
    "signals: TERM, INT or QUIT stop claiming and let running Runs finish; a second one cancels\n"
    "  them, a third exits at once (the next start delivers what is left); HUP reloads the\n"
    "  configuration\n"
    "environment: TAKOSUMI_DEPLOY_CONTROL_URL, TAKOSUMI_POOL_TOKEN, TAKOSUMI_AGENT_NAME override\n"
    "  the file";

}  // namespace

std::optional<int> parse_args(int argc, char** argv, Args& args) {
  CLI::App app{"takosumi-agent " TAKOSUMI_VERSION ": runs OpenTofu for a takosumi control plane "
               "(docs/operations.md)",
               "takosumi-agent"};
  app.footer(kFooter);
  app.set_version_flag("--version", "takosumi-agent " TAKOSUMI_VERSION);
  // --config may come after the command too: `recover --push --config agent.yaml`.
  app.fallthrough();
  app.require_subcommand(0, 1);
  // The last --config wins, as with the hand-written parser before: a wrapper may append one.
  app.add_option("--config", args.config, "agent configuration (docs/configuration.md)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  auto* once = app.add_flag("--once", args.once,
                            "take one Run, deliver it, deregister and exit (as ephemeral: true)");
  auto* check = app.add_flag("--check-config", args.check_only,
                             "load and validate the configuration and keys, then exit");
  auto* key = app.add_flag("--print-public-key", args.print_public_key,
                           "print this agent's public signing key (base64; created if there is none "
                           "yet, as on start) for an operator's reset-keys, then exit");
  once->excludes(check, key);
  check->excludes(key);

  auto* recover = app.add_subcommand("recover", "show the Runs the journal and the spool hold "
                                                "(docs/operations.md)");
  auto* push = recover->add_flag("--push", args.push,
                                 "deliver them now, also those held for the operator (agent stopped)");
  recover->add_option("--discard", args.discard,
                      "forget one Run's journal entry and spool (agent stopped)")
      ->excludes(push);
  recover->callback([&] { args.recover = true; });

  auto* keys = app.add_subcommand("keys", "this agent's keys");
  keys->require_subcommand(1);
  keys->add_subcommand("export", "print this agent's public keys and offline id (JSON) for "
                                 "POST /api/v1/agents/offline on the connected side (docs/air-gapped.md)")
      ->callback([&] { args.keys_export = true; });

  auto* bundles = app.add_subcommand("run-bundle", "offline Runs (docs/air-gapped.md)");
  bundles->require_subcommand(1);
  auto* execute = bundles->add_subcommand("execute", "run an offline Run bundle without any network "
                                                     "and write the signed result bundle to --out");
  execute->add_option("bundle", args.bundle, "the Run bundle")->required();
  execute->add_option("--out", args.result, "where the result bundle goes")->required();

  auto* mirror = app.add_subcommand("mirror", "a provider mirror and its pins (docs/air-gapped.md)");
  mirror->require_subcommand(1);
  auto* verify = mirror->add_subcommand("verify", "check every provider package of a mirror against "
                                                  "pinned h1:/zh: hashes (OpenTofu's lock file format)");
  verify->add_option("mirror", args.mirror_dir, "the mirror directory")->required();
  verify->add_option("--pins", args.pins, "the lock file of the pins")->required();
  verify->callback([&] { args.mirror = Args::Mirror::verify; });
  auto* add = mirror->add_subcommand("add", "copy the packages `tofu providers mirror` made into the "
                                            "mirror, each checked against the pins before and after, "
                                            "then check the whole mirror");
  add->add_option("packages", args.packages_dir, "what `tofu providers mirror` made")->required();
  add->add_option("--to", args.mirror_dir, "the mirror directory")->required();
  add->add_option("--pins", args.pins, "the lock file of the pins")->required();
  add->callback([&] { args.mirror = Args::Mirror::add; });

  try {
    app.parse(argc, argv);
    const bool mode = args.check_only || args.print_public_key || args.once;
    if (mode && !app.get_subcommands().empty())
      throw CLI::ValidationError(app.get_subcommands().front()->get_name() +
                                 " is a command of its own: without --once, --check-config or "
                                 "--print-public-key");
    if (args.mirror == Args::Mirror::none && args.config.empty())
      throw CLI::RequiredError("--config");
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return std::nullopt;
}

}  // namespace takosumi::agent
