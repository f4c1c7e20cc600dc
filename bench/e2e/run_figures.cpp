#include "bench/e2e/run_figures.hpp"

#include <chrono>
#include <functional>
#include <ostream>

#include "bench/e2e/bench_module.hpp"
#include "common/file_io.hpp"
#include "redaction/sensitive_values.hpp"
#include "protocol/plan_view_text.hpp"
#include "runner/plan/plan_analysis.hpp"
#include "runner/plan/plan_view_build.hpp"
#include "runner/state/state_document.hpp"
#include "bench/e2e/summary.hpp"

namespace takosumi::bench {
namespace {

using Sample = std::function<Result<Millis>()>;
using Clock = std::chrono::steady_clock;

// Times a bare sequence that returns a Status.
Result<Millis> timed(const std::function<Status()>& work) {
  const auto start = Clock::now();
  TAKOSUMI_TRY(work());
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Interleaving puts a burst of machine noise on both sides instead of on one.
Status interleave(BenchContext& ctx, Figure& figure, const Sample& takosumi, const Sample& baseline) {
  ctx.progress << figure.name << ": warm-up" << std::flush;
  TAKOSUMI_TRY(takosumi());
  TAKOSUMI_TRY(baseline());
  ctx.takosumi.take_phase_samples();  // not the warm-up's
  for (int i = 0; i < ctx.runs; ++i) {
    auto a = takosumi();
    if (!a) return std::unexpected(a.error().with_context(figure.name + " takosumi"));
    auto b = baseline();
    if (!b) return std::unexpected(b.error().with_context(figure.name + " baseline"));
    figure.takosumi.push_back(*a);
    figure.baseline.push_back(*b);
    ctx.progress << " " << i + 1 << std::flush;
  }
  ctx.progress << "\n";
  boost::json::object phases;
  for (const auto& [phase, samples] : ctx.takosumi.take_phase_samples())
    phases[phase] = summarize(samples).median;
  figure.extra["phaseMillisMedian"] = std::move(phases);
  return {};
}

Result<Millis> fresh_bare(BenchContext& ctx, Status (BareTofu::*sequence)(const std::filesystem::path&) const) {
  auto dir = ctx.bare.fresh_dir(ctx.module_text);
  if (!dir) return std::unexpected(dir.error());
  return timed([&] { return (ctx.bare.*sequence)(*dir); });
}

}  // namespace

Result<Figure> plan_figure(BenchContext& ctx) {
  Figure f{"plan", "plan Run vs init+plan+show", "ms", "<= x1.05", {}, {}, {}};
  auto capsule = ctx.takosumi.new_capsule();
  if (!capsule) return std::unexpected(capsule.error());
  TAKOSUMI_TRY(interleave(
      ctx, f, [&] { return ctx.takosumi.plan(*capsule); },
      [&] { return fresh_bare(ctx, &BareTofu::plan); }));
  return f;
}

Result<Figure> plan_apply_figure(BenchContext& ctx) {
  Figure f{"plan_apply", "plan+apply Runs vs init+plan+apply+output", "ms", "<= x1.10", {}, {}, {}};
  // A new Capsule per sample, as a new dir per bare sample: both apply 20 creations every time.
  TAKOSUMI_TRY(interleave(
      ctx, f,
      [&]() -> Result<Millis> {
        auto capsule = ctx.takosumi.new_capsule();
        if (!capsule) return std::unexpected(capsule.error());
        return ctx.takosumi.plan_apply(*capsule);
      },
      [&] { return fresh_bare(ctx, &BareTofu::plan_apply); }));
  return f;
}

Result<Figure> drift_figure(BenchContext& ctx) {
  Figure f{"drift", "drift check Run vs init+plan -refresh-only", "ms", "<= x1.10 (proposed; issue 13 sets none)", {}, {}, {}};
  auto capsule = ctx.takosumi.new_capsule();
  if (!capsule) return std::unexpected(capsule.error());
  TAKOSUMI_TRY(ctx.takosumi.plan_apply(*capsule));
  auto applied = ctx.bare.fresh_dir(ctx.module_text);
  if (!applied) return std::unexpected(applied.error());
  TAKOSUMI_TRY(ctx.bare.plan_apply(*applied));
  // Like the agent's drift check: a fresh directory, the applied state copied in (untimed, as
  // the agent's state decrypt is timed on its side), init, then the refresh-only plan.
  const auto fresh_with_state = [&]() -> Result<Millis> {
    auto dir = ctx.bare.fresh_dir(ctx.module_text);
    if (!dir) return std::unexpected(dir.error());
    std::error_code ec;
    std::filesystem::copy_file(*applied / "terraform.tfstate", *dir / "terraform.tfstate", ec);
    if (ec) return fail("io_error", "copy the applied state: " + ec.message());
    return timed([&] { return ctx.bare.refresh_only(*dir); });
  };
  TAKOSUMI_TRY(interleave(
      ctx, f, [&] { return ctx.takosumi.drift_check(*capsule); }, fresh_with_state));
  return f;
}

Result<Figure> pickup_figure(BenchContext& ctx) {
  Figure f{"pickup", "pickup latency (POST -> claimed)", "ms", "p50 <= 21 ms, p99 <= 37 ms (no worse than issue 13's before)",
           {}, {}, {}};
  auto capsule = ctx.takosumi.new_capsule();
  if (!capsule) return std::unexpected(capsule.error());
  const int samples = std::max(3 * ctx.runs, 40);
  ctx.progress << "pickup: " << samples << " samples" << std::flush;
  for (int i = 0; i < samples; ++i) {
    auto ms = ctx.takosumi.pickup(*capsule);
    if (!ms) return std::unexpected(ms.error().with_context("pickup"));
    f.takosumi.push_back(*ms);
  }
  ctx.progress << "\n";
  return f;
}

Result<Figure> concurrent_figure(BenchContext& ctx) {
  const int runs = 2 * ctx.concurrency;
  Figure f{"concurrent", std::to_string(runs) + " plan Runs at concurrency " +
                             std::to_string(ctx.concurrency) + " vs xargs -P" +
                             std::to_string(ctx.concurrency),
           "ms", "<= x1.10 (proposed; issue 13's before: x1.65)", {}, {}, {}};
  std::vector<std::string> capsules;
  for (int i = 0; i < runs; ++i) {
    auto c = ctx.takosumi.new_capsule();
    if (!c) return std::unexpected(c.error());
    capsules.push_back(*c);
  }
  TAKOSUMI_TRY(interleave(
      ctx, f, [&] { return ctx.takosumi.plans_at_once(capsules); },
      [&]() -> Result<Millis> {
        std::vector<std::filesystem::path> dirs;
        for (int i = 0; i < runs; ++i) {
          auto dir = ctx.bare.fresh_dir(ctx.module_text);
          if (!dir) return std::unexpected(dir.error());
          dirs.push_back(*dir);
        }
        return timed([&] { return ctx.bare.plan_parallel(dirs, ctx.concurrency); });
      }));
  return f;
}

Result<Figure> large_figure(BenchContext& ctx) {
  const int n = ctx.large_resources;
  Figure f{"large", "plan+apply of " + std::to_string(n) + " resources vs init+plan+apply+output",
           "ms", "works end to end; <= x1.10 (proposed)", {}, {}, {}};
  const std::string module = bench_module(n);
  TakosumiSide large(ctx.stack, module, "bench-large-repo");
  auto capsule = large.new_capsule();
  if (!capsule) return std::unexpected(capsule.error());
  ctx.progress << f.name << ":" << std::flush;
  auto a = large.plan_apply(*capsule);
  if (!a) return std::unexpected(a.error().with_context("large takosumi"));
  ctx.progress << " takosumi " << *a << " ms" << std::flush;
  auto dir = ctx.bare.fresh_dir(module);
  if (!dir) return std::unexpected(dir.error());
  auto b = timed([&] { return ctx.bare.plan_apply(*dir); });
  if (!b) return std::unexpected(b.error().with_context("large baseline"));
  ctx.progress << ", bare " << *b << " ms" << std::flush;
  f.takosumi.push_back(*a);
  f.baseline.push_back(*b);
  // What the agent does with the plan's JSON (parse, collect its secrets twice: for the Run and
  // for the sealed plan, analyse) against producing it (`tofu show -json` of the same plan).
  auto shown = timed([&] { return ctx.bare.show_json(*dir); });
  if (!shown) return std::unexpected(shown.error().with_context("large show -json"));
  auto analysed = timed([&]() -> Status {
    auto text = read_file(*dir / "plan.json", std::size_t{1} << 30);
    if (!text) return std::unexpected(text.error());
    auto doc = runner::parse_json_document(*text, "tofu show -json");
    if (!doc) return std::unexpected(doc.error());
    redaction::SecretSet secrets;
    redaction::collect_plan_secrets(*doc, secrets);
    [[maybe_unused]] const auto sealed = redaction::plan_secret_values(*doc);
    auto analysis = runner::analyze_plan(doc->as_object());
    if (!analysis) return std::unexpected(analysis.error());
    return {};
  });
  if (!analysed) return std::unexpected(analysed.error().with_context("large analysis"));
  // The plan view of the same plan: built and redacted, serialised as uploaded, rendered for the
  // Run's log (issue 34: a reviewer's view must not make a large plan slow).
  std::size_t view_bytes = 0, view_resources = 0;
  auto viewed = timed([&]() -> Status {
    auto text = read_file(*dir / "plan.json", std::size_t{1} << 30);
    if (!text) return std::unexpected(text.error());
    auto doc = runner::parse_json_document(*text, "tofu show -json");
    if (!doc) return std::unexpected(doc.error());
    redaction::SecretSet secrets;
    const auto view = runner::build_plan_view(doc->as_object(), {}, &secrets);
    view_bytes = boost::json::serialize(protocol::to_json(view)).size();
    view_resources = view.resources.size();
    [[maybe_unused]] const auto lines = protocol::plan_view_lines(view, {.max_lines = 5000});
    return {};
  });
  if (!viewed) return std::unexpected(viewed.error().with_context("large plan view"));
  ctx.progress << "; show -json " << *shown << " ms, the agent's analysis of it " << *analysed
               << " ms, its plan view " << *viewed << " ms (" << view_resources << " resources, "
               << view_bytes << " bytes)\n";
  f.extra["planViewMillis"] = *viewed;
  f.extra["planViewBytes"] = view_bytes;
  f.extra["showJsonMillis"] = *shown;
  f.extra["agentPlanAnalysisMillis"] = *analysed;
  boost::json::object phases;
  for (const auto& [phase, samples] : large.take_phase_samples())
    phases[phase] = summarize(samples).median;
  f.extra["phaseMillisMedian"] = std::move(phases);
  return f;
}

}  // namespace takosumi::bench
