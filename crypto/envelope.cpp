#include "crypto/envelope.hpp"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>

#include "common/big_endian.hpp"
#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "common/unique_fd.hpp"
#include "crypto/envelope_header.hpp"
#include "crypto/sealed_box.hpp"
#include "crypto/sha256.hpp"
#include "crypto/sodium_init.hpp"
#include "crypto/temp_file.hpp"

namespace takosumi::crypto {
namespace {

namespace fs = std::filesystem;
using detail::TempFile;

constexpr std::string_view kMagic = "TKSENV01";
constexpr std::size_t kDekBytes = crypto_secretstream_xchacha20poly1305_KEYBYTES;
constexpr std::size_t kSealedDekBytes = crypto_box_SEALBYTES + kDekBytes;
constexpr std::size_t kStreamHeaderBytes = crypto_secretstream_xchacha20poly1305_HEADERBYTES;
constexpr std::size_t kChunkOverhead = crypto_secretstream_xchacha20poly1305_ABYTES;
constexpr std::size_t kMaxPrefixBytes =
    kMagic.size() + 4 + detail::kMaxHeaderBytes + 2 + kSealedDekBytes;
constexpr unsigned char kTagMessage = crypto_secretstream_xchacha20poly1305_TAG_MESSAGE;
constexpr unsigned char kTagFinal = crypto_secretstream_xchacha20poly1305_TAG_FINAL;

static_assert(kDekBytes == 32);

// The stream state holds a key derived from the DEK; wipe it however the function exits.
struct StreamState {
  crypto_secretstream_xchacha20poly1305_state state{};
  StreamState() = default;
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;
  ~StreamState() { sodium_memzero(&state, sizeof state); }
};

struct Digest {
  std::string sha256;
  std::uint64_t size = 0;
};

// The envelope as it is written, hashed on the way: its digest (how the control plane names the
// artifact) then costs no second read of the file.
struct HashedOutput {
  TempFile& file;
  Sha256 hash;
  Status write(std::span<const std::uint8_t> bytes) {
    hash.update(bytes);
    return file.write(bytes);
  }
};

// Payload bytes a header promises: stream header, one chunk per kChunkSize of plaintext plus the
// final chunk (shorter than kChunkSize, possibly empty), each with its tag and MAC.
std::uint64_t expected_payload_bytes(std::uint64_t plaintext_size) {
  return kStreamHeaderBytes + (plaintext_size / kChunkSize + 1) * kChunkOverhead + plaintext_size;
}

std::string encode_prefix(std::string_view header_json, std::span<const std::uint8_t> sealed) {
  std::string out(kMagic);
  append_big_endian(out, header_json.size(), 4);
  out += header_json;
  append_big_endian(out, sealed.size(), 2);
  out += as_chars(sealed);
  return out;
}

Status seek_to(int fd, std::uint64_t offset, const fs::path& path) {
  if (::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0)
    return std::unexpected(errno_error("seek", path, errno));
  return {};
}

// Where the plaintext comes from. A small one (the usual state) is read once into memory (zeroed
// when done), hashed, and encrypted from there: one read and one digest. A larger one is read
// twice, the second time hashed again, so a file rewritten between the passes (a checkpoint taken
// while tofu writes its state) is refused instead of sealed under a digest it does not have.
class PlaintextSource {
 public:
  static constexpr std::size_t kHeldBytes = 4 * 1024 * 1024;

  PlaintextSource(int fd, const fs::path& path) : fd_(fd), path_(path), chunk_(kChunkSize) {}

  // First pass: the digest must be in the header, which precedes the chunks.
  Result<Digest> digest() {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return std::unexpected(errno_error("stat", path_, errno));
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size <= kHeldBytes) {
      held_ = SecretBytes(size + 1);  // one byte more tells a file that grew since fstat
      auto n = read_full(fd_, held_.mutable_span(), path_);
      if (!n) return std::unexpected(n.error());
      if (*n <= size) {
        held_size_ = *n;
        Sha256 hash;
        hash.update(held_.span().first(*n));
        first_ = Digest{hash.final_hex(), *n};
        return first_;
      }
      held_ = SecretBytes();
    }
    TAKOSUMI_TRY(seek_to(fd_, 0, path_));
    Sha256 hash;
    for (;;) {
      auto n = read_full(fd_, chunk_.mutable_span(), path_);
      if (!n) return std::unexpected(n.error());
      hash.update(chunk_.span().first(*n));
      first_.size += *n;
      if (*n < kChunkSize) break;
    }
    first_.sha256 = hash.final_hex();
    return first_;
  }

