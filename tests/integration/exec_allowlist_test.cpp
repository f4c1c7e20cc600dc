// The kernel side of the Run policy, with the real agent, bubblewrap, takosumi-confine and
// OpenTofu: only tofu, the mirror's providers and (when the policy allows provisioners or external
// data) the listed interpreters execute; nothing a module ships or writes runs; the system calls a
// Run never needs are refused; /tmp and the process count are capped; and the plan tofu shows and
// applies is the agent's frozen copy, which the sandbox cannot change.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tests/support/probe_module.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

// The default sandbox section (bubblewrap, real_world() writable) with more_sandbox added.
StackOptions with_sandbox(const std::string& more_sandbox, const std::string& extra = "") {
  StackOptions o;
  o.sandbox_extra = more_sandbox;
  o.extra_agent_yaml = extra;
  return o;
}

// A shell function printing "<label>-RAN" when its command succeeds, "<label>-BLOCKED: <error>"
// otherwise. The markers are assembled at run time: tofu echoes the script itself into the log.
constexpr const char* kAttempt =
    "attempt() { if out=$(sh -c \"$2\" 2>&1); then echo \"$1-RAN\"; else echo \"$1-BLOCKED: $out\"; fi; }\n";

std::string attempt(const std::string& label, const std::string& cmd) {
  return "attempt " + label + " '" + cmd + "'\n";
}

TEST(ExecAllowlist, UnderTheDefaultPolicyTofuCannotStartGitForAModuleSource) {
  // git runs its helpers from /usr/lib/git-core.
  Stack stack(with_sandbox("  execAllow: [/bin/sh, /usr/bin, /usr/lib/git-core]\n"));
  TestGitRepo child(stack.real_world() / "child");  // the sandbox sees only real_world()
  child.commit({{"main.tf", "output \"x\" {\n  value = 1\n}\n"}});
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", "module \"m\" {\n  source = \"git::" + child.url() + "\"\n}\n"}});
  // Control: where the policy lets modules run programs, the interpreters (git among them) run.
  const auto allowed = stack.plan(probe_capsule(stack, repo));
  EXPECT_EQ(str(allowed, "status"), "succeeded") << json::serialize(allowed) << run_logs(stack, allowed);

  const auto plan = stack.plan(stack.create_capsule_from(json::object{
      {"name", "strict"},
      {"source", json::object{{"gitUrl", repo.url()}, {"ref", "main"}, {"modulePath", ""}}},
      {"outputAllowlist", json::object{}}}));
  EXPECT_EQ(str(plan, "status"), "failed") << json::serialize(plan);
  EXPECT_EQ(failure_code(plan), "opentofu_init_failed") << json::serialize(plan);
  const auto message = str(plan.at("failure").as_object(), "message");
  // go-getter reports the refused execve without its errno.
  EXPECT_NE(message.find("error running"), std::string::npos) << message;
  EXPECT_NE(message.find("/usr/bin/git:"), std::string::npos) << message;
}

TEST(ExecAllowlist, WithProvisionersAllowedButNoShellInExecAllowALocalExecFails) {
  Stack stack(with_sandbox("  execAllow: [/usr/bin/true]\n"));
  const fs::path marker = stack.real_world() / "ran.marker";
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", provisioner_module("touch " + marker.string())}});
  const auto applied = plan_and_apply(stack, probe_capsule(stack, repo));
  EXPECT_EQ(str(applied, "status"), "failed") << json::serialize(applied);
  EXPECT_EQ(failure_code(applied), "exec_denied") << json::serialize(applied);
  const auto message = str(applied.at("failure").as_object(), "message");
  EXPECT_NE(message.find("refused to start \"/bin/sh\""), std::string::npos) << message;
  EXPECT_NE(run_logs(stack, applied).find("permission denied"), std::string::npos)
      << run_logs(stack, applied);
  EXPECT_FALSE(fs::exists(marker)) << "the provisioner's shell ran";
}

