// Throughput of the Run's redaction on ordinary log text: 10 MiB of tofu-like output through the
// byte-stream redactor in pipe-sized chunks, with 100 secrets (and their encodings and 8-byte
// windows) in the set; and the cost of output crafted against a long stored string, through both
// layers a Run's log passes. Run: build with -DTAKOSUMI_BUILD_BENCH=ON, then bench/redaction_bench.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>

#include "redaction/redacted_lines.hpp"
#include "redaction/redaction.hpp"
#include "redaction/secret_set.hpp"
#include "redaction/stream_redactor.hpp"

namespace {

using namespace takosumi;

constexpr std::size_t kText = 10u << 20;
constexpr std::size_t kChunk = 16 * 1024;

std::string random_token(std::mt19937_64& rng, std::size_t n) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_/+";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += kAlphabet[rng() % (sizeof kAlphabet - 1)];
  return out;
}

// tofu's usual lines, with ids and hashes that look like tokens but are not secrets.
std::string log_text(std::mt19937_64& rng) {
  std::string text;
  while (text.size() < kText) {
    const auto id = random_token(rng, 20);
    text += "aws_instance.web[" + std::to_string(rng() % 100) + "]: Still creating... [" +
            std::to_string(rng() % 600) + "s elapsed]\n";
    text += "  + resource \"aws_s3_object\" \"o\" {\n      + etag = \"" + id + "\"\n";
    text += "module.app.null_resource.x (local-exec): deploying revision " + id + " to eu-west-1\n";
  }
  return text;
}

void BM_StreamRedactor(benchmark::State& state) {
  std::mt19937_64 rng(42);
  redaction::SecretSet secrets;
  for (int i = 0; i < state.range(0); ++i) secrets.add(random_token(rng, 32));
  const std::string text = log_text(rng);
  std::size_t out_bytes = 0;
  for (auto _ : state) {
    redaction::StreamRedactor redactor(&secrets, [&](std::string_view bytes) { out_bytes += bytes.size(); });
    for (std::size_t at = 0; at < text.size(); at += kChunk)
      redactor.feed(std::string_view(text).substr(at, kChunk));
    redactor.flush();
  }
  benchmark::DoNotOptimize(out_bytes);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_StreamRedactor)->Arg(0)->Arg(100)->Unit(benchmark::kMillisecond);

// A module plants a long sensitive output and prints text that agrees with it for as long as
// possible before it differs: "A"×n + " x" stored, "A…AC" printed (state.range(1) == 0); or prose
// without any 16-byte word, "ab "×n stored and "ab ab … C" printed (== 1). 1 MiB of it goes
// through the per-stream redactor and then the Run's redaction::LogRedactor, as tofu's output does.
void BM_CraftedAgainstALongSecret(benchmark::State& state) {
  const auto length = static_cast<std::size_t>(state.range(0));
  const bool prose = state.range(1) == 1;
  const std::string unit = prose ? "ab " : "A";
  auto secrets = std::make_shared<redaction::SecretSet>();
  std::string secret;
  while (secret.size() < length) secret += unit;
  secrets->add(secret + (prose ? "x" : " x"));
  std::string text;
  while (text.size() < (1u << 20)) text += unit;
  text += "C\n";
  std::size_t lines = 0;
  for (auto _ : state) {
    redaction::LogRedactor log(secrets, [&](std::string_view) { ++lines; });
    redaction::RedactedLines stream(secrets.get(), 64 * 1024, [&](std::string_view line) { log(line); });
    for (std::size_t at = 0; at < text.size(); at += kChunk)
      stream.feed(std::string_view(text).substr(at, kChunk));
    stream.finish();
    log.flush();
  }
  benchmark::DoNotOptimize(lines);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_CraftedAgainstALongSecret)
    ->Args({4 << 10, 0})->Args({32 << 10, 0})->Args({200 << 10, 0})
    ->Args({4 << 10, 1})->Args({32 << 10, 1})->Args({200 << 10, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
