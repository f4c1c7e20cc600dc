// Test helper for the process launcher: a child that behaves (or misbehaves) on purpose.
//   lines <n> <exit>   n numbered lines on stdout, "err" on stderr, then exit code <exit>
//   env                prints its environment, one variable a line
//   pwd                prints its working directory
//   long <bytes>       prints one line of <bytes> 'x' and a short line "end"
//   ignore-sigint      ignores SIGINT, prints "ready", sleeps forever
//   exit-on-sigint     prints "ready", exits 42 on SIGINT
//   sleep              prints "ready", sleeps forever (default SIGINT: dies)
//   orphan             forks a grandchild that keeps stdout open and sleeps forever, prints
//                      "grandchild <pid>", exits 0
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

namespace {

[[noreturn]] void sleep_forever() {
  for (;;) ::pause();
}

void ready() {
  std::puts("ready");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string mode = argv[1];
  if (mode == "lines" && argc == 4) {
    for (int i = 0; i < std::atoi(argv[2]); ++i) std::printf("line %d\n", i);
    std::fflush(stdout);
    std::fputs("err\n", stderr);
    return std::atoi(argv[3]);
  }
  if (mode == "env") {
    for (char** e = environ; *e; ++e) std::puts(*e);
    return 0;
  }
  if (mode == "pwd") {
    char buf[4096];
    std::puts(::getcwd(buf, sizeof buf));
    return 0;
  }
  if (mode == "long" && argc == 3) {
    std::string line(std::strtoul(argv[2], nullptr, 10), 'x');
    std::printf("%s\nend\n", line.c_str());
    return 0;
  }
  if (mode == "ignore-sigint") {
    ::signal(SIGINT, SIG_IGN);
    ready();
    sleep_forever();
  }
  if (mode == "exit-on-sigint") {
    ::signal(SIGINT, [](int) { ::_exit(42); });
    ready();
    sleep_forever();
  }
  if (mode == "orphan") {
    const pid_t pid = ::fork();
    if (pid == 0) sleep_forever();
    std::printf("grandchild %d\n", static_cast<int>(pid));
    return 0;
  }
  if (mode == "sleep") {
    ready();
    sleep_forever();
  }
  return 2;
}
