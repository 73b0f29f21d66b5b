#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "serve/handler_pool.hpp"

namespace kforge::serve {
namespace {

using namespace std::chrono_literals;

// A gate the tasks wait at until the test opens it.
class Gate {
 public:
  void wait() {
    std::unique_lock lock(mutex_);
    opened_.wait(lock, [this] { return open_; });
  }
  void open() {
    {
      const std::lock_guard lock(mutex_);
      open_ = true;
    }
    opened_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
};

void wait_until(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(done()) << "timed out";
}

TEST(HandlerPool, OneAfterAnotherTheSameThreadServesEveryTask) {
  HandlerPool pool(64, 10s, nullptr);
  std::set<std::thread::id> seen;
  for (int i = 0; i < 50; ++i) {
    std::promise<std::thread::id> ran;
    auto answer = ran.get_future();
    ASSERT_TRUE(pool.post([&ran] { ran.set_value(std::this_thread::get_id()); }));
    seen.insert(answer.get());
    wait_until([&] { return pool.idle_threads() == 1; });
  }
  EXPECT_EQ(seen.size(), 1U) << "an idle thread was passed over for a new or colder one";
  EXPECT_EQ(pool.threads(), 1U);
}

TEST(HandlerPool, GrowsForConcurrentTasksUpToItsLimitThenQueuesInOrder) {
  HandlerPool pool(3, 10s, nullptr);
  Gate gate;
  std::mutex order_mutex;
  std::vector<int> started;
  const auto started_count = [&] {
    const std::lock_guard lock(order_mutex);
    return started.size();
  };
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(pool.post([&, i] {
      {
        const std::lock_guard lock(order_mutex);
        started.push_back(i);
      }
      gate.wait();
    }));
  }
  wait_until([&] { return started_count() == 3; });
  EXPECT_EQ(pool.threads(), 3U);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(started_count(), 3U) << "tasks beyond the limit must wait for a thread";
  gate.open();
  pool.join();
  ASSERT_EQ(started.size(), 6U);
  // The first three ran at once, the queued ones after them.
  EXPECT_EQ(std::set<int>(started.begin(), started.begin() + 3), (std::set<int>{0, 1, 2}));
  EXPECT_EQ(std::set<int>(started.begin() + 3, started.end()), (std::set<int>{3, 4, 5}));
  EXPECT_EQ(pool.threads(), 3U);
}

TEST(HandlerPool, QueuedTasksRunInTheOrderPosted) {
  HandlerPool pool(1, 10s, nullptr);
  Gate gate;
  std::vector<int> order;  // one thread: no lock needed among the tasks
  ASSERT_TRUE(pool.post([&gate] { gate.wait(); }));
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(pool.post([&order, i] { order.push_back(i); }));
  }
  gate.open();
  pool.join();
  std::vector<int> expected(20);
  for (int i = 0; i < 20; ++i) {
    expected[static_cast<std::size_t>(i)] = i;
  }
  EXPECT_EQ(order, expected);
}

TEST(HandlerPool, AThreadIdleLongEnoughRunsTheIdleActionOnce) {
  std::atomic<int> idle_runs{0};
  HandlerPool pool(4, 30ms, [&idle_runs] { ++idle_runs; });
  std::promise<void> ran;
  ASSERT_TRUE(pool.post([&ran] { ran.set_value(); }));
  ran.get_future().get();
  wait_until([&] { return idle_runs.load() == 1; });
  std::this_thread::sleep_for(120ms);
  EXPECT_EQ(idle_runs.load(), 1) << "the idle action runs once per idle period, not on every timeout";
  // After the idle action the thread still takes work.
  std::promise<void> again;
  ASSERT_TRUE(pool.post([&again] { again.set_value(); }));
  EXPECT_EQ(again.get_future().wait_for(10s), std::future_status::ready);
  wait_until([&] { return idle_runs.load() == 2; });
}

TEST(HandlerPool, ThreadsIdleLongEnoughEndAndNewOnesStartWhenNeeded) {
  HandlerPool pool(8, 10ms, nullptr, 200ms);
  Gate gate;
  std::atomic<int> running{0};
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(pool.post([&] {
      ++running;
      gate.wait();
    }));
  }
  wait_until([&] { return running.load() == 4; });
  EXPECT_EQ(pool.threads(), 4U);
  gate.open();
  wait_until([&] { return pool.threads() == 0; });  // after a burst, nothing is kept
  EXPECT_EQ(pool.idle_threads(), 0U);
  std::promise<void> ran;
  ASSERT_TRUE(pool.post([&ran] { ran.set_value(); }));
  EXPECT_EQ(ran.get_future().wait_for(10s), std::future_status::ready);
  EXPECT_EQ(pool.threads(), 1U);
}

TEST(HandlerPool, ATaskThatThrowsDoesNotCostTheThread) {
  HandlerPool pool(1, 10s, nullptr);
  ASSERT_TRUE(pool.post([] { throw std::runtime_error("handler failed"); }));
  std::promise<void> ran;
  ASSERT_TRUE(pool.post([&ran] { ran.set_value(); }));
  EXPECT_EQ(ran.get_future().wait_for(10s), std::future_status::ready);
  EXPECT_EQ(pool.threads(), 1U);
}

TEST(HandlerPool, JoinRunsWhatWasPostedAndRefusesMore) {
  HandlerPool pool(2, 10s, nullptr);
  Gate gate;
  std::atomic<int> done{0};
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(pool.post([&] {
      gate.wait();
      ++done;
    }));
  }
  std::thread opener([&gate] {
    std::this_thread::sleep_for(20ms);
    gate.open();
  });
  pool.join();
  opener.join();
  EXPECT_EQ(done.load(), 5);
  EXPECT_FALSE(pool.post([] {}));
  pool.join();  // idempotent
}

}  // namespace
}  // namespace kforge::serve
