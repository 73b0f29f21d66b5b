#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runner/gpu_gate.hpp"
#include "runner/program_pause.hpp"
#include "runner/worker_process.hpp"

namespace kforge::runner {
namespace {

using namespace std::chrono_literals;

// A pausable shared user (a whole program) is stopped when timing's window runs out, not waited for,
// and continued once timing is done; a plain shared user is still waited for.
TEST(GpuGate, TimingStopsAPausableProgramInsteadOfWaitingForIt) {
  GpuGate gate(20ms);
  WorkerLaunch launch;
  launch.executable = "/bin/sh";
  launch.arguments = {"-c", "while :; do sleep 0.01; done"};  // a test block that never ends
  launch.working_directory = "/tmp";
  auto program = WorkerProcess::start(launch);
  ProgramPause pause;
  pause.attach(program.pid());
  const auto stopped = [&](bool expected) {  // the run state in /proc ('T' while stopped), once settled
    for (int attempt = 0; attempt < 200; ++attempt) {
      std::ifstream stat("/proc/" + std::to_string(program.pid()) + "/stat");
      std::string pid;
      std::string name;
      char run_state = '?';
      stat >> pid >> name >> run_state;
      if ((run_state == 'T') == expected) {
        return expected;
      }
      std::this_thread::sleep_for(5ms);
    }
    return !expected;
  };
  {
    const GpuGate::SharedUse held(&gate, &pause);
    const auto start = std::chrono::steady_clock::now();
    {
      const GpuGate::ExclusiveUse timing(&gate);
      EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << "timing waited for the program";
      EXPECT_EQ(pause.pauses(), 1);
      EXPECT_TRUE(stopped(true));
      EXPECT_EQ(gate.shared_users(), 0U);
    }
    EXPECT_FALSE(stopped(false)) << "continued once timing was done";
    EXPECT_EQ(gate.shared_users(), 1U);
  }
  EXPECT_EQ(gate.shared_users(), 0U);
  pause.detach();
  program.stop();
}

TEST(GpuGate, ExclusiveUseWaitsForSharedUsersAndBlocksNewOnes) {
  GpuGate gate(5ms);
  std::atomic<int> shared_inside{0};
  std::atomic<bool> overlap{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        const GpuGate::SharedUse use(&gate);
        ++shared_inside;
        std::this_thread::sleep_for(50us);
        --shared_inside;
      }
    });
  }
  threads.emplace_back([&] {
    for (int round = 0; round < 20; ++round) {
      const GpuGate::ExclusiveUse use(&gate);
      EXPECT_TRUE(gate.exclusive_held());
      if (shared_inside.load() != 0) {
        overlap = true;
      }
      std::this_thread::sleep_for(100us);
      if (shared_inside.load() != 0) {
        overlap = true;
      }
    }
  });
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_FALSE(overlap) << "timing overlapped another evaluation's GPU work";
  EXPECT_EQ(gate.shared_users(), 0U);
  EXPECT_FALSE(gate.exclusive_held());
}

TEST(GpuGate, TimingStartsAtOnceOnAnIdleGpu) {
  GpuGate gate(10s);
  const GpuGate::ExclusiveUse use(&gate);
  EXPECT_TRUE(gate.exclusive_held());
  EXPECT_LT(use.waited(), 1s);
}

// Four threads keep the GPU in shared use with overlapping calls, so it never falls idle (each holds
// 40 ms, 10 ms apart: a gap needs a thread held up 30 ms, where two threads 10 ms apart fell idle on a
// loaded CI machine): a timing request admits new shared users for its window, then closes the gate
// and gets in.
TEST(GpuGate, TimingRequestAdmitsSharedUsersForItsWindowThenCloses) {
  GpuGate gate(300ms);
  std::atomic<bool> stop{false};
  std::atomic<bool> requested{false};
  std::atomic<int> admitted_while_waiting{0};
  std::vector<std::thread> users;
  for (int i = 0; i < 4; ++i) {
    users.emplace_back([&, i] {
      std::this_thread::sleep_for(i * 10ms);
      while (!stop) {
        const GpuGate::SharedUse use(&gate);
        if (requested && !gate.exclusive_held()) {
          ++admitted_while_waiting;
        }
        std::this_thread::sleep_for(40ms);
      }
    });
  }
  std::this_thread::sleep_for(50ms);
  requested = true;
  {
    const GpuGate::ExclusiveUse use(&gate);
    EXPECT_EQ(gate.shared_users(), 0U);
    EXPECT_TRUE(gate.closed_to_shared());
    EXPECT_GE(use.waited(), 300ms) << "the window lets shared users in before timing";
    EXPECT_LT(use.waited(), 3s) << "the window bounds how long timing waits";
  }
  EXPECT_GT(admitted_while_waiting.load(), 2);
  stop = true;
  for (auto& user : users) {
    user.join();
  }
  EXPECT_FALSE(gate.closed_to_shared()) << "reopened once no timing request waits";
}

// Once the gate has closed, every waiting timing request runs before any new shared user.
TEST(GpuGate, ClosedGateRunsEveryWaitingTimingRequestBeforeSharedUsers) {
  GpuGate gate(50ms);
  std::vector<std::string> order;
  std::mutex order_mutex;
  const auto log = [&](const std::string& what) {
    const std::lock_guard lock(order_mutex);
    order.push_back(what);
  };
  auto held = std::make_unique<GpuGate::SharedUse>(&gate);  // a long call in flight
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&] {
      const GpuGate::ExclusiveUse use(&gate);
      log("timing");
      std::this_thread::sleep_for(20ms);
    });
  }
  std::this_thread::sleep_for(200ms);  // both requests' windows have run out: the gate is closed
  EXPECT_TRUE(gate.closed_to_shared());
  threads.emplace_back([&] {
    const GpuGate::SharedUse use(&gate);
    log("shared");
  });
  std::this_thread::sleep_for(50ms);
  held.reset();
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(order, (std::vector<std::string>{"timing", "timing", "shared"}));
}

TEST(GpuGate, NullGateIsANoOp) {
  const GpuGate::SharedUse shared(nullptr);
  const GpuGate::ExclusiveUse exclusive(nullptr);
  SUCCEED();
}

TEST(GpuGate, CountsTheTimeTimingHeldItExclusively) {
  GpuGate gate(1ms);
  EXPECT_EQ(gate.exclusive_seconds(), 0.0);
  {
    const GpuGate::SharedUse use(&gate);
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(gate.exclusive_seconds(), 0.0) << "shared use is not timing";
  {
    const GpuGate::ExclusiveUse use(&gate);
    std::this_thread::sleep_for(20ms);
    EXPECT_GT(gate.exclusive_seconds(), 0.0) << "counted while held too";
  }
  const double held = gate.exclusive_seconds();
  EXPECT_GE(held, 0.015);
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(gate.exclusive_seconds(), held) << "not counted once released";
}

}  // namespace
}  // namespace kforge::runner
