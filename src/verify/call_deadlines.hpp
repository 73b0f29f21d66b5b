#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "runner/worker_process.hpp"
#include "verify/eval_settings.hpp"

namespace kforge::verify {

// How the limits below are derived (defaults per device: CallDeadlinePolicy::defaults).
struct CallDeadlinePolicy {
  double floor_s = 5.0;                // a call that runs the candidate gets at least this
  double reference_multiple = 1000.0;  // ... or this many times the reference's time for as many forwards
  double first_call_s = 5.0;           // more for the first calls: lazy set-up (CUPTI, imports, caches)
  double compile_allowance_s = 120.0;  // ... and more still, spent only while kernels compile
  // kforge's own start-up of a worker (Python importing torch and triton) gets at least this whatever
  // --timeout says: it grows with the machine's load and a cold file cache, and is not the candidate's.
  double start_up_floor_s = kMinCompileTimeoutS;

  // GPU: 5 s, 1000x, 5 s, 120 s. CPU: 10 s and 10000x (the Triton interpreter is up to a few thousand
  // times slower than a tiny reference, and shares the cores with other evaluations: an honest cumsum
  // took 60x its time alone on a loaded 2-core machine); nothing compiles there, so the compile
  // allowance is never spent.
  static CallDeadlinePolicy defaults(bool on_gpu);
};

// How long each call into a worker may take before its process group is killed (docs/verdict.md, "Time
// limits"); the one place these limits are decided, for every command that evaluates. Derived (kforge
// serve, where a hang must cost seconds, not the whole --timeout): a call that runs the candidate's code
// gets max(floor, multiple x the reference's own time for the same number of forward calls), the
// candidate's first calls (import and construction, the first forward, where Triton compiles) get a
// little more, and more again only while compiled kernels keep appearing in the candidate's private
// Triton cache; the user's --timeout bounds every limit. Fixed (kforge eval, bench, optimize: a
// benchmark must not turn a correct but very slow kernel into a timeout): every call gets --timeout.
class CallDeadlines {
 public:
  // `upper_s`: --timeout. `reference_call_s`: one forward of the reference, measured by the judge when it
  // loads the problem (none: unknown, every limit is the upper bound). `derived`: false for fixed limits.
  // `compile_cache`: the candidate's private Triton cache, watched during its first calls.
  CallDeadlines(double upper_s, std::optional<double> reference_call_s, bool on_gpu, bool derived = true,
                std::filesystem::path compile_cache = {},
                const std::optional<CallDeadlinePolicy>& policy = std::nullopt);

  // kforge's own start-up of a candidate worker (interpreter, imports, device set-up): no candidate code
  // runs, so a slow machine is not the candidate's fault: the upper bound, and at least the start-up floor.
  runner::CallLimit start_up() const;
  // Importing the candidate and building ModelNew: first_calls() under derived limits; under fixed ones
  // the start-up limit (a short --timeout meant for a hanging forward must not fire on a slow import).
  runner::CallLimit construction() const;
  // A request that runs the candidate's code: `forward_calls` calls of forward (a timing batch runs many).
  runner::CallLimit candidate(std::size_t forward_calls = 1) const;
  // Importing and building ModelNew, and the first forward: candidate()'s limit plus the first-call
  // allowance, moved on while the candidate's Triton cache grows, by the compile allowance at most.
  runner::CallLimit first_calls() const;
  // A timing warm-up of `forward_calls` forwards: its first call chooses the autotuned configs again, so
  // it gets the first call's extra time (first_call_s) on top.
  runner::CallLimit warm_up(std::size_t forward_calls) const;
  // Calls into the judge (the reference's own code): the upper bound.
  std::chrono::milliseconds judge() const;

  double candidate_s(std::size_t forward_calls = 1) const;
  double first_call_s() const;  // before any extension
  double upper_s() const { return upper_s_; }
  // {"derived", "upper_s", "reference_call_s", "candidate_call_s", "first_call_s", "floor_s",
  //  "reference_multiple", "compile_allowance_s"}: recorded in the verdict's settings.
  nlohmann::json to_json() const;

 private:
  double upper_s_;
  std::optional<double> reference_call_s_;
  bool derived_;
  CallDeadlinePolicy policy_;
  std::filesystem::path compile_cache_;
};

}  // namespace kforge::verify
