#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>

#include "runner/sandbox.hpp"
#include "runner/worker_launch.hpp"
#include "runner/worker_process.hpp"

namespace kforge::runner {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kPython = "/usr/bin/python3";
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// A layer is active when its status starts with "on".
bool layer_on(const nlohmann::json& status, const char* layer) {
  return status["layers"].value(layer, "").starts_with("on");
}

// Why a test cannot prove anything here: the layer it needs is not active on this machine.
std::string inactive(const nlohmann::json& status, const char* layer) {
  if (layer_on(status, layer)) {
    return "";
  }
  return std::string(layer) + " is not active on this machine: " + status["layers"].value(layer, "missing");
}

bool python_missing() { return access(kPython, X_OK) != 0; }

// A throwaway process standing in for the judge: the candidate must not signal or inspect it.
class FakeJudge {
 public:
  FakeJudge() : pid_(fork()) {
    if (pid_ == 0) {
      pause();
      _exit(0);
    }
  }
  FakeJudge(const FakeJudge&) = delete;
  FakeJudge& operator=(const FakeJudge&) = delete;
  FakeJudge(FakeJudge&&) = delete;
  FakeJudge& operator=(FakeJudge&&) = delete;
  ~FakeJudge() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
};

class Sandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "kforge-sandbox-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directories(private_dir());
    fs::create_directories(root_ / "problem");
    std::ofstream(problem_file()) << "SECRET_REFERENCE = 42\n";
  }
  void TearDown() override {
    std::error_code error;
    fs::remove_all(root_, error);
  }

  fs::path private_dir() const { return root_ / "candidate"; }
  fs::path problem_file() const { return root_ / "problem" / "problem.py"; }

  // Like the candidate's policy, with the system read-only and only the private folder writable.
  SandboxPolicy policy() const {
    SandboxPolicy policy;
    policy.mode = SandboxMode::best_effort;
    for (const char* tree : {"/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys"}) {
      policy.read_only_paths.emplace_back(tree);
    }
    policy.read_write_paths = {private_dir(), "/dev/null", "/dev/zero", "/dev/urandom", "/dev/shm"};
    policy.must_stay_unreadable = {problem_file()};
    policy.protected_pids = {judge_.pid()};
    policy.budget.open_files = 1024;
    policy.budget.cpu_seconds = 600;
    policy.budget.file_size_bytes = 64 * kMiB;
    policy.budget.processes = 1024;
    policy.budget.resident_bytes = 4096 * kMiB;
    return policy;
  }

  WorkerLaunch launch(const std::string& executable, std::vector<std::string> arguments,
                      const SandboxPolicy& sandbox) const {
    WorkerLaunch launch;
    launch.executable = executable;
    launch.arguments = std::move(arguments);
    launch.environment = {{"PATH", "/usr/bin:/bin"}, {"TMPDIR", private_dir().string()}};
    launch.working_directory = private_dir();
    launch.sandbox = sandbox;
    return launch;
  }

  // Runs a shell script in the sandbox; it reads one request on fd 3 and writes its reply on fd 4.
  nlohmann::json run_shell(const std::string& script, const SandboxPolicy& sandbox) {
    auto worker = WorkerProcess::start(launch("/bin/sh", {"-c", "read -r line <&3; " + script}, sandbox));
    status_ = worker.sandbox_status();
    auto reply = worker.call({{"op", "probe"}}, 20s);
    if (!std::holds_alternative<nlohmann::json>(reply)) {
      ADD_FAILURE() << "no reply: " << std::get<WorkerFailure>(reply).message << "\nlog:\n"
                    << worker.log_tail();
      return nullptr;
    }
    return std::get<nlohmann::json>(reply);
  }

  // Runs Python code in the sandbox; `reply(dict)` sends the answer.
  nlohmann::json run_python(const std::string& code, const SandboxPolicy& sandbox) {
    const std::string program =
        "import json, os\nos.read(3, 65536)\n"
        "def reply(value):\n    os.write(4, (json.dumps(value) + '\\n').encode())\n" +
        code;
    auto worker = WorkerProcess::start(launch(kPython, {"-I", "-c", program}, sandbox));
    status_ = worker.sandbox_status();
    auto reply = worker.call({{"op", "probe"}}, 30s);
    if (!std::holds_alternative<nlohmann::json>(reply)) {
      ADD_FAILURE() << "no reply: " << std::get<WorkerFailure>(reply).message << "\nlog:\n"
                    << worker.log_tail();
      return nullptr;
    }
    return std::get<nlohmann::json>(reply);
  }

  const nlohmann::json& status() const { return status_; }

  fs::path root_;
  FakeJudge judge_;
  nlohmann::json status_;
};

