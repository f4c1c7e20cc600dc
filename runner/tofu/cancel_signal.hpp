#pragma once
// A one-shot cancellation request for one Run. Used on the io thread only (no locking): request()
// is idempotent and calls the installed waker, which the process launcher uses to wake its
// watchdog so the running child is interrupted at once.
#include <functional>
#include <utility>

namespace takosumi::runner {

class CancelSignal {
 public:
  void request() {
    if (requested_) return;
    requested_ = true;
    if (waker_) waker_();
  }
  bool requested() const { return requested_; }

  // Installs the callback run by a later request(); at most one, replaced by the next call.
  void set_waker(std::function<void()> waker) { waker_ = std::move(waker); }
  void clear_waker() { waker_ = nullptr; }

 private:
  bool requested_ = false;
  std::function<void()> waker_;
};

}  // namespace takosumi::runner
