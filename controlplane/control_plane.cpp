#include "controlplane/control_plane.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <optional>

#include "common/file_io.hpp"
#include "common/unique_fd.hpp"
#include "common/version.hpp"
#include "controlplane/control_metrics.hpp"
#include "controlplane/api/agent_api.hpp"
#include "controlplane/store/agent_registry.hpp"
#include "controlplane/http/http_server.hpp"
#include "controlplane/api/public_api.hpp"
#include "controlplane/api/workspace_backup.hpp"
#include "controlplane/store/keys/key_binding.hpp"
#include "controlplane/store/db/postgres_listener.hpp"
#include "controlplane/store/db/schema.hpp"
#include "controlplane/store/db/store_clock.hpp"
#include "service/metrics_listener.hpp"
#include "service/service_notifier.hpp"
#include "service/watchdog.hpp"

namespace takosumi::controlplane {
namespace {

// Routes every request through the router (which admits it by its route's access), except the
// health check, which anyone may call (unauthenticated: its connection closes after the answer).
// Every answer is counted by route (metrics, once set).
class ControlService final : public HttpHandler {
 public:
  explicit ControlService(const Router& router) : router_(router) {}
  void set_metrics(ControlMetrics& metrics) { metrics_ = &metrics; }
  Admission admit(const HttpRequest& head) override {
    if (is_health_check(head)) return Admission{std::nullopt, BodyPolicy{1024, false}};
    auto admission = router_.admit(head);
    if (admission.refusal && metrics_ != nullptr)
      metrics_->request(router_.route_label(head), static_cast<unsigned>(admission.refusal->status));
    return admission;
  }
  boost::asio::awaitable<HttpResponse> async_handle(HttpRequest request) override {
    if (is_health_check(request)) co_return json_response(200, boost::json::object{{"status", "ok"}});
    auto response = co_await router_.async_dispatch(request);
    if (metrics_ != nullptr)
      metrics_->request(router_.route_label(request), static_cast<unsigned>(response.status));
    co_return response;
  }

 private:
  static bool is_health_check(const HttpRequest& r) { return r.method == "GET" && r.path == "/healthz"; }

  const Router& router_;
  ControlMetrics* metrics_ = nullptr;
};

}  // namespace

namespace {

// The Git helper is this program itself; a file:// source never lies inside dataDir (its git
// cache holds every Workspace's packed sources).
RefResolverSettings resolver_settings(const ControlConfig& c) {
  RefResolverSettings s;
  s.helper = c.git_helper;
  s.timeout = std::chrono::seconds(c.sources.resolve_timeout_seconds);
  s.threads = c.sources.max_concurrent;
  s.per_workspace = c.sources.per_workspace;
  s.ca_file = c.sources.ca_file;
  s.rules = protocol::SourceRules{c.sources.file_roots, {c.data_dir}, c.sources.allow_loopback_hosts, "sources"};
  s.git_cache = c.data_dir / "git-cache";
  s.fetch_timeout = std::chrono::seconds(c.sources.fetch_timeout_seconds);
  s.max_fetch_bytes = c.sources.max_fetch_mib << 20;
  return s;
}

}  // namespace

// Declaration order is construction order; destruction runs in reverse, so the server and the
// pool (which may still reference the stores) go first.
struct ControlPlane::Parts {
  Parts(ControlConfig cfg, const Clock& clk, Database database, Keyring keyring, BlobStore blob)
      : config(std::move(cfg)),
        clock(clk),
        db(std::move(database)),
        keys(std::move(keyring)),
        blobs(std::move(blob)),
        git(resolver_settings(config)),
        catalog(db, clock),
        runs(db, clock),
        states(db, clock),
        logs(db),
        agents(db, clock, config.agent_credential_ttl_seconds),
        pool_tokens(db, clock),
        pools(db, clock),
        connections(db, keys, clock),
        dependencies(db, clock),
        shares(db, clock),
        tokens(db, clock),
        workspace_plans(db, clock),
        backups(db, clock),
        audit(db, clock),
        queue(db, catalog, runs, states, connections, audit, clock, config.lease_seconds),
        manifests(stores(), clock, config.manifest_ttl_seconds),
        challenges(db, clock),
        planner(stores()),
        pool(2),
        public_api({stores(), git, queue, manifests, pool.get_executor(), waiters, planner, clock,
                    config.api_token}),
        agent_api({stores(), queue, manifests, waiters, planner, pool.get_executor(),
                   config.pool_tokens, challenges}),
        service(router),
        server(io, service, config.data_dir / "tmp",
               ServerLimits{config.max_connections, config.max_connections_per_client,
                            std::chrono::seconds(config.header_timeout_seconds),
                            config.max_temp_bytes}) {
    public_api.register_routes(router);
    agent_api.register_routes(router);
    metrics.emplace(TAKOSUMI_VERSION, router.route_labels());
    service.set_metrics(*metrics);
  }

