// takosumi-confine on its own: its command line, and the real program under the real kernel
// (Landlock and seccomp; no bubblewrap needed for either).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "confine/command_frames.hpp"
#include "confine/confine_arguments.hpp"
#include "confine/elf_interpreter.hpp"
#include "confine/landlock.hpp"
#include "confine/noexec_mounts.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::confine {
namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs takosumi-confine with args, output captured through a file.
Outcome confine(const ConfineArguments& args, const takosumi::testing::TempDir& dir) {
  std::vector<std::string> argv{test_paths::confine};
  for (auto& a : format_confine_arguments(args)) argv.push_back(std::move(a));
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const auto out = dir / "confine.out";
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* f = std::freopen(out.c_str(), "w", stdout);
    if (f == nullptr || ::dup2(STDOUT_FILENO, STDERR_FILENO) < 0) ::_exit(99);
    ::execv(cargv[0], cargv.data());
    ::_exit(98);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::ifstream in(out);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, std::string((std::istreambuf_iterator<char>(in)), {})};
}

ConfineArguments shell(std::vector<std::string> exec, bool loader, const std::string& script) {
  ConfineArguments a;
  a.exec = std::move(exec);
  a.loader = loader;
  a.command = {"/usr/bin/dash", "-c", script};
  return a;
}

TEST(ConfineArguments, FormatThenParseGivesTheSameArguments) {
  ConfineArguments a;
  a.exec = {"/opt/tofu", "/mirror"};
  a.loader = true;
  a.tcp_connect_ports = std::vector<std::uint16_t>{443, 8443};
  a.max_processes = 512;
  a.landlock_required = false;
  a.command = {"/opt/tofu", "plan", "--", "-x"};
  auto parsed = parse_confine_arguments(format_confine_arguments(a));
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(parsed->exec, a.exec);
  EXPECT_TRUE(parsed->loader);
  EXPECT_EQ(parsed->tcp_connect_ports, a.tcp_connect_ports);
  EXPECT_EQ(parsed->max_processes, 512u);
  EXPECT_FALSE(parsed->landlock_required);
  EXPECT_EQ(parsed->command, a.command);

  ConfineArguments sealed;
  sealed.noexec_writable = true;
  sealed.noexec_under = {"/work/run-1", "/dev"};
  sealed.allow_jit = true;
  sealed.command = {"/bin/true"};
  auto resealed = parse_confine_arguments(format_confine_arguments(sealed));
  ASSERT_TRUE(resealed) << resealed.error();
  EXPECT_TRUE(resealed->noexec_writable);
  EXPECT_EQ(resealed->noexec_under, sealed.noexec_under);
  EXPECT_TRUE(resealed->allow_jit);
  auto plain = parse_confine_arguments(format_confine_arguments(a));
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_FALSE(plain->noexec_writable);
  EXPECT_FALSE(plain->allow_jit);

  ConfineArguments none;
  none.tcp_connect_ports.emplace();  // connect nowhere: not the same as "any"
  none.command = {"/bin/true"};
  auto reparsed = parse_confine_arguments(format_confine_arguments(none));
  ASSERT_TRUE(reparsed) << reparsed.error();
  ASSERT_TRUE(reparsed->tcp_connect_ports);
  EXPECT_TRUE(reparsed->tcp_connect_ports->empty());

  ConfineArguments server;
  server.serve = true;
  server.cpu_seconds = 600;
  auto served = parse_confine_arguments(format_confine_arguments(server));
  ASSERT_TRUE(served) << served.error();
  EXPECT_TRUE(served->serve);
  EXPECT_EQ(served->cpu_seconds, 600u);
  EXPECT_TRUE(served->command.empty());
}

TEST(CommandFrames, ARequestComesBackAsItWasSentAndAMalformedOneIsRefused) {
  CommandRequest request{"/work/run-1/source/infra", true, {"/opt/tofu", "show", "-json", ""},
                         {"PATH=/usr/bin", "TF_INPUT=0"}};
  auto encoded = encode_request(request);
  ASSERT_TRUE(encoded) << encoded.error();
  const auto* prefix = reinterpret_cast<const unsigned char*>(encoded->data());
  ASSERT_EQ(read_u32(prefix), encoded->size() - 4);
  auto decoded = decode_request(std::string_view(*encoded).substr(4));
  ASSERT_TRUE(decoded) << decoded.error();
  EXPECT_EQ(decoded->cwd, request.cwd);
  EXPECT_TRUE(decoded->capture);
  EXPECT_EQ(decoded->argv, request.argv);
  EXPECT_EQ(decoded->env, request.env);

  EXPECT_FALSE(encode_request({"/w", false, {std::string("/bin/sh\0x", 9)}, {}})) << "a NUL in an argument";
  EXPECT_FALSE(encode_request({"/w", false, {"/bin/sh", std::string(kMaxRequestBytes, 'a')}, {}}));
  const std::string body = std::string(*encoded).substr(4);
  EXPECT_FALSE(decode_request(body.substr(0, body.size() - 1))) << "cut short";
  EXPECT_FALSE(decode_request(body + "x")) << "bytes after the environment";
  EXPECT_FALSE(decode_request(std::string("/w\0" "1\0" "1\0" "tofu\0" "0\0", 14))) << "a relative program";
  EXPECT_FALSE(decode_request(std::string("/w\0" "2\0" "1\0" "/t\0" "0\0", 12))) << "capture is 0 or 1";
  EXPECT_FALSE(decode_request(std::string("/w\0" "0\0" "99\0" "/t\0" "0\0", 13))) << "more strings than there are";
}

