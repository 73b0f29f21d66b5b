#include "schedule/parallel_screening.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>

#include "verify/eval_pipeline.hpp"

namespace kforge::schedule {

std::vector<std::optional<verify::Verdict>> screen_in_parallel(const std::vector<EvalJob>& jobs,
                                                               const std::string& device,
                                                               std::size_t threads) {
  std::vector<std::optional<verify::Verdict>> screened(jobs.size());
  std::atomic<std::size_t> next{0};
  // Each thread takes the next unscreened job until none is left; a job that cannot be screened
  // (even for lack of memory) stays nullopt and the full evaluation reports on it.
  const auto work = [&]() noexcept {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      try {
        auto settings = jobs[i].settings;
        settings.device = device;
        screened[i] = verify::screen(settings);
      } catch (const std::exception&) {
        screened[i].reset();
      }
    }
  };
  const std::size_t helpers = std::min(threads, jobs.size()) - std::min<std::size_t>(1, jobs.size());
  std::vector<std::jthread> pool;
  pool.reserve(helpers);
  try {
    for (std::size_t i = 0; i < helpers; ++i) {
      pool.emplace_back(work);
    }
  } catch (const std::system_error&) {  // no thread to be had: the caller screens the rest alone
  }
  work();
  pool.clear();  // joins the helpers: a helper may still be writing its last job's verdict
  return screened;
}

}  // namespace kforge::schedule
