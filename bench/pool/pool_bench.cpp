// scripts/bench pool: a pool of agents against the control plane on PostgreSQL with several
// replicas, and against one control plane on SQLite (docs/performance.md "Agent pools"). Counts
// what must be zero (double claims, lost Runs) and measures claims per second, pickup latency
// (the plan request answered → an agent holding the Run) and each replica's CPU and memory.
//
//   pool_bench --control-bin B --pg-script S [--store postgres|sqlite] [--replicas 3]
//              [--agents 50] [--slots 2] [--capsules 100] [--runs 1000] [--work-ms 500]
//              [--rate 100] [--out FILE]
#include <boost/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/e2e/proc_probe.hpp"
#include "bench/pool/pool_agents.hpp"
#include "bench/pool/pool_cluster.hpp"
#include "tests/support/http_client.hpp"

namespace takosumi::bench {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  ClusterOptions cluster;
  int agents = 50, slots = 2, capsules = 100, runs = 1000, work_ms = 500, rate = 100;
  std::string out;
};

Options parse(int argc, char** argv) {
  Options o;
  std::map<std::string, std::string> args;
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  if (argc % 2 == 0) throw std::runtime_error("arguments come in pairs (see the header)");
  auto take = [&](const char* flag, auto& into) {
    auto it = args.find(flag);
    if (it == args.end()) return;
    if constexpr (std::is_same_v<std::decay_t<decltype(into)>, int>)
      into = std::stoi(it->second);
    else
      into = it->second;
    args.erase(it);
  };
  std::string store = "postgres", control, script;
  take("--store", store);
  take("--control-bin", control);
  take("--pg-script", script);
  take("--replicas", o.cluster.replicas);
  take("--agents", o.agents);
  take("--slots", o.slots);
  take("--capsules", o.capsules);
  take("--runs", o.runs);
  take("--work-ms", o.work_ms);
  take("--rate", o.rate);
  take("--out", o.out);
  if (!args.empty()) throw std::runtime_error("unknown argument " + args.begin()->first);
  if (store != "postgres" && store != "sqlite") throw std::runtime_error("--store postgres|sqlite");
  if (control.empty() || (store == "postgres" && script.empty()))
    throw std::runtime_error("--control-bin (and --pg-script for postgres) are required");
  o.cluster.postgres = store == "postgres";
  if (!o.cluster.postgres) o.cluster.replicas = 1;
  o.cluster.control_bin = control;
  o.cluster.pg_script = script;
  o.cluster.root = fs::temp_directory_path() /
                   ("takosumi-pool-bench-" + std::to_string(::getpid()) + "-" + store);
  return o;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::ranges::sort(v);
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

json::object run(const Options& o) {
  PoolCluster cluster(o.cluster);
  std::vector<testing::HttpClient> api;
  std::vector<unsigned short> ports;
  for (int i = 0; i < cluster.replicas(); ++i) {
    api.emplace_back(cluster.port(i), cluster.api_token());
    ports.push_back(cluster.port(i));
  }
  auto ws = api[0].post("/api/v1/workspaces", json::object{{"name", "bench"}});
  if (ws.status != 201u) throw std::runtime_error("workspace: " + ws.body);
  const std::string workspace = json::value_to<std::string>(ws.json.at("id"));
  std::vector<std::string> capsules;
  for (int c = 0; c < o.capsules; ++c) {
    auto made = api[0].post(
        "/api/v1/workspaces/" + workspace + "/capsules",
        json::object{{"name", "c" + std::to_string(c)},
                     {"source", json::object{{"gitUrl", "https://git.example.com/bench.git"},
                                             {"ref", std::string(40, 'b')}}}});
    if (made.status != 201u) throw std::runtime_error("capsule: " + made.body);
    capsules.push_back(json::value_to<std::string>(made.json.at("id")));
  }
  SimulatedAgents agents({o.agents, o.slots, std::chrono::milliseconds(o.work_ms), ports,
                          cluster.pool_token(), cluster.signing_key().string()});
  agents.start();

  std::vector<std::int64_t> ticks_before;
  for (int i = 0; i < cluster.replicas(); ++i) ticks_before.push_back(cpu_ticks(cluster.pid(i)));
  const auto started = Clock::now();
  std::map<std::string, Clock::time_point> enqueued;
  // Plans at a steady rate, spread over the replicas as a load balancer would.
  for (int k = 0; k < o.runs; ++k) {
    const auto due = started + std::chrono::microseconds(1'000'000LL * k / o.rate);
    std::this_thread::sleep_until(due);
    const auto& client = api[static_cast<std::size_t>(k) % api.size()];
    auto r = client.post("/api/v1/capsules/" + capsules[static_cast<std::size_t>(k) % capsules.size()] +
                             "/plan",
                         json::object{});
    if (r.status != 201u) throw std::runtime_error("plan: " + r.body);
    enqueued[json::value_to<std::string>(r.json.at("id"))] = Clock::now();
  }
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  while (agents.completed() < o.runs && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto finished = Clock::now();
  json::array replicas;
  const double wall = std::chrono::duration<double>(finished - started).count();
  const long hz = ::sysconf(_SC_CLK_TCK);
  for (int i = 0; i < cluster.replicas(); ++i) {
    const double cpu = static_cast<double>(cpu_ticks(cluster.pid(i)) - ticks_before[static_cast<std::size_t>(i)]) /
                       static_cast<double>(hz);
    replicas.push_back(json::object{{"cpuSeconds", cpu},
                                    {"cpuPercentOfOneCore", 100.0 * cpu / wall},
                                    {"rssKiB", memory_kib(cluster.pid(i)).rss}});
  }
  agents.stop();

  // What the store says of every Run.
  std::int64_t succeeded = 0, attempts_over_one = 0;
  for (const auto& capsule : capsules) {
    auto runs = api[0].get("/api/v1/capsules/" + capsule + "/runs?limit=100");
    for (const auto& r : runs.json.at("runs").as_array()) {
      if (r.at("status") == "succeeded") ++succeeded;
      if (r.at("attempt").as_int64() > 1) ++attempts_over_one;
    }
  }
  std::map<std::pair<std::string, std::int64_t>, int> handed;
  std::map<std::string, Clock::time_point> first_claim;
  Clock::time_point last_claim = started;
  const auto claims = agents.claims();
  for (const auto& c : claims) {
    ++handed[{c.run_id, c.attempt}];
    auto [it, fresh] = first_claim.emplace(c.run_id, c.at);
    if (!fresh && c.at < it->second) it->second = c.at;
    last_claim = std::max(last_claim, c.at);
  }
  std::int64_t double_claims = 0;
  for (const auto& [key, n] : handed) double_claims += n - 1;
  std::vector<double> pickup;
  for (const auto& [id, at] : enqueued)
    if (auto it = first_claim.find(id); it != first_claim.end())
      pickup.push_back(ms_between(at, it->second));
  const double claim_window = std::chrono::duration<double>(last_claim - started).count();
  return json::object{
      {"store", o.cluster.postgres ? "postgres" : "sqlite"},
      {"replicas", cluster.replicas()},
      {"agents", o.agents},
      {"slotsPerAgent", o.slots},
      {"capsules", o.capsules},
      {"runs", o.runs},
      {"workMs", o.work_ms},
      {"enqueueRatePerSecond", o.rate},
      {"wallSeconds", wall},
      {"succeeded", succeeded},
      {"lostRuns", static_cast<std::int64_t>(o.runs) - succeeded},
      {"doubleClaims", double_claims},
      {"attemptsOverOne", attempts_over_one},
      {"failedCalls", agents.failed_calls()},
      {"claimsPerSecond", claim_window > 0 ? static_cast<double>(claims.size()) / claim_window : 0.0},
      {"pickupMs", json::object{{"p50", percentile(pickup, 0.5)},
                                {"p99", percentile(pickup, 0.99)},
                                {"max", percentile(pickup, 1.0)}}},
      {"replicaProcesses", std::move(replicas)}};
}

}  // namespace
}  // namespace takosumi::bench

int main(int argc, char** argv) {
  try {
    const auto options = takosumi::bench::parse(argc, argv);
    auto result = takosumi::bench::run(options);
    std::cout << boost::json::serialize(result) << "\n";
    if (!options.out.empty()) std::ofstream(options.out) << boost::json::serialize(result) << "\n";
    std::filesystem::remove_all(options.cluster.root);
    const bool clean = result.at("doubleClaims").as_int64() == 0 && result.at("lostRuns").as_int64() == 0;
    return clean ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "pool_bench: " << e.what() << "\n";
    return 2;
  }
}
