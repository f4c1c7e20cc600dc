// Throughput of the StateVersion envelope (encrypt and decrypt a state file of a given size).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include <filesystem>
#include <fstream>
#include <string>

#include "crypto/envelope.hpp"
#include "crypto/keys.hpp"
#include "crypto/sealed_box.hpp"
#include "crypto/sha256.hpp"

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

// A state file of the benchmark's size (its argument) in a fresh directory.
struct StateFile {
  explicit StateFile(const benchmark::State& state)
      : size(static_cast<std::size_t>(state.range(0))), plain(dir.path / "plain") {
    write_state(plain, size);
  }
  // Bytes per second from the plaintext size, whatever the benchmark does with it.
  void count(benchmark::State& state) const {
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
  }
  TempDir dir;
  std::size_t size;
  std::filesystem::path plain;
};

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
  const StateFile f(state);
  auto keys = crypto::BoxKeyPair::generate();
  for (auto _ : state) {
    auto r = crypto::encrypt_file(f.plain, f.dir.path / "env", header(), keys.public_key);
    if (!r) state.SkipWithError(r.error().message.c_str());
  }
  f.count(state);
}

void BM_DecryptState(benchmark::State& state) {
  const StateFile f(state);
  auto keys = crypto::BoxKeyPair::generate();
  auto h = crypto::encrypt_file(f.plain, f.dir.path / "env", header(), keys.public_key);
  auto prefix = crypto::read_envelope_prefix(f.dir.path / "env");
  auto dek = crypto::open_envelope_dek(*prefix, keys);
  crypto::EnvelopeExpectation expect{"state", "cap_bench", 1, h->header.plaintext_sha256};
  for (auto _ : state) {
    auto r = crypto::decrypt_file(f.dir.path / "env", f.dir.path / "out", *dek, expect);
    if (!r) state.SkipWithError(r.error().message.c_str());
  }
  f.count(state);
}

// Baselines, in the same run: raw libsodium secretstream file -> file on the same 64 KiB chunks,
// with no header, no digest and no fsync (what the envelope adds to it is what it costs), and the
// coreutils sha256sum of the same file against our SHA-256.
constexpr std::size_t kChunk = crypto::kChunkSize;
constexpr std::size_t kAbytes = crypto_secretstream_xchacha20poly1305_ABYTES;

void raw_stream(const std::filesystem::path& in_path, const std::filesystem::path& out_path,
                const unsigned char* key, bool encrypt, benchmark::State& state) {
  const int in = ::open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
  const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  crypto_secretstream_xchacha20poly1305_state st;
  unsigned char header[crypto_secretstream_xchacha20poly1305_HEADERBYTES];
  std::vector<unsigned char> a(kChunk + kAbytes), b(kChunk + kAbytes);
  if (encrypt) {
    crypto_secretstream_xchacha20poly1305_init_push(&st, header, key);
    (void)::write(out, header, sizeof header);
  } else {
    (void)::read(in, header, sizeof header);
    crypto_secretstream_xchacha20poly1305_init_pull(&st, header, key);
  }
  const std::size_t block = encrypt ? kChunk : kChunk + kAbytes;
  for (;;) {
    std::size_t n = 0;
    while (n < block) {
      const auto r = ::read(in, a.data() + n, block - n);
      if (r <= 0) break;
      n += static_cast<std::size_t>(r);
    }
    unsigned long long len = 0;
    unsigned char tag = 0;
    if (encrypt) {
      tag = n < block ? crypto_secretstream_xchacha20poly1305_TAG_FINAL : 0;
      crypto_secretstream_xchacha20poly1305_push(&st, b.data(), &len, a.data(), n, nullptr, 0, tag);
    } else if (crypto_secretstream_xchacha20poly1305_pull(&st, b.data(), &len, &tag, a.data(), n,
                                                          nullptr, 0) != 0) {
      state.SkipWithError("raw decrypt failed");
      break;
    }
    (void)::write(out, b.data(), len);
    if (tag == crypto_secretstream_xchacha20poly1305_TAG_FINAL || n < block) break;
  }
  ::close(in);
  ::close(out);
}

void BM_RawSecretstreamEncrypt(benchmark::State& state) {
  const StateFile f(state);
  unsigned char key[crypto_secretstream_xchacha20poly1305_KEYBYTES];
  crypto_secretstream_xchacha20poly1305_keygen(key);
  for (auto _ : state) raw_stream(f.plain, f.dir.path / "raw", key, true, state);
  f.count(state);
}

void BM_RawSecretstreamDecrypt(benchmark::State& state) {
  const StateFile f(state);
  unsigned char key[crypto_secretstream_xchacha20poly1305_KEYBYTES];
  crypto_secretstream_xchacha20poly1305_keygen(key);
  raw_stream(f.plain, f.dir.path / "raw", key, true, state);
  for (auto _ : state) raw_stream(f.dir.path / "raw", f.dir.path / "out", key, false, state);
  f.count(state);
}

void BM_Sha256File(benchmark::State& state) {
  const StateFile f(state);
  for (auto _ : state) {
    auto r = crypto::sha256_file_hex(f.plain);
    if (!r) state.SkipWithError(r.error().message.c_str());
  }
  f.count(state);
}

void BM_Sha256sumCommand(benchmark::State& state) {
  const StateFile f(state);
  const std::string command = "sha256sum " + (f.plain).string() + " >/dev/null";
  for (auto _ : state)
    if (std::system(command.c_str()) != 0) state.SkipWithError("sha256sum failed");
  f.count(state);
}

BENCHMARK(BM_EncryptState)->Arg(64 << 10)->Arg(1 << 20)->Arg(32 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DecryptState)->Arg(64 << 10)->Arg(1 << 20)->Arg(32 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RawSecretstreamEncrypt)->Arg(1 << 20)->Arg(32 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RawSecretstreamDecrypt)->Arg(1 << 20)->Arg(32 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sha256File)->Arg(32 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sha256sumCommand)->Arg(32 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