  // Every member named here is declared (so constructed) before the APIs that take it.
  Stores stores() {
    return {db,     catalog, runs,            states,  logs,   connections, dependencies,
            shares, tokens,  workspace_plans, backups, agents, pool_tokens, pools, audit, blobs, keys};
  }

  ControlConfig config;
  StoreClock clock;  // the caller's, corrected by the database's on PostgreSQL
  boost::asio::io_context io{1};
  Database db;
  Keyring keys;
  BlobStore blobs;
  GitRefResolver git;
  CatalogStore catalog;
  RunStore runs;
  StateStore states;
  RunLogStore logs;
  AgentRegistry agents;
  PoolTokenStore pool_tokens;
  AgentPoolStore pools;
  ConnectionStore connections;
  DependencyStore dependencies;
  OutputShareStore shares;
  ApiTokenStore tokens;
  WorkspacePlanStore workspace_plans;
  BackupStore backups;
  AuditLog audit;
  RunQueue queue;
  ManifestBuilder manifests;
  RegistrationChallenges challenges;
  WorkspacePlanner planner;
  ClaimWaiters waiters;
  std::unique_ptr<PostgresListener> listener;  // on a PostgreSQL store: the other replicas' wakes
  boost::asio::thread_pool pool;
  Router router{kMaxArtifactBytes};
  PublicApi public_api;
  AgentApi agent_api;
  ControlService service;
  HttpServer server;
  std::optional<boost::asio::signal_set> signals;
  std::optional<boost::asio::signal_set> hangups;
  service::ServiceNotifier notifier;
  service::Watchdog watchdog{io.get_executor(), notifier};
  std::unique_ptr<boost::asio::signal_set> stall_hook =
      service::install_test_stall_hook(io.get_executor());
  std::uint16_t port = 0;
  std::optional<ControlMetrics> metrics;  // made once every route is registered
  std::optional<service::MetricsListener> metrics_listener;
  boost::asio::steady_timer status_timer{io};
  bool stopping = false;
};

namespace {

void await_hangup(boost::asio::signal_set& hangups, ControlPlane& control,
                  service::ServiceNotifier& notifier) {
  hangups.async_wait([&hangups, &control, &notifier](const boost::system::error_code& ec, int) {
    if (ec) return;
    notifier.reloading();
    control.reload_tls();
    notifier.reloaded();
    await_hangup(hangups, control, notifier);
  });
}

// SQLite: <dataDir>/control.db, owner-only (SQLite gives its -wal and -shm files the database
// file's mode, so the file is created first).
Result<Database> open_sqlite_store(const std::filesystem::path& dir) {
  { const UniqueFd created(::open((dir / "control.db").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)); }
  return Database::open_sqlite(dir / "control.db");
}

// On a PostgreSQL store the blobs are in the database too (blob_store.hpp).
std::optional<PostgresSettings> shared_blobs(const ControlConfig& config) {
  if (config.store_driver == StoreDriver::sqlite) return std::nullopt;
  return config.postgres;
}

}  // namespace

Result<Database> open_store(const ControlConfig& config) {
  if (config.store_driver == StoreDriver::sqlite) return open_sqlite_store(config.data_dir);
  return with_context(Database::connect_postgres(config.postgres), "store");
}

// SQLite's one process migrates its own file. Replicas on PostgreSQL create the schema of an empty
// database (in one locked transaction: replicas starting together create it once) but never
// migrate one: an older replica may still be serving it (`takosumi-control migrate`).
Status prepare_schema(Database& db) {
  if (db.driver() == StoreDriver::sqlite) return create_schema(db);
  auto version = schema_version(db);
  if (!version) return std::unexpected(version.error().with_context("store"));
  if (*version == 0) return create_schema(db);
  return check_schema_current(db);
}

Status check_existing_data_dir(const ControlConfig& config) {
  const auto& dir = config.data_dir;
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    return fail(errc::kConfigInvalid, "dataDir " + dir.string() + " does not exist: check the "
                                      "configuration names the data directory of the control plane");
  if (st.st_uid != ::geteuid())
    return fail(errc::kConfigInvalid,
                "dataDir " + dir.string() + " belongs to uid " + std::to_string(st.st_uid) +
                    ", not to this user: run the command as its owner (e.g. sudo -u "
                    "takosumi-control takosumi-control …), so the service can read what it writes");
  for (const char* part : {"control.db", "keys/signing.key", "keys/storage.key"}) {
    if (config.store_driver != StoreDriver::sqlite && std::string_view(part) == "control.db")
      continue;
    if (std::error_code ec; !std::filesystem::is_regular_file(dir / part, ec))
      return fail(errc::kConfigInvalid, dir.string() + " has no " + part +
                                            ": is dataDir the data directory of a control plane "
                                            "that has served?");
  }
  return {};
}

// The one start-up sequence: the data directory (made for a server, required to exist for an
// offline command), the keyring, the store and its schema bound to those keys, the blobs.
Result<std::unique_ptr<ControlPlane::Parts>> ControlPlane::open_parts(ControlConfig& config,
                                                                      const Clock& clock,
                                                                      Opening opening) {
  const auto dir = config.data_dir;
  if (opening == Opening::serve) TAKOSUMI_TRY(ensure_directory(dir, 0700));
  else TAKOSUMI_TRY(check_existing_data_dir(config));
  auto keys = Keyring::load_or_create(dir);
  if (!keys) return std::unexpected(keys.error());
  auto db = open_store(config);
  if (!db) return std::unexpected(db.error());
  TAKOSUMI_TRY(prepare_schema(*db));
  TAKOSUMI_TRY(bind_keys(*db, *keys));
  // A server shares what it holds locally with its replicas; an offline command only reads.
  auto blobs = opening == Opening::serve ? BlobStore::open(dir, shared_blobs(config))
                                         : BlobStore::open_shared(dir, shared_blobs(config));
  if (!blobs) return std::unexpected(blobs.error());
  if (opening == Opening::serve) TAKOSUMI_TRY(blobs->share_local_blobs());
  return std::make_unique<ControlPlane::Parts>(std::move(config), clock, std::move(*db),
                                               std::move(*keys), std::move(*blobs));
}

Result<std::unique_ptr<ControlPlane>> ControlPlane::create(ControlConfig config,
                                                           const Clock& clock) {
  net::TlsContext tls;
  if (config.tls) {
    auto context = net::make_server_context(*config.tls);
    if (!context) return std::unexpected(context.error());
    tls = std::move(*context);
  }
  std::optional<PostgresSettings> postgres = shared_blobs(config);
  auto opened = open_parts(config, clock, Opening::serve);
  if (!opened) return std::unexpected(opened.error());
  auto parts = std::move(*opened);
  parts->server.set_tls(std::move(tls));
  if (parts->clock.follows(parts->db)) TAKOSUMI_TRY(parts->clock.sync(parts->db));
  // A Run queued on one replica wakes the agents long-polling on all of them: NOTIFY after the
  // local wake, LISTEN on a connection of its own. NOTIFY runs on the store's connection outside
  // any transaction (the waiters are woken after a commit), so it is delivered at once.
  if (postgres) {
    auto listener = PostgresListener::start(parts->io.get_executor(), *postgres,
                                            std::string(kClaimsChannel),
                                            [&waiters = parts->waiters] { waiters.wake_local(); });
    if (!listener) return std::unexpected(listener.error().with_context("store notifications"));
    parts->listener = std::move(*listener);
    parts->waiters.set_broadcast([&db = parts->db] {
      if (auto sent = db.exec("NOTIFY " + std::string(kClaimsChannel)); !sent)
        spdlog::warn("waking the other replicas: {}", sent.error().to_string());
    });
  }
  return std::unique_ptr<ControlPlane>(new ControlPlane(std::move(parts)));
}

Result<std::unique_ptr<ControlPlane>> ControlPlane::open_existing(ControlConfig config,
                                                                  const Clock& clock) {
  auto parts = open_parts(config, clock, Opening::existing);
  if (!parts) return std::unexpected(parts.error());
  return std::unique_ptr<ControlPlane>(new ControlPlane(std::move(*parts)));
}

ControlPlane::ControlPlane(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

ControlPlane::~ControlPlane() = default;

Result<std::uint16_t> ControlPlane::listen() {
  auto& p = *parts_;
  // Stale from an earlier run. Only a process that is about to serve removes it: a
  // `takosumi-control restore` beside a running server leaves that server's file alone.
  std::error_code ignored;
  std::filesystem::remove(p.config.data_dir / "control.port", ignored);
  auto port = p.server.listen(p.config.listen_address, p.config.port);
  if (!port) return port;
  p.port = *port;
  if (!p.config.metrics.listen.empty()) {
    p.metrics_listener.emplace(
        p.io.get_executor(),
        service::MetricsEndpoints{
            p.metrics->registry(),
            [&p] {
              if (auto s = p.metrics->refresh(p.db, p.clock, p.queue.claims().lease_expiries()); !s)
                spdlog::warn("metrics: {}", s.error().to_string());
            },
            [&p]() -> std::optional<std::string> {
              if (p.stopping) return "stopping";
              return std::nullopt;
            }});
    auto metrics_port = p.metrics_listener->listen(p.config.metrics.listen);
    if (!metrics_port) return std::unexpected(metrics_port.error());
    // Beside control.port, for scripts and tests that start on port 0.
    TAKOSUMI_TRY(write_file_atomic(p.config.data_dir / "metrics.port",
                                   std::to_string(*metrics_port) + "\n", 0644));
    spdlog::info("metrics and health on {} (port {})", p.config.metrics.listen, *metrics_port);
  }
  TAKOSUMI_TRY(write_file_atomic(p.config.data_dir / "control.port",
                                 std::to_string(*port) + "\n", 0644));
  return port;
}

void ControlPlane::stop_on_signals() {
  auto& p = *parts_;
  p.signals.emplace(p.io, SIGINT, SIGTERM, SIGQUIT);
  p.signals->async_wait([this](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("signal {}: stopping", signal);
    stop();
  });
  p.hangups.emplace(p.io, SIGHUP);
  await_hangup(*p.hangups, *this, p.notifier);
}

bool ControlPlane::reload_tls() {
  auto& p = *parts_;
  if (!p.config.tls) {
    spdlog::info("SIGHUP: no tls section, nothing to reload");
    return false;
  }
  auto context = net::make_server_context(*p.config.tls);
  if (!context) {
    spdlog::error("TLS reload refused, the certificate in use stays: {}", context.error().to_string());
    return false;
  }
  // In use once the io thread has taken it: the line is logged there.
  boost::asio::post(p.io, [&p, context = std::move(*context)]() mutable {
    p.server.set_tls(std::move(context));
    spdlog::info("TLS certificate and key reloaded from {}", p.config.tls->cert_file.string());
  });
  return true;
}

// The status line systemctl shows, every 15 s: where it serves, the queue, the agents.
void ControlPlane::refresh_status() {
  auto& p = *parts_;
  if (p.stopping) return;
  const std::string serving = "serving " + std::string(p.config.tls ? "https" : "http") + " on " +
                              p.config.listen_address + ":" + std::to_string(p.port);
  // The database's clock is read again each time: a host's clock drifts, and NTP steps it.
  if (p.clock.follows(p.db))
    if (auto synced = p.clock.sync(p.db); !synced)
      spdlog::warn("{}", synced.error().to_string());
  if (auto s = p.metrics->refresh(p.db, p.clock, p.queue.claims().lease_expiries()); s)
    p.notifier.status(serving + "; " + p.metrics->summary());
  else
    p.notifier.status(serving);
  p.status_timer.expires_after(std::chrono::seconds(15));
  p.status_timer.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) refresh_status();
  });
}

