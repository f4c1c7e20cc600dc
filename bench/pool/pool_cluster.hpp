#pragma once
// The control planes of the pool benchmark: a PostgreSQL server the project's test script starts
// (tests/postgres/test_server.sh) with N takosumi-control replicas on one database and the same
// keys, or one takosumi-control on SQLite. Real binaries, real store; stopped on destruction.
#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/child_process.hpp"

namespace takosumi::bench {

struct ClusterOptions {
  bool postgres = true;
  int replicas = 3;
  std::filesystem::path root;         // a fresh directory for everything
  std::filesystem::path control_bin;  // takosumi-control
  std::filesystem::path pg_script;    // tests/postgres/test_server.sh
};

class PoolCluster {
 public:
  // Throws std::runtime_error saying what did not start.
  explicit PoolCluster(ClusterOptions options);
  ~PoolCluster();
  PoolCluster(const PoolCluster&) = delete;
  PoolCluster& operator=(const PoolCluster&) = delete;

  int replicas() const { return static_cast<int>(ports_.size()); }
  unsigned short port(int replica) const { return ports_.at(static_cast<std::size_t>(replica)); }
  pid_t pid(int replica) const;
  const std::string& api_token() const { return api_token_; }
  const std::string& pool_token() const { return pool_token_; }
  std::filesystem::path signing_key() const { return data_dir(0) / "keys/signing.pub"; }

 private:
  std::filesystem::path data_dir(int replica) const;
  void start_replica(int replica);

  ClusterOptions options_;
  std::string store_yaml_;
  std::string api_token_ = "bench-api-token-0123456789abcdef";
  std::string pool_token_ = "bench-pool-token-0123456789abcdef";
  std::vector<std::unique_ptr<testing::ChildProcess>> controls_;
  std::vector<unsigned short> ports_;
  bool postgres_started_ = false;
};

}  // namespace takosumi::bench