TEST_F(Sandbox, ReportsEveryLayer) {
  const auto reply = run_shell("echo '{\"ok\":true}' >&4", policy());
  ASSERT_TRUE(reply.is_object());
  std::cout << "sandbox status on this machine: " << status().dump(2) << "\n";
  EXPECT_EQ(status()["mode"], "best-effort");
  for (const char* layer :
       {kLayerNamespaces, kLayerRlimits, kLayerCapabilities, kLayerLandlock, kLayerLandlockScopes,
        kLayerSeccomp, kLayerMemoryWatchdog, "no_new_privs", "environment"}) {
    ASSERT_TRUE(status()["layers"].contains(layer)) << layer;
    const std::string value = status()["layers"][layer];
    EXPECT_TRUE(value.starts_with("on") || value.starts_with("off") || value.starts_with("unavailable") ||
                value.starts_with("failed"))
        << layer << ": " << value;
  }
}

TEST_F(Sandbox, RefusesInternetSocketsButKeepsUnixSockets) {
  if (python_missing()) {
    GTEST_SKIP() << kPython << " is not installed: the Python probes need it";
  }
  const auto reply = run_python(R"(
import socket
def attempt(family, kind):
    try:
        socket.socket(family, kind).close()
        return "created"
    except OSError as exc:
        return f"errno {exc.errno}"
reply({"tcp": attempt(socket.AF_INET, socket.SOCK_STREAM), "udp6": attempt(socket.AF_INET6, socket.SOCK_DGRAM),
       "unix": attempt(socket.AF_UNIX, socket.SOCK_STREAM)})
)",
                                policy());
  ASSERT_TRUE(reply.is_object());
  if (!layer_on(status(), kLayerSeccomp)) {
    GTEST_SKIP() << "seccomp is not active: " << status()["layers"][kLayerSeccomp];
  }
  EXPECT_EQ(reply["tcp"], "errno 1") << "TCP sockets must fail with EPERM";
  EXPECT_EQ(reply["udp6"], "errno 1");
  EXPECT_EQ(reply["unix"], "created") << "AF_UNIX is the positive control";
}

