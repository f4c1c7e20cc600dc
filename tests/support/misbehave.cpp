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
//   interruptible <dir>  like tofu on SIGINT (even when started with it ignored): creates
//                      <dir>/ready and prints "ready", then "tick" every 100 ms with unbuffered
//                      writes (a broken stdout kills it with SIGPIPE); after SIGINT five more
//                      ticks, then <dir>/interrupted holding "interrupted <number of SIGINTs>",
//                      exit 0 (a second SIGINT, which would make tofu give up, shows in the count)
//   parent <program> [args...]  a stand-in agent: runs the program in a new session (like the
//                      launcher) with stdout and stderr piped to itself, prints "child <pid>",
//                      then reads and drops the program's output forever
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

[[noreturn]] void sleep_forever() {
  for (;;) ::pause();
}

void ready() {
  std::puts("ready");
  std::fflush(stdout);
}

void write_file(const std::string& path, const char* text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || ::write(fd, text, std::strlen(text)) < 0) std::_Exit(3);
  ::close(fd);
}

volatile sig_atomic_t interrupts = 0;

int interruptible(const std::string& dir) {
  ::signal(SIGINT, [](int) { interrupts = interrupts + 1; });
  write_file(dir + "/ready", "ready\n");
  ready();
  for (int after = 0; after < 5; after += interrupts > 0 ? 1 : 0) {
    if (::write(STDOUT_FILENO, "tick\n", 5) < 0) return 4;
    ::usleep(100'000);
  }
  write_file(dir + "/interrupted", ("interrupted " + std::to_string(interrupts) + "\n").c_str());
  return 0;
}

int parent(char** command) {
  int out[2], err[2];
  if (::pipe(out) != 0 || ::pipe(err) != 0) return 3;
  const pid_t pid = ::fork();
  if (pid < 0) return 3;
  if (pid == 0) {
    ::setsid();
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    ::close(out[0]), ::close(out[1]), ::close(err[0]), ::close(err[1]);
    ::execv(command[0], command);
    ::_exit(127);
  }
  ::close(out[1]), ::close(err[1]);
  std::printf("child %d\n", static_cast<int>(pid));
  std::fflush(stdout);
  std::vector<pollfd> fds{{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  char buf[4096];
  for (;;) {
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;
    for (auto& f : fds)
      if (f.revents && ::read(f.fd, buf, sizeof buf) <= 0) f.fd = -1;
    if (fds[0].fd < 0 && fds[1].fd < 0) sleep_forever();
  }
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
  if (mode == "interruptible" && argc == 3) return interruptible(argv[2]);
  if (mode == "parent" && argc >= 3) return parent(argv + 2);
  if (mode == "sleep") {
    ready();
    sleep_forever();
  }
  return 2;
}
