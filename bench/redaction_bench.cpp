// Throughput of the Run's redaction on ordinary log text: 10 MiB of tofu-like output through the
// byte-stream redactor in pipe-sized chunks, with 100 secrets (and their encodings and 8-byte
// windows) in the set. Run: build with -DTAKOSUMI_BUILD_BENCH=ON, then bench/redaction_bench.
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "runner/secret_set.hpp"
#include "runner/stream_redactor.hpp"

namespace {

using namespace takosumi::runner;

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
  SecretSet secrets;
  for (int i = 0; i < state.range(0); ++i) secrets.add(random_token(rng, 32));
  const std::string text = log_text(rng);
  std::size_t out_bytes = 0;
  for (auto _ : state) {
    StreamRedactor redactor(&secrets, [&](std::string_view bytes) { out_bytes += bytes.size(); });
    for (std::size_t at = 0; at < text.size(); at += kChunk)
      redactor.feed(std::string_view(text).substr(at, kChunk));
    redactor.flush();
  }
  benchmark::DoNotOptimize(out_bytes);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_StreamRedactor)->Arg(0)->Arg(100)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