// A module that ships a script and runs it (`local-exec` of "./run.sh", as published modules do):
// the Run's failure says the exec allowlist stopped it and what to do; run through the allowed
// interpreter, the same script works.
TEST(ExecAllowlist, AShippedScriptIsRefusedInWordsAndRunsThroughAnInterpreter) {
  Stack stack;
  const fs::path marker = stack.real_world() / "script.marker";
  const auto module = [&](const std::string& interpreter) {
    return "resource \"terraform_data\" \"s\" {\n  provisioner \"local-exec\" {\n"
           "    command = \"./run.sh\"\n" + interpreter + "  }\n}\n";
  };
  const std::string script = "#!/bin/sh\ntouch " + marker.string() + "\n";
  const auto capsule = [&](TestGitRepo& repo, const std::string& name) {
    return stack.create_capsule_from(json::object{
        {"name", name},
        {"source", json::object{{"gitUrl", repo.url()}, {"ref", "main"}}},
        {"policy", json::object{{"allowProvisioners", true}}}});
  };
  TestGitRepo direct(stack.root() / "direct");
  direct.commit({{"main.tf", module("")}, {"run.sh*", script}});
  const auto refused = plan_and_apply(stack, capsule(direct, "direct"));
  EXPECT_EQ(failure_code(refused), "exec_denied") << json::serialize(refused);
  const auto message = str(refused.at("failure").as_object(), "message");
  for (const char* words : {"refused to start \"./run.sh\"", "files of the checkout", "interpreter",
                            "sandbox.execAllow"})
    EXPECT_NE(message.find(words), std::string::npos) << words << ": " << message;
  EXPECT_FALSE(fs::exists(marker));

  TestGitRepo interpreted(stack.root() / "interpreted");
  interpreted.commit({{"main.tf", module("    interpreter = [\"/bin/sh\"]\n")}, {"run.sh*", script}});
  const auto applied = plan_and_apply(stack, capsule(interpreted, "interpreted"));
  EXPECT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied) << run_logs(stack, applied);
  EXPECT_TRUE(fs::exists(marker));
}

TEST(ExecAllowlist, AModuleCannotRunABinaryItShipsOrWrites) {
  Stack stack;
  std::ifstream touch("/usr/bin/touch", std::ios::binary);
  const std::string binary((std::istreambuf_iterator<char>(touch)), {});
  ASSERT_FALSE(binary.empty());
  const fs::path world = stack.real_world();
  std::string script = std::string(kAttempt) + attempt("CONTROL", "/usr/bin/touch " + (world / "control").string()) +
                       attempt("SHIPPED", "./tool " + (world / "shipped").string()) +
                       "cp /usr/bin/touch ./written && chmod +x ./written\n" +
                       attempt("WRITTEN", "./written " + (world / "written").string()) +
                       "cp /usr/bin/touch /tmp/tmp-written && chmod +x /tmp/tmp-written\n" +
                       attempt("TMP", "/tmp/tmp-written " + (world / "tmp").string());
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", provisioner_module(script)}, {"tool*", binary}});
  const auto applied = plan_and_apply(stack, probe_capsule(stack, repo));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  const auto logs = run_logs(stack, applied);
  EXPECT_NE(logs.find("CONTROL-RAN"), std::string::npos) << logs;
  EXPECT_TRUE(fs::exists(world / "control"));
  for (const char* label : {"SHIPPED", "WRITTEN", "TMP"}) {
    EXPECT_NE(logs.find(std::string(label) + "-BLOCKED"), std::string::npos) << label << "\n" << logs;
    EXPECT_EQ(logs.find(std::string(label) + "-RAN"), std::string::npos) << label << " ran";
  }
  for (const char* marker : {"shipped", "written", "tmp"})
    EXPECT_FALSE(fs::exists(world / marker)) << marker;
}

