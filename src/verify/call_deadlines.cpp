#include "verify/call_deadlines.hpp"

#include <algorithm>
#include <cmath>

#include "runner/directory_activity.hpp"

namespace kforge::verify {
namespace {

std::chrono::milliseconds milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<long>(std::ceil(seconds * 1000.0)));
}

}  // namespace

CallDeadlinePolicy CallDeadlinePolicy::defaults(bool on_gpu) {
  CallDeadlinePolicy policy;
  if (!on_gpu) {  // the Triton interpreter, on cores other evaluations share: slow and noisy
    policy.floor_s = 10.0;
    policy.reference_multiple = 10000.0;
  }
  return policy;
}

CallDeadlines::CallDeadlines(double upper_s, std::optional<double> reference_call_s, bool on_gpu,
                             bool derived, std::filesystem::path compile_cache,
                             const std::optional<CallDeadlinePolicy>& policy)
    : upper_s_(upper_s),
      reference_call_s_(reference_call_s && std::isfinite(*reference_call_s) && *reference_call_s >= 0.0
                            ? reference_call_s
                            : std::nullopt),
      derived_(derived),
      policy_(policy.value_or(CallDeadlinePolicy::defaults(on_gpu))),
      compile_cache_(std::move(compile_cache)) {}

double CallDeadlines::candidate_s(std::size_t forward_calls) const {
  if (!derived_ || !reference_call_s_) {
    return upper_s_;
  }
  const double derived =
      std::max(policy_.floor_s, policy_.reference_multiple * *reference_call_s_ *
                                    static_cast<double>(std::max<std::size_t>(forward_calls, 1)));
  return std::min(upper_s_, derived);
}

runner::CallLimit CallDeadlines::start_up() const {
  return milliseconds(std::max(upper_s_, policy_.start_up_floor_s));
}

runner::CallLimit CallDeadlines::construction() const { return derived_ ? first_calls() : start_up(); }

runner::CallLimit CallDeadlines::candidate(std::size_t forward_calls) const {
  return milliseconds(candidate_s(forward_calls));
}

double CallDeadlines::first_call_s() const {
  return std::min(upper_s_, candidate_s() + policy_.first_call_s);
}

runner::CallLimit CallDeadlines::first_calls() const {
  const double base = first_call_s();
  const double extension = std::max(0.0, std::min(upper_s_, base + policy_.compile_allowance_s) - base);
  if (compile_cache_.empty() || extension <= 0.0) {
    return milliseconds(base);
  }
  return {milliseconds(base), milliseconds(extension),
          [cache = compile_cache_]() { return runner::directory_activity(cache); }};
}

runner::CallLimit CallDeadlines::warm_up(std::size_t forward_calls) const {
  return milliseconds(std::min(upper_s_, candidate_s(forward_calls) + policy_.first_call_s));
}

std::chrono::milliseconds CallDeadlines::judge() const { return milliseconds(upper_s_); }

nlohmann::json CallDeadlines::to_json() const {
  return {
      {"derived", derived_},
      {"upper_s", upper_s_},
      {"reference_call_s", reference_call_s_ ? nlohmann::json(*reference_call_s_) : nlohmann::json(nullptr)},
      {"candidate_call_s", candidate_s()},
      {"first_call_s", first_call_s()},
      {"floor_s", policy_.floor_s},
      {"reference_multiple", policy_.reference_multiple},
      {"compile_allowance_s", policy_.compile_allowance_s}};
}

}  // namespace kforge::verify
