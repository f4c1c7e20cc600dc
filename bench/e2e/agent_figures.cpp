#include "bench/e2e/agent_figures.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <ostream>
#include <thread>
#include <vector>

#include "bench/e2e/proc_probe.hpp"
#include "bench/e2e/summary.hpp"

namespace takosumi::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kSoakSampleEvery = 50;

double mib(std::int64_t kib) { return double(kib) / 1024.0; }

// The agent has finished what a Run leaves to do after its report (spool, work dir) once it has
// been quiet briefly; a sample taken sooner would count a Run still being cleaned up.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(500)); }

std::size_t registrations(const BenchContext& ctx) {
  const auto log = testing::read_text(ctx.stack.agent_dir(0) / "agent.log");
  std::size_t n = 0;
  for (auto at = log.find("registered with"); at != std::string::npos; at = log.find("registered with", at + 1))
    ++n;
  return n;
}

// Restarts agent-0 and waits until it has registered again.
Status restart_agent(BenchContext& ctx) {
  const auto before = registrations(ctx);
  ctx.stack.start_agent(0);
  const bool up = testing::eventually([&] { return registrations(ctx) > before; },
                                      std::chrono::seconds(30));
  if (!up) return fail("agent", "agent-0 did not register again after a restart");
  settle();  // into its claim long-poll, idle
  return {};
}

// count plan Runs, one per Capsule in flight (a Capsule runs one Run at a time), all ended on
// return: the agent is idle then.
Status run_plans(BenchContext& ctx, const std::vector<std::string>& capsules, int count) {
  std::deque<std::string> in_flight;
  for (int started = 0; started < count || !in_flight.empty();) {
    // FIFO: the Run waited for is the oldest, so the Capsule it frees is the next one started on.
    while (started < count && in_flight.size() < capsules.size()) {
      auto id = ctx.takosumi.start_plan(capsules[std::size_t(started) % capsules.size()]);
      if (!id) return std::unexpected(id.error());
      in_flight.push_back(*id);
      ++started;
    }
    TAKOSUMI_TRY(ctx.takosumi.wait_succeeded(in_flight.front()));
    in_flight.pop_front();
  }
  return {};
}

}  // namespace

Result<Figure> idle_figure(BenchContext& ctx) {
  Figure f{"idle_rss", "idle agent RSS", "MiB", "<= 10.3 MiB (no worse than issue 13's before), CPU ~0 %", {}, {}, {}};
  const pid_t pid = ctx.stack.agent_pid(0);
  ctx.progress << "idle: 7 s\n" << std::flush;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto ticks_before = cpu_ticks(pid);
  const auto start = Clock::now();
  std::vector<double> pss, uss, anon;
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const auto m = memory_kib(pid);
    f.takosumi.push_back(mib(m.rss));
    pss.push_back(mib(m.pss));
    uss.push_back(mib(m.uss));
    anon.push_back(mib(m.anon));
  }
  // Beside RSS: what the agent itself holds (USS), and its share of the libraries (PSS).
  f.extra["pssMiB"] = summarize(pss).median;
  f.extra["ussMiB"] = summarize(uss).median;
  f.extra["anonMiB"] = summarize(anon).median;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu_seconds = double(cpu_ticks(pid) - ticks_before) / double(::sysconf(_SC_CLK_TCK));
  f.extra["cpuPercent"] = 100.0 * cpu_seconds / seconds;
  f.extra["seconds"] = seconds;
  return f;
}

Result<Figure> soak_figure(BenchContext& ctx) {
  Figure f{"soak_rss", "agent RSS every 50 Runs of " + std::to_string(ctx.soak_runs), "MiB",
           "flat: no steady rise after the first 50 Runs, max - min <= 1 MiB", {}, {}, {}};
  std::vector<std::string> capsules;
  for (int i = 0; i < ctx.concurrency; ++i) {
    auto c = ctx.takosumi.new_capsule();
    if (!c) return std::unexpected(c.error());
    capsules.push_back(*c);
  }
  const pid_t pid = ctx.stack.agent_pid(0);
  const auto agent_dir = ctx.stack.agent_dir(0);
  boost::json::array samples;
  auto sample = [&](int runs) {
    settle();
    const auto m = memory_kib(pid);
    const auto disk = bytes_under(agent_dir / "state") + bytes_under(agent_dir / "work");
    samples.push_back(boost::json::object{
        {"runs", runs}, {"rssKiB", m.rss}, {"pssKiB", m.pss}, {"ussKiB", m.uss}, {"anonKiB", m.anon},
        {"diskBytes", disk}});
    if (runs > 0) f.takosumi.push_back(mib(m.rss));
    ctx.progress << " [" << runs << ": " << m.rss << " KiB RSS, " << m.uss << " KiB USS, " << disk << " B]"
                 << std::flush;
  };
  ctx.progress << "soak:";
  sample(0);
  const auto start = Clock::now();
  for (int done = 0; done < ctx.soak_runs;) {
    const int batch = std::min(kSoakSampleEvery, ctx.soak_runs - done);
    if (auto ran = run_plans(ctx, capsules, batch); !ran)
      return std::unexpected(ran.error().with_context("soak"));
    done += batch;
    sample(done);
  }
  ctx.progress << "\n";
  f.extra["samples"] = std::move(samples);
  f.extra["seconds"] = std::chrono::duration<double>(Clock::now() - start).count();
  return f;
}

Result<Figure> sigterm_figure(BenchContext& ctx) {
  Figure f{"sigterm", "SIGTERM -> exit, idle agent", "ms", "<= 2 ms (no worse than issue 13's before)", {}, {}, {}};
  ctx.progress << "sigterm:" << std::flush;
  if (!testing::eventually([&] { return registrations(ctx) > 0; }, std::chrono::seconds(30)))
    return fail("agent", "agent-0 never registered");
  settle();
  for (int i = 0; i < ctx.runs; ++i) {
    const pid_t pid = ctx.stack.agent_pid(0);
    if (pid <= 0) return fail("agent", "agent-0 is not running");
    const auto start = Clock::now();
    ::kill(pid, SIGTERM);
    // Spin on /proc: the harness reaps only when asked, so the zombie marks the exit itself.
    while (!has_exited(pid)) std::this_thread::sleep_for(std::chrono::microseconds(100));
    f.takosumi.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    const int status = ctx.stack.wait_agent_exit(0, std::chrono::seconds(10));
    if (status != 0) return fail("agent", "agent-0 exited " + std::to_string(status) + " on SIGTERM");
    TAKOSUMI_TRY(restart_agent(ctx));
    ctx.progress << " " << i + 1 << std::flush;
  }
  ctx.progress << "\n";
  return f;
}

}  // namespace takosumi::bench
