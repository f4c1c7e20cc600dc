#include "runner/phases/init_cache.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "common/file_io.hpp"
#include "crypto/sha256.hpp"
#include "runner/tofu/tofu_version_cache.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFormat = "takosumi-init-cache 1\n";
constexpr std::uint64_t kMaxConfigBytes = 16u << 20;   // the files hashed for a key
constexpr std::uint64_t kMaxResultFile = 1u << 20;     // one file init wrote
constexpr std::uint64_t kMaxResultBytes = 4u << 20;    // all of them
constexpr std::size_t kMaxResultEntries = 2000;
constexpr std::size_t kMaxMirrorEntries = 20000;
constexpr std::string_view kLockFile = ".terraform.lock.hcl";

// Fields are length-prefixed, so no two different inputs hash alike.
void add(crypto::Sha256& h, std::string_view field) {
  h.update(std::to_string(field.size()) + ":");
  h.update(field);
}

// The binary's identity, as the version cache knows it (a rebuilt tofu is another input).
void add_identity(crypto::Sha256& h, const TofuVersionCache::Identity& id) {
  add(h, std::to_string(id.device) + " " + std::to_string(id.inode) + " " + std::to_string(id.size) + " " +
             std::to_string(id.modified.tv_sec) + "." + std::to_string(id.modified.tv_nsec) + " " +
             std::to_string(id.changed.tv_sec) + "." + std::to_string(id.changed.tv_nsec));
}

// The mirror's packages as they are now (names, and each file's identity): a package added or
// replaced changes what init would select or lock.
bool add_mirror(crypto::Sha256& h, const fs::path& mirror) {
  std::error_code ec;
  std::vector<std::string> lines;
  fs::recursive_directory_iterator it(mirror, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (lines.size() >= kMaxMirrorEntries || it.depth() > 6) return false;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) return false;
    lines.push_back(it->path().lexically_relative(mirror).string());
    if (!S_ISDIR(st.st_mode)) lines.back() += " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) +
                                              " " + std::to_string(st.st_mtim.tv_sec) + "." +
                                              std::to_string(st.st_mtim.tv_nsec);
  }
  if (ec) return false;
  std::sort(lines.begin(), lines.end());
  for (const auto& line : lines) add(h, line);
  return true;
}

// A path of a result: relative, normal, beneath .terraform or the lock file itself.
bool result_path(const fs::path& rel) {
  if (rel.empty() || rel.is_absolute() || rel.lexically_normal() != rel) return false;
  for (const auto& part : rel)
    if (part == ".." || part == ".") return false;
  return rel == kLockFile || *rel.begin() == ".terraform";
}

// A link of a result: into the mirror, at a directory that is there.
bool mirror_link(const fs::path& target, const fs::path& mirror) {
  if (!target.is_absolute() || target.lexically_normal() != target) return false;
  const auto rel = target.lexically_relative(mirror.lexically_normal());
  if (rel.empty() || *rel.begin() == ".." || rel == ".") return false;
  std::error_code ec;
  return fs::is_directory(target, ec);
}

struct Record {
  char kind;  // 'F' file, 'L' link
  std::string path;
  std::string data;  // content, or the link's target
};

std::string serialize(const std::string& key, const std::vector<Record>& records) {
  std::string body(kFormat);
  body += key + "\n";
  for (const auto& r : records)
    body += std::string(1, r.kind) + " " + std::to_string(r.path.size()) + " " + std::to_string(r.data.size()) +
            "\n" + r.path + r.data;
  return body + "E " + crypto::sha256_hex(body) + "\n";
}

std::optional<std::vector<Record>> parse(std::string_view text, const std::string& key) {
  const std::string head = std::string(kFormat) + key + "\n";
  if (text.size() < head.size() + 67 || !text.starts_with(head)) return std::nullopt;
  const auto end = text.size() - 67;  // "E " + 64 hex + "\n"
  if (text.substr(end, 2) != "E " || text.back() != '\n') return std::nullopt;
  if (crypto::sha256_hex(text.substr(0, end)) != text.substr(end + 2, 64)) return std::nullopt;
  std::vector<Record> records;
  for (std::size_t pos = head.size(); pos < end;) {
    const auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos || nl >= end || nl - pos < 5) return std::nullopt;
    const std::string_view line = text.substr(pos, nl - pos);
    Record r{line[0], {}, {}};
    if ((r.kind != 'F' && r.kind != 'L') || line[1] != ' ') return std::nullopt;
    std::size_t path_size = 0, data_size = 0;
    const auto space = line.find(' ', 2);
    if (space == std::string_view::npos) return std::nullopt;
    auto a = std::from_chars(line.data() + 2, line.data() + space, path_size);
    auto b = std::from_chars(line.data() + space + 1, line.data() + line.size(), data_size);
    if (a.ec != std::errc() || b.ec != std::errc() || b.ptr != line.data() + line.size()) return std::nullopt;
    pos = nl + 1;
    if (path_size > end - pos || data_size > end - pos - path_size) return std::nullopt;
    r.path = text.substr(pos, path_size);
    r.data = text.substr(pos + path_size, data_size);
    pos += path_size + data_size;
    records.push_back(std::move(r));
  }
  return records;
}

