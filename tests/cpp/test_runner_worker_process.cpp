#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "runner/lasting_thread.hpp"
#include "runner/worker_process.hpp"

namespace kforge::runner {
namespace {

using namespace std::chrono_literals;

// A worker written in shell: fd 3 is its request pipe, fd 4 its reply pipe, as for the Python workers.
WorkerLaunch shell_worker(const std::string& script) {
  WorkerLaunch launch;
  launch.executable = "/bin/sh";
  launch.arguments = {"-c", script};
  launch.environment = {{"PATH", "/usr/bin:/bin"}};
  launch.working_directory = std::filesystem::temp_directory_path();
  return launch;
}

bool process_exists(pid_t pid) { return kill(pid, 0) == 0; }

// Killed members of a group whose leader is gone are reaped by init a moment later.
bool group_vanishes(pid_t group) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (kill(-group, 0) != 0) {
      return true;
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(WorkerProcess, AnswersRequestsInOrder) {
  auto worker =
      WorkerProcess::start(shell_worker("while read -r line <&3; do echo '{\"ok\":true,\"n\":1}' >&4; done"));
  for (int i = 0; i < 3; ++i) {
    auto reply = worker.call({{"op", "ping"}}, 5s);
    ASSERT_TRUE(std::holds_alternative<nlohmann::json>(reply));
    EXPECT_EQ(std::get<nlohmann::json>(reply)["n"], 1);
  }
}

// What LastingThread is for: a worker dies with the thread that started it (its parent-death signal), so a
// worker shared by several threads is started on a thread that outlives them.
TEST(WorkerProcess, AWorkerDiesWithItsStartingThreadUnlessALastingThreadStartedIt) {
  const auto started_on = [](const auto& start) {
    std::optional<WorkerProcess> worker;
    std::thread([&] { worker.emplace(start()); }).join();  // the asking thread is gone now
    std::this_thread::sleep_for(300ms);
    siginfo_t info{};  // dead (a zombie) or alive, without reaping it: the worker's stop() does that
    waitid(P_PID, static_cast<id_t>(worker->pid()), &info, WEXITED | WNOHANG | WNOWAIT);
    return info.si_pid == 0;
  };
  const auto start = [] { return WorkerProcess::start(shell_worker("read -r line <&3; sleep 60")); };
  EXPECT_FALSE(started_on(start)) << "the parent-death signal no longer follows the starting thread";
  LastingThread lasting;
  EXPECT_TRUE(started_on([&] { return lasting.run(start); }));
}

TEST(WorkerProcess, ALastingThreadHandsBackWhatTheWorkThrew) {
  LastingThread lasting;
  EXPECT_THROW(lasting.run([]() -> int { throw std::runtime_error("cannot start"); }), std::runtime_error);
  EXPECT_EQ(lasting.run([] { return 7; }), 7);
}

TEST(WorkerProcess, TimeoutKillsAndReapsTheWholeGroup) {
  auto worker = WorkerProcess::start(shell_worker("sleep 60 & read -r line <&3; sleep 60"));
  const pid_t pid = worker.pid();
  auto reply = worker.call({{"op", "hang"}}, 300ms);
  ASSERT_TRUE(std::holds_alternative<WorkerFailure>(reply));
  EXPECT_EQ(std::get<WorkerFailure>(reply).kind, WorkerFailureKind::timeout);
  EXPECT_FALSE(worker.running());
  EXPECT_FALSE(process_exists(pid));
  EXPECT_TRUE(group_vanishes(pid)) << "the background sleep of the group must be gone too";
}

TEST(WorkerProcess, VisibleProgressExtendsACallUpToItsCap) {
  // The worker touches a file every 100 ms for 1.5 s, then answers: past its 500 ms limit, but it
  // keeps making progress the supervisor can see.
  const auto marker =
      std::filesystem::temp_directory_path() / ("kforge-progress-" + std::to_string(getpid()));
  auto worker = WorkerProcess::start(
      shell_worker("read -r line <&3; i=0; while [ $i -lt 15 ]; do echo $i >> " + marker.string() +
                   "; sleep 0.1; i=$((i+1)); done; echo '{\"ok\":true}' >&4; sleep 60"));
  const auto size_of_marker = [marker]() -> std::uint64_t {
    std::error_code error;
    const auto size = std::filesystem::file_size(marker, error);
    return error ? 0 : size;
  };
  const auto reply = worker.call({{"op", "compile"}}, CallLimit(500ms, 10s, size_of_marker));
  EXPECT_TRUE(std::holds_alternative<nlohmann::json>(reply)) << "progress kept the call alive";
  std::filesystem::remove(marker);

  // The same worker without progress: killed at the limit, not the cap.
  auto idle = WorkerProcess::start(shell_worker("read -r line <&3; sleep 60"));
  const auto start = std::chrono::steady_clock::now();
  const auto timed_out = idle.call({{"op", "hang"}}, CallLimit(300ms, 30s, [] { return std::uint64_t{7}; }));
  ASSERT_TRUE(std::holds_alternative<WorkerFailure>(timed_out));
  EXPECT_EQ(std::get<WorkerFailure>(timed_out).kind, WorkerFailureKind::timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "no progress: the cap was not spent";
  EXPECT_FALSE(idle.running());

  // Progress without end: stopped at limit + extension.
  auto busy = WorkerProcess::start(shell_worker("read -r line <&3; sleep 60"));
  std::uint64_t counter = 0;
  const auto busy_start = std::chrono::steady_clock::now();
  const auto capped = busy.call({{"op", "spin"}}, CallLimit(300ms, 700ms, [&counter] { return ++counter; }));
  ASSERT_TRUE(std::holds_alternative<WorkerFailure>(capped));
  EXPECT_NE(std::get<WorkerFailure>(capped).message.find("progress"), std::string::npos)
      << std::get<WorkerFailure>(capped).message;
  EXPECT_LT(std::chrono::steady_clock::now() - busy_start, 10s);
}

TEST(WorkerProcess, RunToExitGivesTheExitStatusAndKeepsTheLog) {
  auto done = WorkerProcess::start(shell_worker("echo working; exit 3"));
  const auto ended = done.run_to_exit(5s);
  EXPECT_EQ(ended.kind, WorkerFailureKind::exited);
  EXPECT_EQ(ended.exit_code, 3);
  EXPECT_NE(done.log_tail().find("working"), std::string::npos);
  EXPECT_FALSE(done.running());
  auto clean = WorkerProcess::start(shell_worker("exit 0"));
  EXPECT_EQ(clean.run_to_exit(5s).exit_code, 0);
}

TEST(WorkerProcess, RunToExitKillsTheGroupAtTheDeadline) {
  auto worker = WorkerProcess::start(shell_worker("sleep 60 & sleep 60"));
  const pid_t pid = worker.pid();
  const auto ended = worker.run_to_exit(300ms);
  EXPECT_EQ(ended.kind, WorkerFailureKind::timeout);
  EXPECT_FALSE(worker.running());
  EXPECT_TRUE(group_vanishes(pid));
}

TEST(WorkerProcess, CrashReportsTheSignal) {
  auto worker = WorkerProcess::start(shell_worker("read -r line <&3; kill -SEGV $$"));
  auto reply = worker.call({{"op", "crash"}}, 5s);
  ASSERT_TRUE(std::holds_alternative<WorkerFailure>(reply));
  const auto& failure = std::get<WorkerFailure>(reply);
  EXPECT_EQ(failure.kind, WorkerFailureKind::signaled);
  EXPECT_EQ(failure.signal, SIGSEGV);
  EXPECT_NE(failure.message.find("SIGSEGV"), std::string::npos);
}

TEST(WorkerProcess, ExitReportsTheStatusAndKeepsTheLog) {
  auto worker = WorkerProcess::start(shell_worker("read -r line <&3; echo dying loudly >&2; exit 7"));
  auto reply = worker.call({{"op", "exit"}}, 5s);
  ASSERT_TRUE(std::holds_alternative<WorkerFailure>(reply));
  EXPECT_EQ(std::get<WorkerFailure>(reply).exit_code, 7);
  EXPECT_NE(worker.log_tail().find("dying loudly"), std::string::npos);
  auto again = worker.call({{"op", "more"}}, 1s);
  EXPECT_TRUE(std::holds_alternative<WorkerFailure>(again));
}

TEST(WorkerProcess, GarbageReplyIsAProtocolFailure) {
  auto worker = WorkerProcess::start(shell_worker("read -r line <&3; echo 'not json' >&4; sleep 60"));
  auto reply = worker.call({{"op", "x"}}, 5s);
  ASSERT_TRUE(std::holds_alternative<WorkerFailure>(reply));
  EXPECT_EQ(std::get<WorkerFailure>(reply).kind, WorkerFailureKind::protocol);
}

// A Python worker on a hidden reply channel: it learns its reply descriptor from the first line and
// echoes each request's nonce; `forge` first writes a reply line of its own, as candidate code would.
WorkerLaunch hidden_channel_worker(bool forge) {
  WorkerLaunch launch;
  launch.executable = "/usr/bin/python3";
  const std::string script =
      std::string(R"PY(
import json, os
requests = os.fdopen(3, "r")
channel = json.loads(requests.readline())["channel"]
replies = os.fdopen(channel["reply_fd"], "w")
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
for line in requests:
    request = json.loads(line)
)PY") +
      (forge ? "    replies.write('{\"ok\": true, \"forged\": true}\\n')\n" : "") +
      R"PY(    reply = {"ok": True, "nonce": request["nonce"], "fd": channel["reply_fd"], "fd4_open": is_open(4)}
    replies.write(json.dumps(reply) + "\n")
    replies.flush()
)PY";
  launch.arguments = {"-c", script};
  launch.environment = {{"PATH", "/usr/bin:/bin"}};
  launch.working_directory = std::filesystem::temp_directory_path();
  launch.hidden_reply_channel = true;
  return launch;
}

TEST(WorkerProcess, HiddenReplyChannelIsAtARunTimeNumberAndSealed) {
  auto worker = WorkerProcess::start(hidden_channel_worker(false));
  for (int i = 0; i < 2; ++i) {
    auto reply = worker.call({{"op", "ping"}}, 10s);
    ASSERT_TRUE(std::holds_alternative<nlohmann::json>(reply)) << std::get<WorkerFailure>(reply).message;
    const auto& body = std::get<nlohmann::json>(reply);
    EXPECT_GE(body["fd"].get<int>(), 100);
    EXPECT_FALSE(body["fd4_open"].get<bool>()) << "the well-known reply descriptor must stay closed";
    EXPECT_FALSE(body.contains("nonce"))
        << "the nonce is checked and removed before the caller sees the reply";
  }
}

TEST(WorkerProcess, AReplyWithoutItsNonceIsForged) {
  auto worker = WorkerProcess::start(hidden_channel_worker(true));
  const pid_t pid = worker.pid();
  auto reply = worker.call({{"op", "run"}}, 10s);
  ASSERT_TRUE(std::holds_alternative<WorkerFailure>(reply));
  EXPECT_EQ(std::get<WorkerFailure>(reply).kind, WorkerFailureKind::forged);
  EXPECT_FALSE(worker.running());
  EXPECT_FALSE(process_exists(pid));
}

TEST(WorkerProcess, LogIsBoundedAndNeverBlocksTheWorker) {
  auto worker = WorkerProcess::start(
      shell_worker("read -r line <&3; head -c 1000000 /dev/zero | tr '\\0' x; echo '{\"ok\":true}' >&4"));
  auto reply = worker.call({{"op", "spam"}}, 10s);
  ASSERT_TRUE(std::holds_alternative<nlohmann::json>(reply));
  EXPECT_LE(worker.log_tail().size(), WorkerProcess::kLogTailBytes);
}

TEST(WorkerProcess, MissingExecutableIsAnErrorNotACrash) {
  WorkerLaunch launch = shell_worker("true");
  launch.executable = "/nonexistent/python";
  EXPECT_THROW(WorkerProcess::start(launch), std::runtime_error);
}

TEST(WorkerProcess, DestructorReapsAStillRunningWorker) {
  pid_t pid = 0;
  {
    auto worker = WorkerProcess::start(shell_worker("trap '' TERM; sleep 60"));
    pid = worker.pid();
    EXPECT_TRUE(process_exists(pid));
  }
  EXPECT_FALSE(process_exists(pid));
}

TEST(WorkerProcess, SuspendAndResume) {
  auto worker =
      WorkerProcess::start(shell_worker("while read -r line <&3; do echo '{\"ok\":true}' >&4; done"));
  worker.suspend();
  auto stalled = worker.call({{"op", "ping"}}, 200ms);
  EXPECT_TRUE(std::holds_alternative<WorkerFailure>(stalled)) << "a stopped worker cannot answer";
  auto fresh =
      WorkerProcess::start(shell_worker("while read -r line <&3; do echo '{\"ok\":true}' >&4; done"));
  fresh.suspend();
  fresh.resume();
  EXPECT_TRUE(std::holds_alternative<nlohmann::json>(fresh.call({{"op", "ping"}}, 5s)));
}

}  // namespace
}  // namespace kforge::runner