void ControlPlane::run() {
  auto& p = *parts_;
  // A completion recorded just before a stop may not have advanced its workspace plans.
  if (auto advanced = p.planner.advance_all(); !advanced)
    spdlog::warn("workspace plans: {}", advanced.error().to_string());
  p.server.start();
  refresh_status();
  p.notifier.ready();
  p.watchdog.start();
  p.io.run();
  p.pool.join();
}

void ControlPlane::stop() {
  boost::asio::post(parts_->io, [this] {
    auto& p = *parts_;
    p.stopping = true;
    p.status_timer.cancel();
    p.notifier.status("stopping");
    p.notifier.stopping();
    if (p.metrics_listener) p.metrics_listener->stop();
    p.watchdog.stop();
    if (p.stall_hook) p.stall_hook->cancel();
    p.server.stop();
    p.waiters.stop();
    if (p.listener) p.listener->stop();
    boost::system::error_code ec;
    if (p.signals) p.signals->cancel(ec);
    if (p.hangups) p.hangups->cancel(ec);
  });
}

Result<boost::json::object> ControlPlane::restore_workspace(const std::string& document,
                                                            std::string_view source_key_base64) {
  return controlplane::restore_workspace(parts_->stores(), document, source_key_base64,
                                         "takosumi-control restore");
}

const Keyring& ControlPlane::keys() const { return parts_->keys; }
const std::filesystem::path& ControlPlane::data_dir() const { return parts_->config.data_dir; }

}  // namespace takosumi::controlplane