  // The next chunk of the second pass (shorter than kChunkSize at the end).
  Result<std::span<const std::uint8_t>> next() {
    if (!held_.empty()) {
      const std::size_t n = std::min(kChunkSize, held_size_ - offset_);
      auto out = held_.span().subspan(offset_, n);
      offset_ += n;
      return out;
    }
    if (!rereading_) {
      TAKOSUMI_TRY(seek_to(fd_, 0, path_));
      rereading_ = true;
    }
    auto n = read_full(fd_, chunk_.mutable_span(), path_);
    if (!n) return std::unexpected(n.error());
    second_.update(chunk_.span().first(*n));
    second_size_ += *n;
    return chunk_.span().first(*n);
  }

  Status check_unchanged() {
    if (!held_.empty()) return {};
    if (second_size_ != first_.size || second_.final_hex() != first_.sha256)
      return fail(errc::kIoError, path_.string() +
                                      " changed while it was being encrypted; retry once nothing "
                                      "is writing to it");
    return {};
  }

 private:
  int fd_;
  const fs::path& path_;
  SecretBytes chunk_;
  SecretBytes held_;
  std::size_t held_size_ = 0;
  std::size_t offset_ = 0;
  bool rereading_ = false;
  Digest first_;
  Sha256 second_;
  std::uint64_t second_size_ = 0;
};

// A chunk shorter than kChunkSize is the final one; a plaintext that is a multiple of kChunkSize
// therefore ends with an empty final chunk, which keeps the framing unambiguous.
Status encrypt_stream(PlaintextSource& in, HashedOutput& out, const SecretBytes& dek,
                      std::string_view aad) {
  StreamState st;
  std::array<std::uint8_t, kStreamHeaderBytes> stream_header{};
  crypto_secretstream_xchacha20poly1305_init_push(&st.state, stream_header.data(), dek.data());
  TAKOSUMI_TRY(out.write(stream_header));
  std::vector<std::uint8_t> cipher(kChunkSize + kChunkOverhead);
  for (unsigned char tag = kTagMessage; tag != kTagFinal;) {
    auto plain = in.next();
    if (!plain) return std::unexpected(plain.error());
    tag = plain->size() < kChunkSize ? kTagFinal : kTagMessage;
    unsigned long long clen = 0;
    crypto_secretstream_xchacha20poly1305_push(&st.state, cipher.data(), &clen, plain->data(),
                                               plain->size(), as_bytes(aad).data(), aad.size(),
                                               tag);
    TAKOSUMI_TRY(out.write(std::span(cipher).first(clen)));
  }
  return in.check_unchanged();
}

Result<EnvelopePrefix> read_prefix_from(int fd, const fs::path& path) {
  std::vector<std::uint8_t> buf(kMaxPrefixBytes);
  auto n = read_full(fd, buf, path);
  if (!n) return std::unexpected(n.error());
  return parse_envelope_prefix(as_chars(std::span(buf).first(*n)));
}

Result<EncryptedFile> encrypt_impl(const fs::path& plaintext, const fs::path& out,
                                   EnvelopeHeader header, const BoxPublicKey& recipient) {
  auto in = open_regular_file(plaintext);
  if (!in) return std::unexpected(in.error());
  PlaintextSource source(in->fd.get(), plaintext);
  auto digest = source.digest();
  if (!digest) return std::unexpected(digest.error());
  header.plaintext_sha256 = digest->sha256;
  header.plaintext_size = static_cast<std::int64_t>(digest->size);
  const std::string header_json = detail::header_to_json(header);
  // Refuse what no reader would accept (field sizes, kind) before writing anything.
  if (auto check = detail::header_from_json(header_json); !check)
    return fail(errc::kInvalidArgument, check.error().message);
  SecretBytes dek(kDekBytes);
  crypto_secretstream_xchacha20poly1305_keygen(dek.data());
  auto sealed = seal(dek.span(), recipient);
  if (sealed.empty())
    return fail(errc::kCryptoFailed, "cannot seal the DEK: recipient public key is not usable");
  auto tmp = TempFile::create_beside(out);
  if (!tmp) return std::unexpected(tmp.error());
  HashedOutput hashed{*tmp, {}};
  TAKOSUMI_TRY(hashed.write(as_bytes(encode_prefix(header_json, sealed))));
  TAKOSUMI_TRY(encrypt_stream(source, hashed, dek, header_json));
  TAKOSUMI_TRY(tmp->commit());
  return EncryptedFile{std::move(header), hashed.hash.final_hex()};
}

// Reads the chunks after the prefix, writing plaintext to out. A read shorter than a full chunk
// means end of file; a chunk cut short fails authentication just like an altered one, so the
// payload length the header promises (the header is AAD of every chunk) tells the two apart.
class EnvelopeDecryptor {
 public:
  EnvelopeDecryptor(int in, const fs::path& path, const EnvelopePrefix& prefix, TempFile& out)
      : in_(in),
        path_(path),
        prefix_(prefix),
        out_(out),
        promised_(expected_payload_bytes(static_cast<std::uint64_t>(prefix.header.plaintext_size))),
        cipher_(kChunkSize + kChunkOverhead),
        plain_(kChunkSize) {}

