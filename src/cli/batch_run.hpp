#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "problem/sample_set.hpp"
#include "reward/reward_spec.hpp"
#include "verify/eval_settings.hpp"

namespace kforge::cli {

// How a batch runs and where its results go; shared by `kforge eval --samples` and `kforge bench SUITE`.
struct BatchOptions {
  std::string gpus;      // "0,1": spread over these GPUs; empty: --device decides
  std::size_t jobs = 0;  // evaluations in flight per device; 0: by cores
  std::string results = "results.jsonl";
  std::string store;  // empty: the default store path
  bool no_store = false;
  bool fresh = false;      // evaluate again even when the store has a verdict
  bool no_zygote = false;  // start every candidate fresh instead of forking it from a zygote
  bool json = false;       // print the metrics as JSON
  std::string reward;      // empty: no reward; a formula name or a JSON reward spec (docs/rewards.md)
  // No sizes chosen: on the CPU interpreter (--device auto without a GPU) a problem with KFORGE_SMALL
  // runs at those sizes (verify/interpreter_sizes.hpp).
  bool small_when_interpreted = false;
};

// The --reward spec, if one was given. Throws std::invalid_argument (naming the bad field) for a bad one.
std::optional<reward::RewardSpec> reward_spec(const BatchOptions& options);

// Adds "reward" (docs/rewards.md) to a verdict or result document when a spec is given.
void attach_reward(nlohmann::json& document, const nlohmann::json& verdict,
                   const std::optional<reward::RewardSpec>& spec);

// Evaluations in flight per device when -j is not given: the cores shared out over the devices.
std::size_t default_jobs(std::size_t devices);

// Adds --gpus, -j, --results, --store, --no-store, --fresh, --no-zygote to a subcommand.
void add_batch_options(CLI::App& command, BatchOptions& options);

// The devices a batch spreads over: --gpus, else the --device setting (auto: GPU 0 if the driver
// lists one, else the CPU).
std::vector<std::string> batch_devices(const BatchOptions& options, const std::string& device);

// Runs the samples (each with `base` settings and its own problem and candidate), writes one JSON line
// per sample to the results file as it finishes, and prints KernelBench's metrics. Returns the results.
// A sample that could not be read (bad JSON, an unknown problem) is said on stderr as an input error and
// its line carries "input_error"; it is no evaluation, so callers leave it out of the metrics.
// Throws std::runtime_error for usage problems (unwritable results file, unopenable store).
std::vector<nlohmann::json> run_batch(const std::vector<problem::Sample>& samples,
                                      const verify::EvalSettings& base, const BatchOptions& options);

}  // namespace kforge::cli
