#include "tests/support/stack.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include <signal.h>

#include "crypto/envelope.hpp"
#include "controlplane/testing/test_support.hpp"
#include "crypto/keys.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {
namespace json = boost::json;

namespace {

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

}  // namespace

Stack::Stack(StackOptions options) : options_(std::move(options)), root_(make_temp_dir("takosumi-it-")) {
  const std::filesystem::path bin = test_paths::binary_dir;
  write(root_ / "api.token", api_token_ + "\n");
  write(root_ / "pool.token", pool_token_ + "\n");
  std::filesystem::permissions(root_ / "api.token", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::permissions(root_ / "pool.token", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  if (options_.https) {
    ca_ = std::make_unique<TestCa>("takosumi test CA");
    std::filesystem::create_directories(pki_dir());
    ca_->write_cert(pki_dir() / "ca.pem");
    ca_->issue({.common_name = "localhost", .dns_names = {"localhost"}})
        .write(pki_dir() / "server.pem", pki_dir() / "server.key");
  }
  // The pg.* run of a suite (takosumi_on_postgres): the control plane keeps its records in a
  // database of its own on the test server, kept across the Stack's restarts.
  if (takosumi::testing::testing_on_postgres())
    store_yaml_ = "store:\n  driver: postgres\n  url: '" +
                  takosumi::testing::new_test_postgres_database() + "'\n";
  start_control();
  if (port_ == 0) return;
  if (options_.replicas > 1 && store_yaml_.empty())
    ADD_FAILURE() << "replicas share a store: only the pg.* run has one";
  for (int i = 1; i < options_.replicas && !store_yaml_.empty(); ++i) start_replica(i);
  EXPECT_EQ(std::filesystem::exists(data_dir() / "control.db"), store_yaml_.empty())
      << "the control plane keeps its records where its configuration says";
  if (options_.https)
    api_ = std::make_unique<HttpClient>(
        "localhost", port_, api_token_,
        options_.mutual_tls ? client_certificate("operator")
                            : net::TlsClientFiles{pki_dir() / "ca.pem", {}, {}});
  else
    api_ = std::make_unique<HttpClient>(port_, api_token_);
  for (int i = 0; i < options_.agents; ++i) start_agent(i);
  auto ws = api_->post("/api/v1/workspaces", json::object{{"name", "it"}});
  EXPECT_EQ(ws.status, 201u) << ws.body;
  if (ws.json.is_object()) workspace_id_ = json::value_to<std::string>(ws.json.at("id"));
}

namespace {

// Whether the YAML text has a top-level `name:` section.
bool has_section(const std::string& yaml, const std::string& name) {
  return yaml.starts_with(name + ":") || yaml.find("\n" + name + ":") != std::string::npos;
}

}  // namespace

std::string Stack::control_yaml(const std::filesystem::path& data, unsigned short port) const {
  return "listenAddress: 127.0.0.1\nport: " + std::to_string(port) + "\n"
        "dataDir: " + data.string() + "\n" + store_yaml_ +
        "apiTokenFile: " + (root_ / "api.token").string() + "\n"
        "poolTokenFile: " + (root_ / "pool.token").string() + "\n"
        "leaseSeconds: " + std::to_string(options_.lease_seconds) + "\n"
        "manifestTtlSeconds: " + std::to_string(options_.manifest_ttl_seconds) + "\n" +
        (options_.https ? "tls:\n  certFile: " + (pki_dir() / "server.pem").string() +
                              "\n  keyFile: " + (pki_dir() / "server.key").string() + "\n" +
                              (options_.mutual_tls
                                   ? "  clientCaFile: " + (pki_dir() / "ca.pem").string() + "\n"
                                   : std::string())
                        : std::string()) +
        // Many stacks run at once: never the default metrics port (data_dir()/metrics.port).
        (options_.extra_control_yaml.find("metrics:") == std::string::npos
             ? "metrics:\n  listen: 127.0.0.1:0\n"
             : std::string()) +
        // The tests' repositories are local ones under the stack's directory.
        (has_section(options_.extra_control_yaml, "sources")
             ? std::string()
             : "sources:\n  fileRoots: [" + root_.string() + "]\n") +
        options_.extra_control_yaml;
}

unsigned short Stack::launch_control(std::unique_ptr<ChildProcess>& process,
                                     const std::filesystem::path& config,
                                     const std::filesystem::path& data,
                                     const std::filesystem::path& log) {
  const std::filesystem::path bin = test_paths::binary_dir;
  const auto port_file = data / "control.port";
  std::filesystem::remove(port_file);
  process = std::make_unique<ChildProcess>(
      std::vector<std::string>{(bin / "controlplane/takosumi-control").string(), "serve",
                               "--config", config.string()},
      options_.control_env, log);
  if (!eventually([&] { return std::filesystem::exists(port_file); }, std::chrono::seconds(30))) {
    ADD_FAILURE() << "takosumi-control did not start:\n" << read_text(log);
    return 0;
  }
  return static_cast<unsigned short>(std::stoi(read_text(port_file)));
}

void Stack::start_control() {
  // A restart keeps the port, as a control plane behind a fixed address would.
  write(root_ / "control.yaml", control_yaml(data_dir(), port_));
  const unsigned short port = launch_control(control_, root_ / "control.yaml", data_dir(),
                                             root_ / "control.log");
  if (port != 0) port_ = port;
}

std::filesystem::path Stack::replica_dir(int index) const {
  return root_ / ("control-data-" + std::to_string(index));
}

void Stack::start_replica(int index) {
  namespace fs = std::filesystem;
  const fs::path data = replica_dir(index);
  // Every replica holds the keys the store was first served with (the operator copies them).
  if (!fs::exists(data / "keys")) {
    fs::create_directories(data);
    fs::copy(data_dir() / "keys", data / "keys", fs::copy_options::recursive);
    fs::permissions(data / "keys", fs::perms::owner_all);
    for (const auto& f : fs::directory_iterator(data / "keys"))
      fs::permissions(f.path(), fs::perms::owner_read | fs::perms::owner_write);
  }
  const fs::path config = root_ / ("control-" + std::to_string(index) + ".yaml");
  write(config, control_yaml(data, replica_ports_[index]));
  const unsigned short port = launch_control(replicas_[index], config, data,
                                             root_ / ("control-" + std::to_string(index) + ".log"));
  if (port != 0) replica_ports_[index] = port;
}

void Stack::kill_replica(int index) {
  if (index == 0) return stop_control(true);
  if (auto& r = replicas_[index]) r->kill_now();
  replicas_[index].reset();
}

unsigned short Stack::replica_port(int index) const {
  if (index == 0) return port_;
  auto it = replica_ports_.find(index);
  return it == replica_ports_.end() ? 0 : it->second;
}

std::string Stack::replica_log(int index) const {
  return read_text(index == 0 ? root_ / "control.log"
                              : root_ / ("control-" + std::to_string(index) + ".log"));
}

void Stack::use_replica_for_api(int index) {
  api_ = std::make_unique<HttpClient>(replica_port(index), api_token_);
}

void Stack::stop_control(bool hard) {
  if (!control_) return;
  if (hard) {
    control_->kill_now();
  } else {
    control_->stop();
  }
  control_.reset();
}

void Stack::kill_agent(int index) {
  auto& a = agents_.at(static_cast<std::size_t>(index));
  if (a) a->kill_now();
  a.reset();
}

int Stack::wait_agent_exit(int index, std::chrono::seconds timeout) {
  auto& a = agents_.at(static_cast<std::size_t>(index));
  if (!a) return -1;
  const int status = a->wait(timeout);
  if (status >= 0) a.reset();
  return status;
}

pid_t Stack::agent_pid(int index) const {
  const auto& a = agents_.at(static_cast<std::size_t>(index));
  return a ? a->pid() : -1;
}

void Stack::signal_agent(int index, int sig) const {
  const pid_t pid = agent_pid(index);
  if (pid <= 0 || ::kill(pid, sig) != 0) ADD_FAILURE() << "cannot signal agent-" << index;
}

unsigned short Stack::metrics_port() const {
  return static_cast<unsigned short>(std::stoi(read_text(data_dir() / "metrics.port")));
}

pid_t Stack::control_pid() const { return control_ ? control_->pid() : -1; }

std::filesystem::path Stack::agent_dir(int index) const {
  return root_ / ("agent-" + std::to_string(index));
}

std::string Stack::state_plaintext(const std::string& ciphertext_sha256) const {
  auto storage = crypto::load_box_key(data_dir() / "keys/storage.key");
  if (!storage) {
    ADD_FAILURE() << storage.error().message;
    return {};
  }
  const auto blob = data_dir() / "blobs" / ciphertext_sha256;
  auto prefix = crypto::read_envelope_prefix(blob);
  if (!prefix) {
    ADD_FAILURE() << blob << ": " << prefix.error().message;
    return {};
  }
  auto dek = crypto::open_envelope_dek(*prefix, *storage);
  if (!dek) {
    ADD_FAILURE() << dek.error().message;
    return {};
  }
  const auto out = root_ / ("state-" + ciphertext_sha256 + ".json");
  auto header = crypto::decrypt_file(blob, out, *dek, {"state", "", std::nullopt, std::nullopt});
  if (!header) {
    ADD_FAILURE() << header.error().message;
    return {};
  }
  auto text = read_text(out);
  std::filesystem::remove(out);
  return text;
}

json::object Stack::capsule(const std::string& capsule_id) {
  auto r = api_->get("/api/v1/capsules/" + capsule_id);
  EXPECT_EQ(r.status, 200u) << r.body;
  return r.json.is_object() ? r.json.as_object() : json::object{};
}

std::string Stack::public_surface(const std::vector<std::string>& capsules,
                                  const std::vector<std::string>& connections) {
  std::string all;
  auto grab = [&](const std::string& target) {
    auto r = api_->get(target);
    EXPECT_EQ(r.status, 200u) << target << ": " << r.body;
    all += target + "\n" + r.body + "\n";
    return r.json;
  };
  const std::string ws = "/api/v1/workspaces/" + workspace_id_;
  grab("/api/v1/workspaces");
  grab(ws);
  grab(ws + "/capsules");
  grab(ws + "/current-state-versions");
  grab(ws + "/activity?limit=200");
  grab("/api/v1/connections?workspaceId=" + workspace_id_);
  for (const auto& id : connections) grab("/api/v1/connections/" + id);
  for (const auto& capsule : capsules) {
    grab("/api/v1/capsules/" + capsule);
    grab("/api/v1/capsules/" + capsule + "/outputs");
    auto versions = grab("/api/v1/capsules/" + capsule + "/state-versions");
    for (const auto& v : versions.at("stateVersions").as_array())
      grab("/api/v1/state-versions/" + str(v.as_object(), "id"));
    auto runs = grab("/api/v1/capsules/" + capsule + "/runs?limit=100");
    for (const auto& run : runs.at("runs").as_array()) {
      const auto id = str(run.as_object(), "id");
      grab("/api/v1/runs/" + id);
      grab("/api/v1/runs/" + id + "/logs");
      // Every plan that succeeded has a plan view; an apply answers with its plan's.
      const auto type = str(run.as_object(), "type");
      const bool planned = (type == "plan" || type == "destroy_plan") &&
                           str(run.as_object(), "status") == "succeeded";
      if (planned || type == "apply") grab("/api/v1/runs/" + id + "/plan");
    }
  }
  return all;
}

Stack::~Stack() {
  stop_agents();
  if (control_) control_->stop();
  for (auto& [index, replica] : replicas_)
    if (replica) replica->stop();
  if (!::testing::Test::HasFailure()) {
    std::filesystem::remove_all(root_);
  } else {
    std::cerr << "kept " << root_ << " for inspection\n--- agent logs ---\n"
              << agent_logs() << "--- control log ---\n" << read_text(root_ / "control.log");
    for (const auto& [index, port] : replica_ports_)
      std::cerr << "--- control log of replica " << index << " ---\n" << replica_log(index);
  }
}

std::filesystem::path Stack::write_agent_config(int index, bool offline) {
  const auto name = "agent-" + std::to_string(index);
  const auto dir = root_ / name;
  std::filesystem::create_directories(dir);
  std::filesystem::create_directories(real_world());
  const auto pinned = options_.pinned_key_override.empty() ? data_dir() / "keys/signing.pub"
                                                           : options_.pinned_key_override;
  const std::string connection =
      offline ? "controlPlane:\n  signingPublicKeyFile: " + pinned.string() + "\n"
              : control_plane_section(index) + "  signingPublicKeyFile: " + pinned.string() +
                    "\npoolTokenFile: " +
                    (std::filesystem::exists(dir / "pool.token") ? dir / "pool.token"
                                                                 : root_ / "pool.token")
                        .string() +
                    "\n";
  write(dir / "agent.yaml",
        connection +
        "name: " + name + "\n"
        "concurrency: " + std::to_string(options_.concurrency) + "\n"
        "stateDir: " + (dir / "state").string() + "\n"
        "workDir: " + (dir / "work").string() + "\n"
        "tofu:\n  binary: " + std::string(test_paths::tofu) + "\n  providerMirror: " +
        (options_.provider_mirror.empty() ? std::string(test_paths::provider_mirror)
                                          : options_.provider_mirror.string()) +
        "\n" +
        (options_.provider_pins.empty() ? std::string{}
                                        : "  providerPins: " + options_.provider_pins.string() + "\n") +
        (options_.tofu_versions_dir.empty()
             ? std::string{}
             : "  versionsDir: " + options_.tofu_versions_dir.string() + "\n") +
        (options_.tofu_timeout_seconds > 0
             ? "  timeoutSeconds: " + std::to_string(options_.tofu_timeout_seconds) + "\n"
             : std::string{}) +
        "claimWaitSeconds: 2\nheartbeatSeconds: 2\nlogLevel: debug\n" +
        (options_.sandbox_yaml.empty()
             ? "sandbox:\n  writablePaths: [" + real_world().string() + "]\n" + options_.sandbox_extra
             : options_.sandbox_yaml) +
        (has_section(options_.extra_agent_yaml, "source")
             ? std::string()
             : "source:\n  fileRoots: [" + root_.string() + "]\n") +
        options_.extra_agent_yaml);
  return dir / "agent.yaml";
}

std::filesystem::path Stack::offline_agent_config(int index) { return write_agent_config(index, true); }

void Stack::start_agent(int index) {
  const std::filesystem::path bin = test_paths::binary_dir;
  const auto dir = root_ / ("agent-" + std::to_string(index));
  write_agent_config(index, false);
  if (agents_.size() <= static_cast<std::size_t>(index)) agents_.resize(static_cast<std::size_t>(index) + 1);
  std::vector<std::string> argv{(bin / "agent/takosumi-agent").string(), "--config",
                                (dir / "agent.yaml").string()};
  argv.insert(argv.end(), options_.agent_args.begin(), options_.agent_args.end());
  agents_[static_cast<std::size_t>(index)] = std::make_unique<ChildProcess>(
      std::move(argv), options_.agent_env, dir / "agent.log", /*stop_signals_blocked=*/true);
}

net::TlsClientFiles Stack::client_certificate(const std::string& name) {
  const auto cert = pki_dir() / (name + ".pem");
  const auto key = pki_dir() / (name + ".key");
  if (!std::filesystem::exists(cert))
    ca_->issue({.common_name = name, .server = false, .client = true}).write(cert, key);
  return {pki_dir() / "ca.pem", cert, key};
}

void Stack::set_agent_control_plane(int index, std::string yaml_section) {
  agent_control_planes_[index] = std::move(yaml_section);
}

// The section without its signingPublicKeyFile line, which start_agent adds.
std::string Stack::control_plane_section(int index) {
  if (auto it = agent_control_planes_.find(index); it != agent_control_planes_.end())
    return it->second;
  if (options_.replicas > 1) {
    std::string urls;
    for (int k = 0; k < options_.replicas; ++k)
      urls += (k == 0 ? "" : ", ") + std::string("http://127.0.0.1:") +
              std::to_string(replica_port((index + k) % options_.replicas));
    return "controlPlane:\n  urls: [" + urls + "]\n";
  }
  if (!options_.https) return "controlPlane:\n  url: http://127.0.0.1:" + std::to_string(port_) + "\n";
  std::string section = "controlPlane:\n  url: https://localhost:" + std::to_string(port_) +
                        "\n  caFile: " + (pki_dir() / "ca.pem").string() + "\n";
  if (options_.mutual_tls) {
    const auto files = client_certificate("agent-" + std::to_string(index));
    section += "  clientCertFile: " + files.cert_file.string() + "\n  clientKeyFile: " +
               files.key_file.string() + "\n";
  }
  return section;
}

void Stack::set_agent_pool_token(int index, const std::string& token) {
  const auto dir = agent_dir(index);
  std::filesystem::create_directories(dir);
  write(dir / "pool.token", token + "\n");
}

void Stack::reload_control() {
  if (control_) ::kill(control_->pid(), SIGHUP);
}

void Stack::stop_agents() {
  for (auto& a : agents_) {
    if (!a) continue;
    int code = a->stop(std::chrono::seconds(60));
    EXPECT_EQ(code, 0) << "agent did not stop cleanly";
  }
  agents_.clear();
}

std::string Stack::agent_logs() const {
  std::string out;
  for (int i = 0; std::filesystem::exists(root_ / ("agent-" + std::to_string(i))); ++i)
    out += read_text(root_ / ("agent-" + std::to_string(i)) / "agent.log");
  return out;
}

std::string Stack::agent_log(int index) const { return read_text(agent_dir(index) / "agent.log"); }

std::string Stack::control_log() const { return read_text(root_ / "control.log"); }

std::string Stack::create_capsule_from(const json::object& body) {
  auto r = api_->post("/api/v1/workspaces/" + workspace_id_ + "/capsules", body);
  EXPECT_EQ(r.status, 201u) << r.body;
  return r.json.is_object() ? json::value_to<std::string>(r.json.at("id")) : "";
}

std::string Stack::create_capsule(const std::string& git_url, const json::object& variables,
                                  const json::object& allowlist, const std::string& name) {
  json::object body{{"name", name},
                    {"source", json::object{{"gitUrl", git_url}, {"ref", "main"}, {"modulePath", ""}}},
                    {"outputAllowlist", allowlist},
                    {"variables", variables}};
  return create_capsule_from(body);
}

json::object Stack::wait_run(const std::string& run_id, std::chrono::seconds timeout) {
  json::object run;
  eventually(
      [&] {
        auto r = api_->get("/api/v1/runs/" + run_id);
        if (!r.json.is_object()) return false;
        run = r.json.as_object();
        auto status = json::value_to<std::string>(run.at("status"));
        return status != "queued" && status != "running";
      },
      timeout);
  return run;
}

json::object Stack::plan(const std::string& capsule_id) {
  auto r = api_->post("/api/v1/capsules/" + capsule_id + "/plan", json::object{});
  EXPECT_EQ(r.status, 201u) << r.body;
  if (!r.json.is_object()) return {};
  return wait_run(json::value_to<std::string>(r.json.at("id")));
}

json::object Stack::apply(const std::string& plan_run_id, bool accept_data_loss) {
  auto r = post_apply(plan_run_id, accept_data_loss);
  EXPECT_EQ(r.status, 201u) << r.body;
  if (!r.json.is_object()) return {};
  return wait_run(json::value_to<std::string>(r.json.at("id")));
}

JsonResponse Stack::post_apply(const std::string& plan_run_id, bool accept_data_loss) {
  return api_->post("/api/v1/runs/" + plan_run_id + "/apply",
                    json::object{{"acceptDataLoss", accept_data_loss}});
}

json::array Stack::state_versions(const std::string& capsule_id) {
  auto r = api_->get("/api/v1/capsules/" + capsule_id + "/state-versions");
  EXPECT_EQ(r.status, 200u) << r.body;
  if (!r.json.is_object()) return {};
  return r.json.at("stateVersions").as_array();
}

std::string slow_apply_module() {
  return R"(terraform {
  required_providers {
    time = { source = "hashicorp/time" }
  }
}
resource "terraform_data" "first" { input = "created before the slow one" }
resource "time_sleep" "slow" {
  depends_on      = [terraform_data.first]
  create_duration = "300s"
}
)";
}