// With provisioners and /bin/sh allowed, code the module brings still cannot run: not a committed
// ELF, nor a copy local_file wrote, nor copies in /tmp or /dev/shm, directly or through the
// dynamic loader (which only maps the file), nor code written to a memfd and run through its
// descriptor or its /proc path, nor code written past page protections through /proc/self/mem.
// Every writable mount is noexec, memfds do not exist and /proc opens for reading only.
TEST(ExecAllowlist, CodeFromAWritablePlaceOrFromMemoryNeverRuns) {
  Stack stack;
  std::ifstream touch("/usr/bin/touch", std::ios::binary);
  const std::string binary((std::istreambuf_iterator<char>(touch)), {});
  ASSERT_FALSE(binary.empty());
  const fs::path world = stack.real_world();
  const std::string loader = "/lib64/ld-linux-x86-64.so.2";
  ASSERT_TRUE(fs::exists(loader));
  const auto tries = [&](const std::string& label, const std::string& file) {
    return attempt(label, file + " " + (world / label).string()) +
           attempt(label + "-LOADER", loader + " " + file + " " + (world / (label + "-LOADER")).string());
  };
  // A memfd holding touch, executed by descriptor (fexecve) and by its /proc path. Markers are
  // assembled at run time: tofu echoes the script into the log.
  const std::string memfd =
      "python3 -c 'import os, sys\n"
      "try:\n"
      "    fd = os.memfd_create(\"x\", 0)\n"
      "except OSError as e:\n"
      "    print(\"MEMFD\" + \"-BLOCKED:\", e); sys.exit(0)\n"
      "os.write(fd, open(\"/usr/bin/touch\", \"rb\").read())\n"
      "try:\n"
      "    os.execve(fd, [\"x\", sys.argv[1]], {})\n"
      "except OSError as e:\n"
      "    print(\"MEMFD-FEXECVE\" + \"-BLOCKED:\", e)\n"
      "os.execv(\"/proc/self/fd/%d\" % fd, [\"x\", sys.argv[1]])' " + (world / "MEMFD").string() + " 2>&1\n";
  std::string script = std::string(kAttempt) +
                       attempt("CONTROL", "/usr/bin/touch " + (world / "CONTROL").string()) +
                       tries("SHIPPED", "./tool") + tries("PROVIDER-WRITTEN", "./written-by-local-file") +
                       "cp /usr/bin/touch /tmp/copy && chmod +x /tmp/copy\n" + tries("TMP", "/tmp/copy") +
                       "cp /usr/bin/touch /dev/shm/copy && chmod +x /dev/shm/copy\n" +
                       tries("SHM", "/dev/shm/copy") + memfd +
                       attempt("PROCMEM", "exec 3<>/proc/self/mem");
  const std::string written =
      "resource \"local_file\" \"copy\" {\n"
      "  filename        = \"${path.module}/written-by-local-file\"\n"
      "  content_base64  = filebase64(\"${path.module}/tool\")\n"
      "  file_permission = \"0755\"\n"
      "}\n";
  std::string module = provisioner_module(script, written);
  // The provisioner runs once the provider has written its copy.
  const std::string head = "resource \"null_resource\" \"probe\" {";
  module.replace(module.find(head), head.size(), head + "\n  depends_on = [local_file.copy]");
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", module}, {"tool*", binary}});
  const auto applied = plan_and_apply(stack, probe_capsule(stack, repo));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied) << run_logs(stack, applied);
  const auto logs = run_logs(stack, applied);
  EXPECT_NE(logs.find("CONTROL-RAN"), std::string::npos) << logs;
  EXPECT_TRUE(fs::exists(world / "CONTROL"));
  for (const std::string label : {"SHIPPED", "PROVIDER-WRITTEN", "TMP", "SHM"})
    for (const std::string way : {"", "-LOADER"}) {
      EXPECT_NE(logs.find(label + way + "-BLOCKED"), std::string::npos) << label + way << "\n" << logs;
      EXPECT_EQ(logs.find(label + way + "-RAN"), std::string::npos) << label + way << " ran";
      EXPECT_FALSE(fs::exists(world / (label + way))) << label + way;
    }
  EXPECT_NE(logs.find("MEMFD-BLOCKED"), std::string::npos) << logs;
  EXPECT_NE(logs.find("PROCMEM-BLOCKED"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("PROCMEM-RAN"), std::string::npos) << logs;
  EXPECT_FALSE(fs::exists(world / "MEMFD"));
}

