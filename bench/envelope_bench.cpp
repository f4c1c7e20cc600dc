// Throughput of the StateVersion envelope (encrypt and decrypt a state file of a given size).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "crypto/envelope.hpp"
#include "crypto/keys.hpp"
#include "crypto/sealed_box.hpp"

namespace {

using namespace takosumi;

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/takosumi-bench-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

void write_state(const std::filesystem::path& p, std::size_t bytes) {
  std::ofstream out(p, std::ios::binary);
  std::string line = "{\"attributes\":{\"id\":\"0123456789abcdef\",\"content\":\"xxxxxxxxxxxxxxxx\"}},\n";
  for (std::size_t n = 0; n < bytes; n += line.size()) out << line;
}

crypto::EnvelopeHeader header() {
  crypto::EnvelopeHeader h;
  h.kind = "state";
  h.capsule_id = "cap_bench";
  h.run_id = "run_bench";
  h.generation = 1;
  h.lineage = "lineage";
  h.serial = 1;
  h.key_id = "k1";
  return h;
}

void BM_EncryptState(benchmark::State& state) {
  TempDir dir;
  const auto size = static_cast<std::size_t>(state.range(0));
  write_state(dir.path / "plain", size);
  auto keys = crypto::BoxKeyPair::generate();
  for (auto _ : state) {
    auto r = crypto::encrypt_file(dir.path / "plain", dir.path / "env", header(), keys.public_key);
    if (!r) state.SkipWithError(r.error().message.c_str());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
}

void BM_DecryptState(benchmark::State& state) {
  TempDir dir;
  const auto size = static_cast<std::size_t>(state.range(0));
  write_state(dir.path / "plain", size);
  auto keys = crypto::BoxKeyPair::generate();
  auto h = crypto::encrypt_file(dir.path / "plain", dir.path / "env", header(), keys.public_key);
  auto prefix = crypto::read_envelope_prefix(dir.path / "env");
  auto dek = crypto::open_envelope_dek(*prefix, keys);
  crypto::EnvelopeExpectation expect{"state", "cap_bench", 1, h->plaintext_sha256};
  for (auto _ : state) {
    auto r = crypto::decrypt_file(dir.path / "env", dir.path / "out", *dek, expect);
    if (!r) state.SkipWithError(r.error().message.c_str());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
}

BENCHMARK(BM_EncryptState)->Arg(64 << 10)->Arg(1 << 20)->Arg(32 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecryptState)->Arg(64 << 10)->Arg(1 << 20)->Arg(32 << 20)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