TEST(CommandFrames, AnExitSaysACodeOrASignalAndNothingElse) {
  EXPECT_EQ(exit_payload(false, 2), "E2");
  EXPECT_EQ(exit_payload(true, 9), "S9");
  auto code = parse_exit_payload("E2");
  ASSERT_TRUE(code);
  EXPECT_FALSE(code->signalled);
  EXPECT_EQ(code->value, 2);
  auto signal = parse_exit_payload("S15");
  ASSERT_TRUE(signal);
  EXPECT_TRUE(signal->signalled);
  EXPECT_EQ(signal->value, 15);
  for (const char* bad : {"", "E", "X1", "E-1", "E256", "E1x", "S"}) EXPECT_FALSE(parse_exit_payload(bad)) << bad;
}

TEST(ConfineArguments, MalformedCommandLinesAreRefusedWithTheReason) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--", "/bin/true"}, "--landlock is required"},
      {{"--landlock", "sometimes", "--", "/bin/true"}, "--landlock"},
      {{"--landlock", "required", "--", "true"}, "absolute path"},
      {{"--landlock", "required", "--exec", "bin", "--", "/bin/true"}, "absolute path"},
      {{"--landlock", "required", "--tcp-connect-only", "--tcp-connect", "70000", "--", "/bin/true"}, "1 to 65535"},
      {{"--landlock", "required", "--tcp-connect", "80", "--", "/bin/true"}, "--tcp-connect"},
      {{"--landlock", "required", "--loader", "--loader", "--", "/bin/true"}, "repeated"},
      // --noexec only widens --noexec-writable, which must come first.
      {{"--landlock", "required", "--noexec", "/w", "--", "/bin/true"}, "--noexec"},
      {{"--landlock", "required", "--noexec-writable", "--noexec", "w", "--", "/bin/true"}, "absolute path"},
      {{"--landlock", "required", "--allow-jit", "--allow-jit", "--", "/bin/true"}, "repeated"},
      {{"--landlock", "required"}, "\"--\""},
      {{"--landlock", "required", "--"}, "missing"},
      {{"--landlock", "required", "--serve", "--", "/bin/true"}, "stdin"},
      {{"--landlock", "required", "--cpu-seconds", "5", "--", "/bin/true"}, "--serve"},
      {{"--landlock", "required", "--serve", "--cpu-seconds", "0"}, "number from 1"}};
  for (const auto& [argv, reason] : cases) {
    auto parsed = parse_confine_arguments(argv);
    ASSERT_FALSE(parsed) << argv.front();
    EXPECT_NE(parsed.error().find(reason), std::string::npos) << parsed.error();
  }
}

TEST(NoexecMounts, MountinfoIsReadWithEscapedMountPointsAndPerMountOptions) {
  const std::string text =
      "22 1 0:21 / / ro,relatime - tmpfs tmpfs rw\n"
      "23 22 254:0 /srv/a\\040b /work/my\\040run rw,nosuid,nodev,relatime - ext4 /dev/vda rw\n"
      "24 22 0:5 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
      "25 22 0:22 / /usr ro,nosuid,nodev - ext4 /dev/vda rw\n";
  const auto mounts = parse_mountinfo(text);
  ASSERT_EQ(mounts.size(), 4u);
  EXPECT_EQ(mounts[1].mount_point, "/work/my run");
  EXPECT_EQ(mounts[1].options, (std::vector<std::string>{"rw", "nosuid", "nodev", "relatime"}));
  // Writable mounts always; read-only ones only at or beneath a listed directory.
  EXPECT_FALSE(needs_noexec(mounts[0], {}));
  EXPECT_TRUE(needs_noexec(mounts[1], {}));
  EXPECT_TRUE(needs_noexec(mounts[2], {}));
  EXPECT_FALSE(needs_noexec(mounts[3], {"/work"}));
  EXPECT_TRUE(needs_noexec(mounts[3], {"/usr"}));
  EXPECT_FALSE(needs_noexec(mounts[3], {"/us"})) << "a prefix of a name is not a parent";
  EXPECT_TRUE(needs_noexec(MountEntry{"/work/my run/agent", {"ro"}}, {"/work/my run"}));
}