TEST(ExecAllowlist, TcpConnectReachesOnlyTheListedPorts) {
  LoopbackListener listener;
  Stack stack(with_sandbox("  tcpConnectPorts: [443]\n"));
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", provisioner_module(connect_probe(listener.port()))}});
  const auto applied = plan_and_apply(stack, probe_capsule(stack, repo));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  const auto logs = run_logs(stack, applied);
  EXPECT_NE(logs.find("(local-exec): NETWORK-REFUSED"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("(local-exec): NETWORK-CONNECTED"), std::string::npos) << logs;
}

TEST(Seccomp, SystemCallsARunNeverNeedsAreRefused) {
  Stack stack;
  // x86-64 numbers; python's ctypes makes the raw calls with harmless arguments.
  const std::string probe =
      "python3 - <<'PY'\n"
      "import ctypes, os\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "calls = {'getpid': 39, 'keyctl': 250, 'add_key': 248, 'bpf': 321, 'perf_event_open': 298,\n"
      "         'userfaultfd': 323, 'unshare': 272, 'setns': 308, 'mount': 165, 'ptrace': 101,\n"
      "         'io_uring_setup': 425, 'kexec_load': 246, 'init_module': 175, 'clone3': 435}\n"
      "for name, nr in calls.items():\n"
      "    r = libc.syscall(nr, 0, 0, 0, 0, 0)\n"
      "    print('SYSCALL %s %s' % (name, 'ok' if r >= 0 else os.strerror(ctypes.get_errno()).replace(' ', '_')))\n"
      "PY";
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", provisioner_module(probe)}});
  const auto applied = plan_and_apply(stack, probe_capsule(stack, repo));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  const auto logs = run_logs(stack, applied);
  EXPECT_NE(logs.find("SYSCALL getpid ok"), std::string::npos) << logs;
  for (const char* name : {"keyctl", "add_key", "bpf", "perf_event_open", "userfaultfd", "unshare",
                           "setns", "mount", "ptrace", "io_uring_setup", "kexec_load", "init_module"})
    EXPECT_NE(logs.find(std::string("SYSCALL ") + name + " Operation_not_permitted"), std::string::npos)
        << name << "\n" << logs;
  EXPECT_NE(logs.find("SYSCALL clone3 Function_not_implemented"), std::string::npos) << logs;
}

TEST(SandboxLimits, TmpIsSizeCappedAndDevIsReadOnly) {
  Stack stack(with_sandbox("", "limits:\n  tmpMiB: 8\n"));
  const std::string script = std::string(kAttempt) +
      attempt("TMP-SMALL", "dd if=/dev/zero of=/tmp/small bs=1M count=4") +
      attempt("TMP-LARGE", "dd if=/dev/zero of=/tmp/large bs=1M count=12") +
      "rm -f /tmp/small /tmp/large\n" +
      attempt("VARTMP-LARGE", "dd if=/dev/zero of=/var/tmp/large bs=1M count=12") +
      attempt("SHM-LARGE", "dd if=/dev/zero of=/dev/shm/large bs=1M count=32") +
      attempt("DEV-WRITE", "touch /dev/planted") +
      attempt("WORKSPACE-LARGE", "dd if=/dev/zero of=./large bs=1M count=12");
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", provisioner_module(script)}});
  const auto applied = plan_and_apply(stack, probe_capsule(stack, repo));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  const auto logs = run_logs(stack, applied);
  for (const char* ran : {"TMP-SMALL-RAN", "WORKSPACE-LARGE-RAN"})
    EXPECT_NE(logs.find(ran), std::string::npos) << ran << "\n" << logs;
  for (const char* blocked : {"TMP-LARGE-BLOCKED", "VARTMP-LARGE-BLOCKED", "SHM-LARGE-BLOCKED",
                              "DEV-WRITE-BLOCKED"})
    EXPECT_NE(logs.find(blocked), std::string::npos) << blocked << "\n" << logs;
}

// Memory and workspace limits hold by default; here lowered so a probe passes them quickly. Each
// Run that goes past one fails limit_exceeded naming the limit, and the agent goes on.
TEST(SandboxLimits, ARunPastItsMemoryOrWorkspaceLimitFailsNamingItAndTheAgentGoesOn) {
  Stack stack(with_sandbox("", "limits:\n  memoryMiB: 512\n  workspaceMiB: 64\n"));
  const auto capsule = [&](const std::string& name, const std::string& main_tf) {
    TestGitRepo repo(stack.root() / name);
    repo.commit({{"main.tf", main_tf}});
    return stack.create_capsule_from(json::object{
        {"name", name},
        {"source", json::object{{"gitUrl", repo.url()}, {"ref", "main"}, {"modulePath", ""}}},
        {"outputAllowlist", json::object{}},
        {"policy", json::object{{"allowProvisioners", true}}}});
  };
  const auto run = [&](const std::string& name, const std::string& script) {
    return plan_and_apply(stack, capsule(name, provisioner_module(script)));
  };
  const auto hog = run("hog", "python3 -c 'x = bytearray(2 << 30); x[::4096] = b\"x\" * len(x[::4096])'");
  EXPECT_EQ(str(hog, "status"), "failed") << json::serialize(hog);
  EXPECT_EQ(failure_code(hog), "limit_exceeded") << json::serialize(hog);
  EXPECT_NE(str(hog.at("failure").as_object(), "message").find("limits.memoryMiB: 512"), std::string::npos)
      << json::serialize(hog);
  const auto many = run("many", "for i in $(seq 40); do head -c 4194304 /dev/zero > ./fill-$i; done; "
                                "echo FILLED; sleep 120");
  EXPECT_EQ(failure_code(many), "limit_exceeded") << json::serialize(many);
  EXPECT_NE(str(many.at("failure").as_object(), "message").find("past its limit (limits.workspaceMiB: 64 MiB)"),
            std::string::npos)
      << json::serialize(many);
  const auto one = run("one", "head -c 209715200 /dev/zero > ./one-big-file");
  EXPECT_EQ(failure_code(one), "limit_exceeded") << json::serialize(one) << run_logs(stack, one);
  EXPECT_NE(str(one.at("failure").as_object(), "message").find("limits.workspaceMiB: 64"), std::string::npos)
      << json::serialize(one);
  // The agent is fine: the next Run goes through.
  const auto ok = plan_and_apply(stack, capsule("fine", "resource \"terraform_data\" \"x\" {\n  input = \"ok\"\n}\n"));
  EXPECT_EQ(str(ok, "status"), "succeeded") << json::serialize(ok) << stack.agent_logs();
}

TEST(SandboxLimits, AForkBombStopsAtTheRunsProcessLimit) {
  Stack stack(with_sandbox("", "limits:\n  maxProcesses: 200\n"));
  // dash gives up at the first failed fork ("Cannot fork") instead of retrying like bash.
  const std::string script =
      "( i=0; while [ $i -lt 400 ]; do sleep 3174 >/dev/null 2>&1 & i=$((i+1)); done; "
      "echo FORKED-\"ALL\" ) 2>&1\n"
      "echo FORK-DONE";
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", provisioner_module(script)}});
  const auto applied = plan_and_apply(stack, probe_capsule(stack, repo));
  const auto logs = run_logs(stack, applied);
  EXPECT_EQ(logs.find("FORKED-ALL"), std::string::npos) << logs;
  EXPECT_NE(logs.find("Cannot fork"), std::string::npos) << json::serialize(applied) << logs;
  EXPECT_FALSE(process_running("sleep 3174")) << "processes of the Run survived it";
}

TEST(PlanIntegrity, TheSandboxCannotChangeThePlanTofuAppliesOrTheCliConfig) {
  Stack stack;
  // The module directory is <workspace>/src; the agent's own files are in <workspace>/agent.
  const std::string script = std::string(kAttempt) +
                             attempt("PLAN-WRITE", "echo x >> ../agent/run.tfplan") +
                             attempt("PLAN-REMOVE", "rm ../agent/run.tfplan") +
                             attempt("CONFIG-WRITE", "echo x >> ../agent/tofurc") +
                             attempt("DIR-RENAME", "mv ../agent ../agent-moved");
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", provisioner_module(script)}});
  const auto capsule = probe_capsule(stack, repo);
  const auto plan = stack.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan);
  const auto applied = stack.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  const auto logs = run_logs(stack, applied);
  for (const char* label : {"PLAN-WRITE", "PLAN-REMOVE", "CONFIG-WRITE", "DIR-RENAME"})
    EXPECT_NE(logs.find(std::string(label) + "-BLOCKED"), std::string::npos) << label << "\n" << logs;
  EXPECT_FALSE(str(plan, "planDigest").empty()) << json::serialize(plan);
  EXPECT_EQ(str(applied, "planDigest"), str(plan, "planDigest")) << json::serialize(applied);
}

// The attack of issue 33: during `tofu plan` a module's program turns the plan file into a FIFO;
// tofu's write blocks while the program makes a second plan (evil = true), puts it where the
// plan file was and drains tofu's bytes. tofu printed the benign plan; the file left is the evil
// one. What the log shows is rendered from the frozen file, so the reviewer reads what the apply
// runs, and tofu's own description of the benign plan is not shown at all.
TEST(PlanIntegrity, TheLogShowsThePlanThatIsSealedEvenWhenTheFileIsSwappedUnderTofu) {
  Stack stack;
  const std::string module = R"(
variable "evil" {
  type    = bool
  default = false
}
variable "tofu" { type = string }
variable "out" { type = string }
resource "local_file" "f" {
  filename = "${var.out}/f.txt"
  content  = var.evil ? "EVIL" : "benign"
}
data "local_command" "swap" {
  count     = var.evil ? 0 : 1
  command   = "/bin/sh"
  arguments = ["-c", file("${path.module}/swap.sh"), "swap", var.tofu]
}
)";
  const std::string swap = R"(ws=$(cd .. && pwd)
(
  exec </dev/null >/dev/null 2>&1
  rm -f "$ws/run.tfplan" && mkfifo "$ws/run.tfplan" || exit 1
  "$1" plan -lock=false -input=false -var=evil=true -out="$ws/evil.tfplan" || exit 1
  exec 3<"$ws/run.tfplan"
  mv "$ws/evil.tfplan" "$ws/run.tfplan"
  cat <&3 >/dev/null
) &
echo started
)";
  // More than a pipe holds (64 KiB, compressed in the plan's zip): tofu's write must block.
  std::string padding;
  std::uint32_t x = 88172645u;
  for (int line = 0; line < 4000; ++line) {
    padding += "# ";
    for (int i = 0; i < 8; ++i) {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;
      char hex[9];
      std::snprintf(hex, sizeof hex, "%08x", x);
      padding += hex;
    }
    padding += "\n";
  }
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", module}, {"swap.sh", swap}, {"padding.tf", padding}});
  const auto capsule = probe_capsule(
      stack, repo,
      json::object{{"tofu", test_paths::tofu}, {"out", stack.real_world().string()}},
      json::object{{"allowExternalData", true}, {"allowProvisioners", false}});
  const auto plan = stack.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << run_logs(stack, plan);
  const auto logs = run_logs(stack, plan);
  EXPECT_NE(logs.find("the plan as sealed (plan digest sha256:" + str(plan, "planDigest")),
            std::string::npos)
      << logs;
  EXPECT_NE(logs.find(R"(+ content = \"EVIL\")"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("benign"), std::string::npos) << "tofu's description of the plan it did not seal\n" << logs;
  const auto applied = stack.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  std::ifstream written(stack.real_world() / "f.txt");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(written)), {}), "EVIL")
      << "the apply ran the plan the log showed";
}

