#pragma once
// Internal to crypto/: every entry point that touches libsodium calls ensure_sodium() first.
#include <sodium/core.h>

#include <cstdio>
#include <cstdlib>

namespace takosumi::crypto::detail {

// sodium_init() is idempotent and thread-safe; the static makes repeat calls free. It fails only
// when the system cannot provide randomness, which libsodium itself treats as fatal (its RNG
// aborts), and generate() has no error channel, so we stop with a message instead of limping on.
inline void ensure_sodium() {
  static const bool ready = [] {
    if (sodium_init() < 0) {
      std::fputs("takosumi: libsodium initialisation failed (no system randomness)\n", stderr);
      std::abort();
    }
    return true;
  }();
  (void)ready;
}

}  // namespace takosumi::crypto::detail
