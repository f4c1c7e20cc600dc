#pragma once
// The agents of the pool benchmark, simulated in this one process so fifty of them fit on two
// cores: each registers like takosumi-agent (its own Ed25519/X25519 keys, a signed challenge),
// and each of its slots long-polls a claim, verifies the manifest's signature, holds the Run for
// the simulated work time and reports a plan without changes. Everything goes over the real HTTP
// protocol to the real control planes; only tofu is not run (see docs/performance.md).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace takosumi::bench {

using SteadyTime = std::chrono::steady_clock::time_point;

struct Claimed {
  std::string run_id;
  std::int64_t attempt = 0;
  int agent = 0;
  SteadyTime at;
};

struct AgentsOptions {
  int agents = 50;
  int slots = 2;
  std::chrono::milliseconds work{500};
  std::vector<unsigned short> ports;  // agent i talks to ports[i % size]
  std::string pool_token;
  std::string signing_key_file;       // the control plane's signing.pub
};

class SimulatedAgents {
 public:
  // Registers every agent (throws std::runtime_error when one is refused).
  explicit SimulatedAgents(AgentsOptions options);
  ~SimulatedAgents();
  // Starts every slot; they claim until stop().
  void start();
  void stop();
  std::int64_t completed() const { return completed_.load(); }
  std::int64_t failed_calls() const { return failed_calls_.load(); }
  // Every claim any slot received, in no particular order.
  std::vector<Claimed> claims() const;

 private:
  struct Agent {
    std::string id;
    std::string token;
    unsigned short port = 0;
  };
  void slot(int agent);

  AgentsOptions options_;
  std::vector<Agent> agents_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> completed_{0};
  std::atomic<std::int64_t> failed_calls_{0};
  mutable std::mutex mutex_;
  std::vector<Claimed> claims_;
};

}  // namespace takosumi::bench
