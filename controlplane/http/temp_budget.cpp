#include "controlplane/http/temp_budget.hpp"

#include <system_error>

namespace takosumi::controlplane {

bool TempBudget::try_reserve(std::uint64_t n) {
  if (n > limit_ - used_) return false;
  used_ += n;
  return true;
}

void TempBudget::release(std::uint64_t n) { used_ -= n < used_ ? n : used_; }

TempUpload::~TempUpload() {
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
  budget_->release(reserved_);
}

bool TempUpload::reserve_total(std::uint64_t total) {
  if (total <= reserved_) return true;
  if (!budget_->try_reserve(total - reserved_)) {
    refused_ = true;
    return false;
  }
  reserved_ = total;
  return true;
}

}  // namespace takosumi::controlplane