  Status run(const SecretBytes& dek) {
    TAKOSUMI_TRY(start(dek));
    for (;;) {
      auto final_seen = next_chunk();
      if (!final_seen) return std::unexpected(final_seen.error());
      if (*final_seen) return finish();
    }
  }

 private:
  Status start(const SecretBytes& dek) {
    std::array<std::uint8_t, kStreamHeaderBytes> stream_header{};
    auto n = read_full(in_, stream_header, path_);
    if (!n) return std::unexpected(n.error());
    consumed_ = *n;
    if (*n < stream_header.size())
      return fail(errc::kEnvelopeTruncated, "envelope ends inside the stream header");
    if (crypto_secretstream_xchacha20poly1305_init_pull(&st_.state, stream_header.data(),
                                                        dek.data()) != 0)
      return fail(errc::kEnvelopeMalformed, "invalid secretstream header");
    return {};
  }

  Result<bool> next_chunk() {
    auto got = read_full(in_, cipher_, path_);
    if (!got) return std::unexpected(got.error());
    consumed_ += *got;
    const bool at_eof = *got < cipher_.size();
    const std::string where = "chunk " + std::to_string(index_++);
    if (*got == 0) return truncated("before " + where + "; the final chunk is missing");
    unsigned long long len = 0;
    unsigned char tag = 0;
    const auto aad = as_bytes(prefix_.header_json);
    if (crypto_secretstream_xchacha20poly1305_pull(&st_.state, plain_.data(), &len, &tag,
                                                   cipher_.data(), *got, aad.data(), aad.size()) != 0) {
      if (at_eof && consumed_ < promised_) return truncated("inside " + where);
      return fail(errc::kEnvelopeTampered,
                  where + " fails authentication: the envelope was altered, or the DEK or header "
                          "does not belong to it");
    }
    hash_.update(plain_.span().first(len));
    plaintext_bytes_ += len;
    TAKOSUMI_TRY(out_.write(plain_.span().first(len)));
    if (tag == kTagFinal) return true;
    if (tag != kTagMessage) return fail(errc::kEnvelopeMalformed, where + " has an unknown tag");
    if (at_eof) return truncated("after " + where + "; the final chunk is missing");
    return false;
  }

  Status finish() {
    std::array<std::uint8_t, 1> extra{};
    auto n = read_full(in_, extra, path_);
    if (!n) return std::unexpected(n.error());
    if (*n != 0) return fail(errc::kEnvelopeTampered, "bytes follow the final chunk");
    if (plaintext_bytes_ != static_cast<std::uint64_t>(prefix_.header.plaintext_size) ||
        hash_.final_hex() != prefix_.header.plaintext_sha256)
      return fail(errc::kEnvelopeTampered,
                  "decrypted content does not match the header's size and sha256");
    return {};
  }

  std::unexpected<Error> truncated(const std::string& where) const {
    return fail(errc::kEnvelopeTruncated,
                "envelope ends " + where + " (payload has " + std::to_string(consumed_) + " of " +
                    std::to_string(promised_) + " bytes); fetch it again");
  }

  int in_;
  const fs::path& path_;
  const EnvelopePrefix& prefix_;
  TempFile& out_;
  const std::uint64_t promised_;
  std::vector<std::uint8_t> cipher_;
  SecretBytes plain_;
  StreamState st_;
  Sha256 hash_;
  std::uint64_t consumed_ = 0;
  std::uint64_t plaintext_bytes_ = 0;
  std::size_t index_ = 0;
};

Result<EnvelopeHeader> decrypt_impl(const fs::path& envelope, const fs::path& out,
                                    const SecretBytes& dek, const EnvelopeExpectation& expect) {
  if (dek.size() != kDekBytes)
    return fail(errc::kInvalidArgument, "DEK must be " + std::to_string(kDekBytes) + " bytes");
  auto in = open_regular_file(envelope);
  if (!in) return std::unexpected(in.error());
  auto prefix = read_prefix_from(in->fd.get(), envelope);
  if (!prefix) return std::unexpected(prefix.error());
  // Before anything is created: a swapped or replayed artifact must not touch the workspace.
  TAKOSUMI_TRY(detail::check_expectation(prefix->header, expect));
  TAKOSUMI_TRY(seek_to(in->fd.get(), prefix->payload_offset, envelope));
  auto tmp = TempFile::create_beside(out);
  if (!tmp) return std::unexpected(tmp.error());
  TAKOSUMI_TRY(EnvelopeDecryptor(in->fd.get(), envelope, *prefix, *tmp).run(dek));
  TAKOSUMI_TRY(tmp->commit(TempFile::Durability::scratch));
  return std::move(prefix->header);
}

}  // namespace