// Python's own calls (no ctypes): what a module's interpreter would use to get code into memory.
std::string memory_probe() {
  return "python3 -c '\n"
         "import mmap, os\n"
         "def attempt(name, f):\n"
         "    try:\n"
         "        f(); print(name, \"allowed\")\n"
         "    except OSError as e:\n"
         "        print(name, \"refused\", e.errno)\n"
         "attempt(\"rw-mapping\", lambda: mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE))\n"
         "attempt(\"rwx-mapping\", lambda: mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC))\n"
         "attempt(\"memfd\", lambda: os.memfd_create(\"x\"))\n"
         "fd = os.open(\"/usr/bin/true\", os.O_RDONLY)\n"
         "attempt(\"fexecve\", lambda: os.execve(fd, [\"true\"], {}))\n"
         "'";
}

TEST(Confine, CodeCannotComeFromMemoryOrAnOpenDescriptor) {
  takosumi::testing::TempDir dir;
  auto run = confine(shell({"/usr/bin"}, true, memory_probe()), dir);
  EXPECT_NE(run.output.find("rw-mapping allowed"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("rwx-mapping refused 1"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("memfd refused 1"), std::string::npos) << run.output;
  // os.execve(fd) is fexecve: execveat(fd, "", AT_EMPTY_PATH).
  EXPECT_NE(run.output.find("fexecve refused 1"), std::string::npos) << run.output;
}

TEST(Confine, AllowJitLetsMemoryBeWritableAndExecutableButNeverAMemfd) {
  takosumi::testing::TempDir dir;
  auto args = shell({"/usr/bin"}, true, memory_probe());
  args.allow_jit = true;
  auto run = confine(args, dir);
  EXPECT_NE(run.output.find("rwx-mapping allowed"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("memfd refused 1"), std::string::npos) << run.output;
}

TEST(Landlock, TheKernelOffersAnAbiWithExecuteRights) {
  const auto support = probe_landlock();
  EXPECT_GE(support.abi, 1) << support.unavailable;
}

TEST(Confine, OnlyListedProgramsExecuteAndTheDynamicLoaderOnlyWhenAsked) {
  takosumi::testing::TempDir dir;
  // dash is allowed but is a dynamic program: without the loader it cannot start.
  auto no_loader = confine(shell({"/usr/bin/dash"}, false, "echo started"), dir);
  EXPECT_EQ(no_loader.exit_code, 127) << no_loader.output;
  EXPECT_NE(no_loader.output.find("takosumi-confine: exec /usr/bin/dash: Permission denied"),
            std::string::npos) << no_loader.output;
  auto with_loader = confine(shell({"/usr/bin/dash"}, true, "echo started; /usr/bin/true"), dir);
  EXPECT_NE(with_loader.output.find("started"), std::string::npos) << with_loader.output;
  EXPECT_NE(with_loader.exit_code, 0) << "true is not on the list, yet it ran";
  auto unlisted = confine(shell({"/usr/bin/true"}, true, "echo started"), dir);
  EXPECT_EQ(unlisted.exit_code, 127) << unlisted.output;
}

TEST(Confine, ACopyOfAnAllowedBinaryInAWritableDirectoryCannotExecute) {
  takosumi::testing::TempDir dir;
  const auto copy = (dir / "true").string();
  auto run = confine(shell({"/usr/bin"}, true,
                           "cp /usr/bin/true " + copy + " && chmod +x " + copy + " && /usr/bin/true && "
                           "echo original-ran && " + copy + "; echo copy-exit=$?"),
                     dir);
  EXPECT_NE(run.output.find("original-ran"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("Permission denied"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("copy-exit=126"), std::string::npos) << run.output;
}

TEST(Confine, TheSeccompFilterRefusesNewNamespaces) {
  takosumi::testing::TempDir dir;
  auto run = confine(shell({"/usr/bin"}, true, "unshare -U true; echo unshare-exit=$?"), dir);
  EXPECT_NE(run.output.find("Operation not permitted"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("unshare-exit=1"), std::string::npos) << run.output;
}

TEST(ElfInterpreter, NamesTheLoaderOfDynamicProgramsOnly) {
  auto dash = elf_interpreter("/usr/bin/dash");
  ASSERT_TRUE(dash) << dash.error();
  ASSERT_TRUE(*dash);
  EXPECT_NE((*dash)->find("ld-linux"), std::string::npos) << **dash;
  auto tofu = elf_interpreter(test_paths::tofu);
  ASSERT_TRUE(tofu) << tofu.error();
  EXPECT_FALSE(*tofu) << "tofu is statically linked";
  takosumi::testing::TempDir dir;
  std::ofstream(dir / "script") << "#!/bin/sh\necho hi\n";
  auto script = elf_interpreter((dir / "script").string());
  ASSERT_TRUE(script) << script.error();
  EXPECT_FALSE(*script);
  EXPECT_FALSE(elf_interpreter((dir / "missing").string()));
}

}  // namespace
}  // namespace takosumi::confine
