// Where this build's tests find the real OpenTofu, the provider mirror, the source and build
// trees, and the programs they start. Defined in one file CMake generates per build
// (tests/CMakeLists.txt, library takosumi_test_tools): the checkout's absolute paths reach no
// other compile, so a compiler cache shared by checkouts at other paths serves a clean clone.
#pragma once

namespace takosumi::test_paths {

extern const char* const tofu;             // .tools/bin/tofu (TAKOSUMI_TOFU)
extern const char* const provider_mirror;  // .tools/mirror (TAKOSUMI_PROVIDER_MIRROR)
extern const char* const source_dir;
extern const char* const binary_dir;
extern const char* const githelper;  // takosumi-githelper
extern const char* const supervise;  // takosumi-supervise
extern const char* const confine;    // takosumi-confine
extern const char* const misbehave;  // tests/support/misbehave.cpp

}  // namespace takosumi::test_paths