Result<EncryptedFile> encrypt_file(const fs::path& plaintext, const fs::path& out,
                                   EnvelopeHeader header, const BoxPublicKey& recipient) {
  detail::ensure_sodium();
  return with_context(encrypt_impl(plaintext, out, std::move(header), recipient),
                      "encrypt " + plaintext.string() + " to " + out.string());
}

Result<EnvelopePrefix> parse_envelope_prefix(std::string_view bytes) {
  auto truncated = [&](std::string_view inside) {
    return fail(errc::kEnvelopeTruncated, "envelope ends inside the " + std::string(inside) +
                                              " (" + std::to_string(bytes.size()) + " bytes)");
  };
  if (bytes.substr(0, kMagic.size()) != kMagic.substr(0, bytes.size()))
    return fail(errc::kEnvelopeMalformed,
                "not a takosumi envelope: it does not start with \"TKSENV01\"");
  if (bytes.size() < kMagic.size() + 4) return truncated("magic and header length");
  const std::size_t header_len = read_big_endian(bytes.substr(kMagic.size(), 4));
  if (header_len == 0 || header_len > detail::kMaxHeaderBytes)
    return fail(errc::kEnvelopeMalformed, "header length " + std::to_string(header_len) +
                                              " is outside 1.." +
                                              std::to_string(detail::kMaxHeaderBytes));
  const std::size_t dek_len_at = kMagic.size() + 4 + header_len;
  if (bytes.size() < dek_len_at + 2) return truncated("header");
  const std::size_t dek_len = read_big_endian(bytes.substr(dek_len_at, 2));
  if (dek_len != kSealedDekBytes)
    return fail(errc::kEnvelopeMalformed, "sealed DEK length " + std::to_string(dek_len) +
                                              " must be " + std::to_string(kSealedDekBytes));
  if (bytes.size() < dek_len_at + 2 + dek_len) return truncated("sealed DEK");
  EnvelopePrefix prefix;
  prefix.header_json = std::string(bytes.substr(kMagic.size() + 4, header_len));
  auto header = detail::header_from_json(prefix.header_json);
  if (!header) return std::unexpected(header.error());
  prefix.header = std::move(*header);
  auto dek = as_bytes(bytes.substr(dek_len_at + 2, dek_len));
  prefix.sealed_dek.assign(dek.begin(), dek.end());
  prefix.payload_offset = dek_len_at + 2 + dek_len;
  return prefix;
}

Result<EnvelopePrefix> read_envelope_prefix(const fs::path& path) {
  auto fd = open_regular_file(path);
  if (!fd) return std::unexpected(fd.error());
  return with_context(read_prefix_from(fd->fd.get(), path), "read envelope " + path.string());
}

Result<EnvelopeHeader> decrypt_file(const fs::path& envelope, const fs::path& out,
                                    const SecretBytes& dek, const EnvelopeExpectation& expect) {
  detail::ensure_sodium();
  return with_context(decrypt_impl(envelope, out, dek, expect),
                      "decrypt " + envelope.string() + " to " + out.string());
}

std::uint64_t expected_envelope_size(const EnvelopePrefix& prefix) {
  return prefix.payload_offset +
         expected_payload_bytes(static_cast<std::uint64_t>(prefix.header.plaintext_size));
}

Result<SecretBytes> open_envelope_dek(const EnvelopePrefix& prefix, const BoxKeyPair& keys) {
  auto dek = open_sealed(prefix.sealed_dek, keys);
  if (!dek)
    return std::unexpected(dek.error().with_context(
        "open DEK of " + prefix.header.kind + " envelope for capsule " +
        prefix.header.capsule_id + " (sealed to key id \"" + prefix.header.key_id + "\")"));
  if (dek->size() != kDekBytes)
    return fail(errc::kEnvelopeMalformed, "sealed DEK holds " + std::to_string(dek->size()) +
                                              " bytes, expected " + std::to_string(kDekBytes));
  return dek;
}

}  // namespace takosumi::crypto