TEST_F(Sandbox, NetworkNamespaceHasOnlyLoopback) {
  const auto reply = run_shell(
      R"(n=$(tail -n +3 /proc/net/dev | grep -vc '^ *lo:'); echo "{\"interfaces\":$n}" >&4)", policy());
  ASSERT_TRUE(reply.is_object());
  if (const auto why = inactive(status(), kLayerNamespaces); !why.empty()) {
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(reply["interfaces"], 0) << "a new network namespace has no interface but lo";
}

TEST_F(Sandbox, WritesOnlyInsideThePrivateFolder) {
  fs::create_directories(root_ / "outside");
  const auto reply = run_shell(
      "echo x > \"$TMPDIR/inside\" && i=1 || i=0; "
      "echo x > " +
          (root_ / "outside" / "file").string() +
          " 2>/dev/null && o=1 || o=0; "
          "echo x > /tmp/kforge-sandbox-escape-$$ 2>/dev/null && t=1 || t=0; "
          "rm -f /tmp/kforge-sandbox-escape-$$; "
          "echo \"{\\\"inside\\\":$i,\\\"outside\\\":$o,\\\"tmp\\\":$t}\" >&4",
      policy());
  ASSERT_TRUE(reply.is_object());
  EXPECT_EQ(reply["inside"], 1) << "the private folder is the positive control";
  if (const auto why = inactive(status(), kLayerLandlock); !why.empty()) {
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(reply["outside"], 0);
  EXPECT_EQ(reply["tmp"], 0);
  EXPECT_FALSE(fs::exists(root_ / "outside" / "file"));
}

TEST_F(Sandbox, CannotReadTheProblemFile) {
  const auto reply = run_shell("cat " + problem_file().string() +
                                   " >/dev/null 2>&1 && p=1 || p=0; "
                                   "ls " +
                                   problem_file().parent_path().string() +
                                   " >/dev/null 2>&1 && l=1 || l=0; "
                                   "cat /etc/passwd >/dev/null 2>&1 && e=1 || e=0; "
                                   "echo \"{\\\"problem\\\":$p,\\\"listing\\\":$l,\\\"etc\\\":$e}\" >&4",
                               policy());
  ASSERT_TRUE(reply.is_object());
  EXPECT_EQ(reply["etc"], 1) << "a read-only system file is the positive control";
  if (const auto why = inactive(status(), kLayerLandlock); !why.empty()) {
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(reply["problem"], 0) << "the problem file must not be readable";
  EXPECT_EQ(reply["listing"], 0) << "nor its folder listable";
}

TEST_F(Sandbox, WarnsWhenTheProblemLiesUnderAReadablePath) {
  auto risky = policy();
  risky.read_only_paths.push_back(root_ / "problem");
  const auto reply = run_shell("echo '{\"ok\":true}' >&4", risky);
  ASSERT_TRUE(reply.is_object());
  if (const auto why = inactive(status(), kLayerLandlock); !why.empty()) {
    GTEST_SKIP() << why;
  }
  ASSERT_FALSE(status()["warnings"].empty());
  EXPECT_NE(status()["warnings"][0].get<std::string>().find("problem.py is readable"), std::string::npos);
}

TEST_F(Sandbox, CannotInspectOrSignalKforgeOrTheJudge) {
  const auto judge = std::to_string(judge_.pid());
  const auto supervisor = std::to_string(getpid());
  const auto reply = run_shell("kill -0 " + supervisor +
                                   " 2>/dev/null && s=1 || s=0; "
                                   "kill -0 " +
                                   judge +
                                   " 2>/dev/null && j=1 || j=0; "
                                   "kill -0 -- -1 2>/dev/null && a=1 || a=0; "
                                   "kill -0 $$ 2>/dev/null && self=1 || self=0; "
                                   "cat /proc/" +
                                   judge +
                                   "/environ >/dev/null 2>&1 && m=1 || m=0; "
                                   "echo "
                                   "\"{\\\"supervisor\\\":$s,\\\"judge\\\":$j,\\\"all\\\":$a,\\\"self\\\":$"
                                   "self,\\\"judge_environ\\\":$m}\" >&4",
                               policy());
  ASSERT_TRUE(reply.is_object());
  EXPECT_EQ(reply["self"], 1) << "signalling itself is the positive control";
  if (!layer_on(status(), kLayerSeccomp) && !layer_on(status(), kLayerLandlockScopes)) {
    GTEST_SKIP() << "neither seccomp nor Landlock scopes are active";
  }
  EXPECT_EQ(reply["supervisor"], 0);
  EXPECT_EQ(reply["judge"], 0);
  EXPECT_EQ(reply["all"], 0);
  if (const auto why = inactive(status(), kLayerLandlock); !why.empty()) {
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(reply["judge_environ"], 0) << "Landlock denies ptrace access to processes outside the sandbox";
}

TEST_F(Sandbox, SeccompRefusesPtraceNamespacesAndMounts) {
  if (python_missing()) {
    GTEST_SKIP() << kPython << " is not installed: the Python probes need it";
  }
  const auto reply = run_python(R"(
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    result = getattr(libc, name)(*args)
    return 0 if result == 0 else ctypes.get_errno()
reply({"ptrace": call("ptrace", 0, 0, 0, 0), "unshare": call("unshare", 0x40000000),
       "mount": call("mount", b"none", b"/mnt", b"tmpfs", 0, None), "setpgid": call("setpgid", 0, 0)})
)",
                                policy());
  ASSERT_TRUE(reply.is_object());
  if (const auto why = inactive(status(), kLayerSeccomp); !why.empty()) {
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(reply["ptrace"], EPERM) << "PTRACE_TRACEME";
  EXPECT_EQ(reply["unshare"], EPERM) << "unshare(CLONE_NEWNET)";
  EXPECT_EQ(reply["mount"], EPERM);
  EXPECT_EQ(reply["setpgid"], EPERM) << "leaving the process group would escape the kill";
}

TEST_F(Sandbox, AppliesResourceLimits) {
  const auto reply = run_shell(
      R"(echo "{\"nofile\":$(ulimit -n),\"core\":$(ulimit -c),\"cpu\":$(ulimit -t)}" >&4)", policy());
  ASSERT_TRUE(reply.is_object());
  if (const auto why = inactive(status(), kLayerRlimits); !why.empty()) {
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(reply["nofile"], 1024);
  EXPECT_EQ(reply["core"], 0);
  EXPECT_EQ(reply["cpu"], 600);
}

TEST_F(Sandbox, FileSizeLimitStopsAHugeFile) {
  const auto reply = run_shell(
      "(head -c 100000000 /dev/zero > \"$TMPDIR/big\") 2>/dev/null; "
      "echo \"{\\\"bytes\\\":$(wc -c < \"$TMPDIR/big\")}\" >&4",
      policy());
  ASSERT_TRUE(reply.is_object());
  if (const auto why = inactive(status(), kLayerRlimits); !why.empty()) {
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(reply["bytes"], 64 * kMiB) << "RLIMIT_FSIZE stops the file at 64 MiB";
}

TEST_F(Sandbox, MemoryWatchdogKillsAGreedyProcessGroup) {
  if (python_missing()) {
    GTEST_SKIP() << kPython << " is not installed: the Python probes need it";
  }
  auto small = policy();
  small.budget.resident_bytes = 128 * kMiB;
  // The hog is a child, so only the group scan sees it.
  auto worker = WorkerProcess::start(launch(
      kPython,
      {"-I", "-c",
       "import os, time, subprocess, sys\nos.read(3, 100)\n"
       "subprocess.run([sys.executable, '-c', 'import time; b = b\"x\" * (512 << 20); time.sleep(60)'])\n"},
      small));
  ASSERT_TRUE(layer_on(worker.sandbox_status(), kLayerMemoryWatchdog));
  auto reply = worker.call({{"op", "hog"}}, 30s);
  ASSERT_TRUE(std::holds_alternative<WorkerFailure>(reply));
  const auto& failure = std::get<WorkerFailure>(reply);
  EXPECT_EQ(failure.kind, WorkerFailureKind::memory_limit);
  EXPECT_EQ(failure.signal, SIGKILL);
  EXPECT_NE(failure.message.find("memory limit exceeded"), std::string::npos) << failure.message;
  EXPECT_NE(failure.message.find("128 MiB"), std::string::npos) << failure.message;
}

TEST_F(Sandbox, LegitimateWorkStillRuns) {
  if (python_missing()) {
    GTEST_SKIP() << kPython << " is not installed: the Python probes need it";
  }
  const std::string shm_name = "/dev/shm/kforge-sandbox-test-" + std::to_string(getpid());
  const auto reply = run_python(R"(
import mmap, subprocess, threading
name = ")" + shm_name + R"("
fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
os.ftruncate(fd, 4096)
view = mmap.mmap(fd, 4096)
view[:5] = b"hello"
os.close(fd)
os.unlink(name)
done = []
worker = threading.Thread(target=lambda: done.append(1))
worker.start(); worker.join()
child = subprocess.run(["/bin/sh", "-c", "echo compiled > \"$TMPDIR/out.txt\" && cat \"$TMPDIR/out.txt\""],
                       capture_output=True, text=True)
reply({"shm": bytes(view[:5]).decode(), "thread": len(done), "subprocess": child.stdout.strip()})
)",
                                policy());
  ASSERT_TRUE(reply.is_object());
  EXPECT_EQ(reply["shm"], "hello") << "shared-memory tensors on the CPU";
  EXPECT_EQ(reply["thread"], 1) << "threads (clone3 falls back to clone)";
  EXPECT_EQ(reply["subprocess"], "compiled") << "subprocesses such as ptxas writing to the private folder";
}

TEST_F(Sandbox, CandidateEnvironmentIsScrubbed) {
  ASSERT_EQ(setenv("KFORGE_TEST_SECRET", "hunter2", 1), 0);
  ASSERT_EQ(setenv("KFORGE_SANDBOX", "best-effort", 1), 0);
  ASSERT_EQ(setenv("KFORGE_TIMING_PLACEMENTS", "3", 1), 0);
  ASSERT_EQ(setenv("KFORGE_TIMING_FLUSH", "write", 1), 0);
  ASSERT_EQ(setenv("KFORGE_TIMING_STREAM", "default", 1), 0);
  const PythonEnvironment python{kPython, root_ / "python"};
  auto launch =
      make_candidate_launch(python, root_, true, CandidateSandboxContext{{judge_.pid()}, 30.0, {}, {}});
  const auto judge = make_worker_launch(WorkerRole::judge, python, root_, true);
  unsetenv("KFORGE_TEST_SECRET");
  unsetenv("KFORGE_SANDBOX");
  unsetenv("KFORGE_TIMING_PLACEMENTS");
  unsetenv("KFORGE_TIMING_FLUSH");
  unsetenv("KFORGE_TIMING_STREAM");
  // Both sides time on the same number of memory placements (docs/verdict.md, "Placements").
  EXPECT_NE(std::ranges::find(judge.environment,
                              std::pair<std::string, std::string>{"KFORGE_TIMING_PLACEMENTS", "3"}),
            judge.environment.end());
  EXPECT_NE(std::ranges::find(judge.environment,
                              std::pair<std::string, std::string>{"KFORGE_TIMING_FLUSH", "write"}),
            judge.environment.end());
  launch.hidden_reply_channel = false;  // a shell probe answering on fd 4, not the candidate worker
  launch.executable = "/bin/sh";
  launch.arguments = {"-c", "read -r line <&3; env; echo '{\"ok\":true}' >&4"};
  auto worker = WorkerProcess::start(launch);
  ASSERT_TRUE(std::holds_alternative<nlohmann::json>(worker.call({{"op", "env"}}, 10s)));
  worker.stop();
  const std::string env = worker.log_tail();
  EXPECT_EQ(env.find("hunter2"), std::string::npos) << env;
  EXPECT_NE(env.find("HOME=" + (root_ / "candidate").string()), std::string::npos) << env;
  EXPECT_NE(env.find("TRITON_CACHE_DIR=" + (root_ / "candidate" / "triton-cache").string()),
            std::string::npos);
  EXPECT_NE(env.find("TRITON_INTERPRET=1"), std::string::npos);
  EXPECT_NE(env.find("TEARDOWN_CUPTI=1"), std::string::npos) << "CUPTI must not stay attached after tracing";
  // A CPU run: one thread in PyTorch's and numpy's pools (their spinning threads cost a batch its CPU).
  EXPECT_NE(env.find("OMP_NUM_THREADS=1"), std::string::npos) << env;
  EXPECT_NE(env.find("OPENBLAS_NUM_THREADS=1"), std::string::npos) << env;
  EXPECT_NE(env.find("KFORGE_TIMING_PLACEMENTS=3"), std::string::npos) << env;
  EXPECT_NE(env.find("KFORGE_TIMING_FLUSH=write"), std::string::npos) << env;
  EXPECT_NE(env.find("KFORGE_TIMING_STREAM=default"), std::string::npos) << env;
  EXPECT_TRUE(
      worker.sandbox_status()["layers"]["environment"].get<std::string>().starts_with("on (only PATH"));
}

// The GPU view replaces the CPU run's variables, and a CPU view brings them back once each.
TEST(VisibleGpus, AGpuViewDropsTheInterpreterAndTheSingleThreadPools) {
  WorkerLaunch launch;
  set_visible_gpus(launch, "");
  set_visible_gpus(launch, "");
  const auto count = [&](const std::string& name) {
    return std::ranges::count_if(launch.environment, [&](const auto& pair) { return pair.first == name; });
  };
  EXPECT_EQ(count("TRITON_INTERPRET"), 1);
  EXPECT_EQ(count("OMP_NUM_THREADS"), 1);
  EXPECT_EQ(count("CUDA_VISIBLE_DEVICES"), 1);
  set_visible_gpus(launch, "GPU-1234");
  EXPECT_EQ(count("TRITON_INTERPRET"), 0);
  EXPECT_EQ(count("OMP_NUM_THREADS"), 0);
  EXPECT_EQ(count("OPENBLAS_NUM_THREADS"), 0);
  EXPECT_EQ(launch.environment,
            (std::vector<std::pair<std::string, std::string>>{{"CUDA_VISIBLE_DEVICES", "GPU-1234"}}));
}

TEST(SandboxModes, OnRefusesAKernelWithoutLandlockOrSeccomp) {
  SandboxPolicy policy;
  policy.mode = SandboxMode::on;
  try {
    PreparedSandbox::prepare(policy, KernelSupport{-ENOSYS, 0});
    FAIL() << "mode on must refuse to run without Landlock";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("Landlock is unavailable: ENOSYS"), std::string::npos) << message;
    EXPECT_NE(message.find("KFORGE_SANDBOX=off"), std::string::npos) << message;
  }
  EXPECT_THROW(PreparedSandbox::prepare(policy, KernelSupport{-EOPNOTSUPP, EINVAL}), std::runtime_error);
}

TEST(SandboxModes, BestEffortReportsWhatIsMissing) {
  SandboxPolicy policy;
  policy.mode = SandboxMode::best_effort;
  policy.must_stay_unreadable = {"/somewhere/problem.py"};
  auto sandbox = PreparedSandbox::prepare(policy, KernelSupport{-EOPNOTSUPP, EINVAL});
  const auto status = sandbox.status(SandboxReport{});
  EXPECT_EQ(status["layers"][kLayerLandlock].get<std::string>().rfind("unavailable: EOPNOTSUPP", 0), 0U)
      << status.dump(2);
  EXPECT_EQ(status["layers"][kLayerSeccomp], "unavailable: EINVAL");
  ASSERT_FALSE(status["warnings"].empty());
  EXPECT_NE(status["warnings"][0].get<std::string>().find("/somewhere/problem.py"), std::string::npos);
}

TEST(SandboxModes, StrictRequiresLandlockScopes) {
  SandboxPolicy policy;
  policy.mode = SandboxMode::strict;
  EXPECT_THROW(PreparedSandbox::prepare(policy, KernelSupport{3, 0}), std::runtime_error);
}

TEST(SandboxModes, OffIsReportedLayerByLayer) {
  SandboxPolicy policy;
  policy.mode = SandboxMode::off;
  auto sandbox = PreparedSandbox::prepare(policy, KernelSupport{-ENOSYS, EINVAL});
  const auto status = sandbox.status(SandboxReport{});
  EXPECT_EQ(status["mode"], "off");
  for (const auto& [layer, value] : status["layers"].items()) {
    EXPECT_EQ(value, "off: KFORGE_SANDBOX=off") << layer;
  }
  EXPECT_FALSE(status["warnings"].empty());
  EXPECT_FALSE(sandbox.memory_limit().has_value());
}

TEST(SandboxModes, DisabledLayersAreNamedAndNotRequired) {
  SandboxPolicy policy;
  policy.mode = SandboxMode::on;
  policy.disabled_layers = {kLayerLandlock, kLayerLandlockScopes};
  auto sandbox = PreparedSandbox::prepare(policy, KernelSupport{-ENOSYS, 0});
  const auto status = sandbox.status(SandboxReport{});
  EXPECT_EQ(status["layers"][kLayerLandlock], "off: KFORGE_SANDBOX_DISABLE");
}

TEST(SandboxModes, EnvironmentParsing) {
  ASSERT_EQ(setenv("KFORGE_SANDBOX", "sideways", 1), 0);
  EXPECT_THROW(sandbox_mode_from_environment(), std::runtime_error);
  ASSERT_EQ(setenv("KFORGE_SANDBOX", "best-effort", 1), 0);
  EXPECT_EQ(sandbox_mode_from_environment(), SandboxMode::best_effort);
  unsetenv("KFORGE_SANDBOX");
  EXPECT_EQ(sandbox_mode_from_environment(), SandboxMode::on);
  ASSERT_EQ(setenv("KFORGE_SANDBOX_DISABLE", "seccomp,network_namespace", 1), 0);
  EXPECT_EQ(disabled_layers_from_environment(), (std::set<std::string>{kLayerSeccomp, kLayerNamespaces}));
  ASSERT_EQ(setenv("KFORGE_SANDBOX_DISABLE", "everything", 1), 0);
  EXPECT_THROW(disabled_layers_from_environment(), std::runtime_error);
  unsetenv("KFORGE_SANDBOX_DISABLE");
  ASSERT_EQ(setenv("KFORGE_CANDIDATE_MEMORY_GIB", "0.5", 1), 0);
  EXPECT_EQ(memory_limit_from_environment(), 512 * kMiB);
  ASSERT_EQ(setenv("KFORGE_CANDIDATE_MEMORY_GIB", "lots", 1), 0);
  EXPECT_THROW(memory_limit_from_environment(), std::runtime_error);
  unsetenv("KFORGE_CANDIDATE_MEMORY_GIB");
}

}  // namespace
}  // namespace kforge::runner
