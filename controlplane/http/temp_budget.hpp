#pragma once
// The server's budget of temporary bytes: request bodies streamed to disk, summed over every
// request in flight (maxTempMiB). A request reserves bytes before they are written and gives them
// back when its temp file is removed, so what unauthenticated or slow clients keep on disk is
// bounded. Single-threaded: use from the io_context's thread only.
#include <cstdint>
#include <filesystem>
#include <memory>

namespace takosumi::controlplane {

class TempBudget {
 public:
  explicit TempBudget(std::uint64_t limit) : limit_(limit) {}
  // Reserves n more bytes; false, reserving nothing, when that would pass the limit.
  bool try_reserve(std::uint64_t n);
  void release(std::uint64_t n);
  std::uint64_t used() const { return used_; }

 private:
  std::uint64_t limit_;
  std::uint64_t used_ = 0;
};

// One request's temp file (not created here) and its share of the budget. The destructor removes
// the file and returns the share. Not copyable or movable: it is referenced while the body is read.
// It shares the budget: a session's coroutine frame, and the upload in it, can be destroyed after
// the server that made it (an io_context torn down with the session suspended mid-answer).
class TempUpload {
 public:
  TempUpload(std::shared_ptr<TempBudget> budget, std::filesystem::path path)
      : budget_(std::move(budget)), path_(std::move(path)) {}
  ~TempUpload();
  TempUpload(const TempUpload&) = delete;
  TempUpload& operator=(const TempUpload&) = delete;

  // Makes the share at least total bytes; false when the budget refuses (refused() stays true).
  bool reserve_total(std::uint64_t total);
  bool refused() const { return refused_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::shared_ptr<TempBudget> budget_;
  std::filesystem::path path_;
  std::uint64_t reserved_ = 0;
  bool refused_ = false;
};

}  // namespace takosumi::controlplane
