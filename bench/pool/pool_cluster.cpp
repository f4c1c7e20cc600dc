#include "bench/pool/pool_cluster.hpp"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "controlplane/store/db/database.hpp"

namespace takosumi::bench {
namespace fs = std::filesystem;
namespace {

std::string read_trimmed(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::trunc);
  out << text;
}

}  // namespace

PoolCluster::PoolCluster(ClusterOptions options) : options_(std::move(options)) {
  fs::create_directories(options_.root);
  write(options_.root / "api.token", api_token_ + "\n");
  write(options_.root / "pool.token", pool_token_ + "\n");
  fs::permissions(options_.root / "api.token", fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(options_.root / "pool.token", fs::perms::owner_read | fs::perms::owner_write);
  if (options_.postgres) {
    const fs::path state = options_.root / "postgres";
    std::string start = "'";
    start.append(options_.pg_script.string()).append("' start '").append(state.string());
    start.append("' >/dev/null");
    if (std::system(start.c_str()) != 0)
      throw std::runtime_error("the PostgreSQL server did not start (" + start + ")");
    postgres_started_ = true;
    const std::string base = "postgresql://" + read_trimmed(state / "user") + "@/";
    const std::string host = "?host=" + read_trimmed(state / "socket_dir");
    auto admin = controlplane::Database::connect_postgres({base + "postgres" + host, {}});
    if (!admin) throw std::runtime_error(admin.error().to_string());
    if (auto made = admin->exec("CREATE DATABASE bench"); !made)
      throw std::runtime_error(made.error().to_string());
    store_yaml_ = "store:\n  driver: postgres\n  url: '" + base + "bench" + host + "'\n";
  }
  const int replicas = options_.postgres ? options_.replicas : 1;
  for (int i = 0; i < replicas; ++i) {
    if (i > 0) {  // every replica holds the keys the store was first served with
      fs::create_directories(data_dir(i));
      fs::copy(data_dir(0) / "keys", data_dir(i) / "keys", fs::copy_options::recursive);
    }
    start_replica(i);
  }
}

PoolCluster::~PoolCluster() {
  for (auto& c : controls_) c->stop(std::chrono::seconds(30));
  if (postgres_started_) {
    std::string stop = "'";
    stop.append(options_.pg_script.string()).append("' stop '");
    stop.append((options_.root / "postgres").string()).append("' >/dev/null 2>&1");
    [[maybe_unused]] int ignored = std::system(stop.c_str());
  }
}

fs::path PoolCluster::data_dir(int replica) const {
  return options_.root / ("control-" + std::to_string(replica));
}

pid_t PoolCluster::pid(int replica) const {
  return controls_.at(static_cast<std::size_t>(replica))->pid();
}

void PoolCluster::start_replica(int replica) {
  const fs::path config = options_.root / ("control-" + std::to_string(replica) + ".yaml");
  // A pool's worth of long polls from one address: the per-client limit is raised to fit.
  write(config, "listenAddress: 127.0.0.1\nport: 0\ndataDir: " + data_dir(replica).string() + "\n" +
                    store_yaml_ + "apiTokenFile: " + (options_.root / "api.token").string() +
                    "\npoolTokenFile: " + (options_.root / "pool.token").string() +
                    "\nmaxConnections: 1024\nmaxConnectionsPerClient: 512\n"
                    "metrics:\n  listen: 127.0.0.1:0\n");
  controls_.push_back(std::make_unique<testing::ChildProcess>(
      std::vector<std::string>{options_.control_bin.string(), "serve", "--config", config.string()},
      std::map<std::string, std::string>{},
      options_.root / ("control-" + std::to_string(replica) + ".log")));
  const fs::path port_file = data_dir(replica) / "control.port";
  for (int i = 0; i < 300 && !fs::exists(port_file); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (!fs::exists(port_file))
    throw std::runtime_error("takosumi-control replica " + std::to_string(replica) +
                             " did not start; see " + options_.root.string());
  ports_.push_back(static_cast<unsigned short>(std::stoi(read_trimmed(port_file))));
}

}  // namespace takosumi::bench