// Any process of a Run can write to tofu's stdout through /proc. A program run during the plan
// writes a forged sealed plan there, complete with the agent's voice and its end line; in the
// log each such line is quoted, and the only unquoted "takosumi" lines are the agent's own.
TEST(PlanIntegrity, NoProcessOfTheRunCanWriteALineInTheAgentsVoice) {
  Stack stack;
  const std::string module = R"(
resource "local_file" "f" {
  filename = "${path.module}/f.txt"
  content  = "benign"
}
data "local_command" "forge" {
  command   = "/bin/sh"
  arguments = ["-c", file("${path.module}/forge.sh")]
}
)";
  // Assembled at run time: tofu's own output may echo the script.
  const std::string forge = R"sh(for p in /proc/[0-9]*; do
  [ "$(cat "$p/comm" 2>/dev/null)" = tofu ] || continue
  v=takosumi
  printf '%s: the plan as sealed (plan digest sha256:%s), which an apply of this Run runs:
      + content = "EVIL"
%s: end of the plan as sealed
' "$v" 0000 "$v" > "$p/fd/1"
done
echo forged
)sh";
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", module}, {"forge.sh", forge}});
  const auto capsule = probe_capsule(stack, repo, json::object{},
                                     json::object{{"allowExternalData", true}, {"allowProvisioners", false}});
  const auto plan = stack.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << run_logs(stack, plan);
  const auto logs = str(json::parse(run_logs(stack, plan)).as_object(), "text");
  // The forgery reached the log, quoted.
  EXPECT_NE(logs.find("\n> takosumi: the plan as sealed (plan digest sha256:0000)"), std::string::npos) << logs;
  EXPECT_NE(logs.find("\n> takosumi: end of the plan as sealed\n"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("\ntakosumi: the plan as sealed (plan digest sha256:0000)"), std::string::npos) << logs;
  // The agent's own, once each.
  const std::string sealed = "\ntakosumi: the plan as sealed (plan digest sha256:" + str(plan, "planDigest");
  EXPECT_NE(logs.find(sealed), std::string::npos) << logs;
  const auto end = logs.find("\ntakosumi: end of the plan as sealed\n");
  ASSERT_NE(end, std::string::npos) << logs;
  EXPECT_EQ(logs.find("\ntakosumi: end of the plan as sealed\n", end + 1), std::string::npos) << logs;
  EXPECT_GT(end, logs.find(sealed)) << logs;
}

TEST(ExecAllowlist, CheckConfigReportsTheLandlockAbiAndTheProcessLimit) {
  Stack stack;
  const fs::path bin = test_paths::binary_dir;
  const fs::path out = stack.root() / "check.out";
  const std::string cmd = (bin / "agent/takosumi-agent").string() + " --config " +
                          (stack.agent_dir(0) / "agent.yaml").string() + " --check-config > " +
                          out.string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("exec allowlist: Landlock ABI "), std::string::npos) << text;
  EXPECT_NE(text.find("process limit: 512 tasks per Run"), std::string::npos) << text;
  EXPECT_NE(text.find("private /tmp: 512 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("memory limit: 2048 MiB per Run"), std::string::npos) << text;
  EXPECT_NE(text.find("workspace limit: 4096 MiB per Run"), std::string::npos) << text;
}

}  // namespace
}  // namespace takosumi::testing