std::string example_module(const std::string& greeting) {
  return R"(terraform {
  required_providers {
    local  = { source = "hashicorp/local" }
    random = { source = "hashicorp/random" }
  }
}
variable "out_dir" { type = string }
resource "random_password" "db" {
  length  = 32
  special = false
}
resource "local_file" "config" {
  filename = "${var.out_dir}/app.conf"
  content  = "greeting=)" + greeting + R"(\n"
}
resource "local_sensitive_file" "password" {
  filename = "${var.out_dir}/db.password"
  content  = random_password.db.result
}
output "endpoint" { value = "file://${local_file.config.filename}" }
output "greeting" { value = ")" + greeting + R"(" }
output "internal_id" { value = local_file.config.id }
output "db_password" {
  value     = random_password.db.result
  sensitive = true
}
)";
}

std::string str(const json::object& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_string() ? std::string(it->value().get_string()) : "";
}

std::string failure_code(const json::object& run) {
  auto it = run.find("failure");
  return it != run.end() && it->value().is_object() ? str(it->value().get_object(), "code") : "";
}

std::vector<std::filesystem::path> files_containing(const std::filesystem::path& dir,
                                                    const std::string& needle) {
  std::vector<std::filesystem::path> hits;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    if (read_text(e.path()).find(needle) != std::string::npos) hits.push_back(e.path());
  }
  return hits;
}

}  // namespace takosumi::testing