// The directories of rel beneath module_dir, made where missing; a link or a file in their place
// is refused (nothing of the Run runs now, but a module may have left one in its checkout).
bool make_parents(const fs::path& module_dir, const fs::path& rel) {
  fs::path at = module_dir;
  for (const auto& part : rel.parent_path()) {
    at /= part;
    struct stat st {};
    if (::lstat(at.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return false;
      continue;
    }
    if (::mkdir(at.c_str(), 0755) != 0) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> init_cache_key(const RunWorkspace& workspace, const InitInputs& in) {
  if (in.remote_modules) return std::nullopt;
  crypto::Sha256 h;
  add(h, kFormat);
  const auto identity = TofuVersionCache::identify(in.tofu_binary);
  if (!identity) return std::nullopt;
  add(h, in.tofu_binary.string());
  add_identity(h, *identity);
  add(h, in.cli_config);
  add(h, in.mirror.string());
  if (!add_mirror(h, in.mirror)) return std::nullopt;
  add(h, in.variables);
  add(h, in.policy);
  std::vector<std::string> files = in.files;
  if (std::find(files.begin(), files.end(), kLockFile) == files.end() &&
      fs::exists(fs::symlink_status(in.module_dir / kLockFile)))
    files.emplace_back(kLockFile);
  std::sort(files.begin(), files.end());
  std::uint64_t left = kMaxConfigBytes;
  for (const auto& rel : files) {
    const fs::path file = in.module_dir / rel;
    if (!workspace.check_regular_file(file)) return std::nullopt;
    auto text = read_file(file, left);
    if (!text) return std::nullopt;
    left -= text->size();
    add(h, rel);
    add(h, *text);
  }
  return h.final_hex();
}

Result<bool> InitCache::restore(const std::string& key, const RunWorkspace& workspace, const fs::path& module_dir,
                                const fs::path& mirror) const {
  const fs::path file = entry(key);
  std::error_code ec;
  const auto written = fs::last_write_time(file, ec);
  if (ec) return false;  // none
  if (fs::file_time_type::clock::now() - written > kMaxAge) {
    fs::remove(file, ec);
    return false;
  }
  auto text = read_file(file, kMaxResultBytes + (1u << 20));
  auto records = text ? parse(*text, key) : std::nullopt;
  bool sound = records.has_value();
  for (const auto& r : records.value_or(std::vector<Record>{}))
    sound = sound && result_path(r.path) && (r.kind == 'F' || mirror_link(r.data, mirror));
  if (!sound) {
    fs::remove(file, ec);  // damaged or not what init makes: the Run runs init, and keeps a new one
    return false;
  }
  for (const auto& r : *records) {
    const fs::path target = module_dir / r.path;
    if (!make_parents(module_dir, r.path))
      return fail(errc::kWorkspaceFailed, "init cache: " + r.path + " cannot be made in the module directory");
    if (r.kind == 'F') {
      TAKOSUMI_TRY(workspace.write_in_source(target, r.data));
      continue;
    }
    fs::remove(target, ec);
    fs::create_directory_symlink(r.data, target, ec);
    if (ec) return fail(errc::kWorkspaceFailed, "init cache: link " + r.path + ": " + ec.message());
  }
  fs::last_write_time(file, fs::file_time_type::clock::now(), ec);  // the newest entries stay
  return true;
}

Status InitCache::store(const std::string& key, const fs::path& module_dir, const fs::path& mirror) const {
  std::vector<Record> records;
  std::uint64_t bytes = 0;
  std::error_code ec;
  const fs::path dot = module_dir / ".terraform";
  fs::recursive_directory_iterator it(dot, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (records.size() >= kMaxResultEntries) return {};
    const fs::path rel = it->path().lexically_relative(module_dir);
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) return {};
    if (S_ISDIR(st.st_mode)) continue;
    const bool in_modules = rel.string().starts_with(".terraform/modules/");
    if (S_ISLNK(st.st_mode)) {
      const auto target = fs::read_symlink(it->path(), ec);
      if (ec || in_modules || !mirror_link(target, mirror)) return {};  // not only what init makes from the mirror
      records.push_back({'L', rel.string(), target.string()});
      continue;
    }
    // Beneath modules only the list of local modules: a downloaded module is never cached.
    if (!S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) > kMaxResultFile ||
        (in_modules && rel != ".terraform/modules/modules.json"))
      return {};
    auto text = read_file(it->path(), kMaxResultFile);
    if (!text || (bytes += text->size()) > kMaxResultBytes) return {};
    records.push_back({'F', rel.string(), std::move(*text)});
  }
  if (ec) return {};
  struct stat st {};
  if (::lstat((module_dir / kLockFile).c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return {};
    auto text = read_file(module_dir / kLockFile, kMaxResultFile);
    if (!text) return {};
    records.push_back({'F', std::string(kLockFile), std::move(*text)});
  }
  for (const auto& r : records)
    if (!result_path(r.path)) return {};
  TAKOSUMI_TRY(ensure_directory(dir_, 0700));
  TAKOSUMI_TRY(write_file_atomic(entry(key), serialize(key, records), 0600));
  // Bounded: the least recently used entries go first.
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (const auto& e : fs::directory_iterator(dir_, ec))
    if (e.path().extension() == ".init") entries.emplace_back(e.last_write_time(ec), e.path());
  if (entries.size() <= kMaxEntries) return {};
  std::sort(entries.begin(), entries.end());
  for (std::size_t i = 0; i + kMaxEntries < entries.size(); ++i) fs::remove(entries[i].second, ec);
  return {};
}

}  // namespace takosumi::runner
