#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "verify/call_deadlines.hpp"

namespace kforge::verify {
namespace {

using std::chrono::milliseconds;

TEST(CallDeadlines, ACallGetsTheFloorOrAMultipleOfTheReferenceBoundedByTheUpperLimit) {
  const CallDeadlinePolicy policy{5.0, 1000.0, 5.0, 120.0};
  const CallDeadlines tiny(300.0, 0.0001, true, true, {}, policy);  // 1000 x 0.1 ms = 0.1 s: the floor
  EXPECT_DOUBLE_EQ(tiny.candidate_s(), 5.0);
  EXPECT_EQ(tiny.candidate().limit, milliseconds(5000));
  const CallDeadlines slow(300.0, 0.02, true, true, {}, policy);  // 1000 x 20 ms
  EXPECT_DOUBLE_EQ(slow.candidate_s(), 20.0);
  EXPECT_DOUBLE_EQ(slow.candidate_s(10), 200.0) << "a request that runs forward ten times";
  EXPECT_DOUBLE_EQ(slow.candidate_s(100), 300.0) << "--timeout bounds every limit";
  const CallDeadlines bounded(3.0, 0.0001, true, true, {}, policy);
  EXPECT_DOUBLE_EQ(bounded.candidate_s(), 3.0) << "an explicit --timeout below the floor wins";
}

TEST(CallDeadlines, ATimingWarmUpGetsTheFirstCallAllowanceForItsAutotuning) {
  const CallDeadlinePolicy policy{5.0, 1000.0, 5.0, 120.0};
  const CallDeadlines tiny(300.0, 0.0001, true, true, {}, policy);
  EXPECT_EQ(tiny.warm_up(20).limit, milliseconds(10000)) << "the floor, then 5 s more";
  const CallDeadlines slow(300.0, 0.02, true, true, {}, policy);
  EXPECT_EQ(slow.warm_up(10).limit, milliseconds(205000));
  EXPECT_EQ(slow.warm_up(100).limit, milliseconds(300000)) << "--timeout bounds it too";
}

TEST(CallDeadlines, KforgesOwnStartUpAndTheJudgeGetTheUpperLimit) {
  const CallDeadlines deadlines(300.0, 0.0001, false);
  EXPECT_EQ(deadlines.start_up().limit, milliseconds(300000));
  EXPECT_EQ(deadlines.judge(), milliseconds(300000));
  EXPECT_DOUBLE_EQ(deadlines.candidate_s(), CallDeadlinePolicy::defaults(false).floor_s);
}

TEST(CallDeadlines, FixedLimitsGiveEveryCallTheUpperLimit) {
  const CallDeadlines fixed(120.0, 0.0001, true, false, "/tmp/cache");
  EXPECT_DOUBLE_EQ(fixed.candidate_s(), 120.0);
  EXPECT_DOUBLE_EQ(fixed.first_call_s(), 120.0);
  EXPECT_EQ(fixed.first_calls().limit, milliseconds(120000));
  EXPECT_EQ(fixed.first_calls().extension, milliseconds(0));
  EXPECT_FALSE(fixed.first_calls().progress);
  EXPECT_EQ(fixed.to_json()["derived"], false);
  EXPECT_DOUBLE_EQ(fixed.to_json()["reference_call_s"].get<double>(), 0.0001) << "still recorded";
}

TEST(CallDeadlines, AnUnknownReferenceTimeFallsBackToTheUpperLimit) {
  const CallDeadlines unknown(300.0, std::nullopt, true);
  EXPECT_DOUBLE_EQ(unknown.candidate_s(), 300.0);
  const CallDeadlines nonsense(300.0, -1.0, true);
  EXPECT_DOUBLE_EQ(nonsense.candidate_s(), 300.0);
  EXPECT_TRUE(unknown.to_json()["reference_call_s"].is_null());
}

TEST(CallDeadlines, TheFirstCallsAreExtendedOnlyWhileTheCompileCacheGrows) {
  const auto cache =
      std::filesystem::temp_directory_path() / ("kforge-deadline-cache-" + std::to_string(::getpid()));
  std::filesystem::create_directories(cache);
  const CallDeadlinePolicy policy{5.0, 1000.0, 5.0, 120.0};
  const CallDeadlines deadlines(300.0, 0.0001, true, true, cache, policy);
  const auto first = deadlines.first_calls();
  EXPECT_EQ(first.limit, milliseconds(10000)) << "the floor and the first-call allowance";
  EXPECT_EQ(first.extension, milliseconds(120000));
  ASSERT_TRUE(first.progress);
  const auto before = first.progress();
  EXPECT_EQ(first.progress(), before) << "nothing changed, no progress";
  std::ofstream(cache / "kernel.cubin") << "compiled";
  EXPECT_NE(first.progress(), before) << "a compiled kernel appeared";
  const CallDeadlines capped(30.0, 0.0001, true, true, cache, policy);
  EXPECT_EQ(capped.first_calls().extension, milliseconds(20000)) << "the extension too stops at --timeout";
  const CallDeadlines no_cache(300.0, 0.0001, true, true, {}, policy);
  EXPECT_FALSE(no_cache.first_calls().progress);
  std::filesystem::remove_all(cache);
}

}  // namespace
}  // namespace kforge::verify
