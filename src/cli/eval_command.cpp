#include "cli/eval_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "report/terminal_report.hpp"
#include "verify/eval_pipeline.hpp"

namespace kforge::cli {
namespace {

struct EvalOptions {
  verify::EvalSettings settings;
  bool json = false;
  bool no_perf = false;
  std::string profile = "strict";
  std::string python;
  std::string output;
  std::vector<std::string> sizes;
  double atol = -1.0;
  double rtol = -1.0;
};

// NAME=VALUE pairs; a malformed one is a usage error.
bool parse_sizes(const std::vector<std::string>& pairs, std::map<std::string, std::string>& sizes) {
  for (const auto& pair : pairs) {
    const auto equals = pair.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == pair.size()) {
      std::cerr << fmt::format("kforge eval: --size expects NAME=VALUE, got '{}'\n", pair);
      return false;
    }
    sizes[pair.substr(0, equals)] = pair.substr(equals + 1);
  }
  return true;
}

int run_eval(EvalOptions& options) {
  auto& settings = options.settings;
  if (!parse_sizes(options.sizes, settings.sizes)) {
    return 2;
  }
  if (options.atol >= 0) {
    settings.atol = options.atol;
  }
  if (options.rtol >= 0) {
    settings.rtol = options.rtol;
  }
  if (!options.python.empty()) {
    settings.python = options.python;
  }
  settings.profile = options.profile == "lenient" ? rules::Profile::lenient : rules::Profile::strict;
  settings.measure_performance = !options.no_perf;
  const auto verdict = verify::evaluate(settings);
  // Replace invalid UTF-8 (a candidate may print any bytes) rather than throw while reporting.
  const auto document =
      verify::to_json(verdict).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!options.output.empty()) {
    std::ofstream(options.output) << document << "\n";
  }
  if (options.json) {
    std::cout << document << "\n";
  } else {
    std::cout << report::render_terminal(verdict, isatty(STDOUT_FILENO) != 0);
  }
  return verify::exit_code(verdict);
}

}  // namespace

std::function<int()> add_eval_command(CLI::App& app) {
  auto options = std::make_shared<EvalOptions>();
  auto& settings = options->settings;
  auto* eval = app.add_subcommand("eval", "Judge a Triton candidate against a PyTorch reference problem");
  eval->add_option("--problem,-p", settings.problem_path,
                   "problem file (KernelBench format: Model, get_inputs, "
                   "get_init_inputs)")
      ->required();
  eval->add_option("--candidate,-c", settings.candidate_path,
                   "candidate file (class ModelNew) or an LLM response holding one fenced python block")
      ->required();
  eval->add_option("--device,-d", settings.device, "auto (GPU if present), cpu, or cuda:N")
      ->capture_default_str();
  eval->add_flag("--json", options->json, "print the versioned JSON verdict instead of the summary");
  eval->add_option("--output,-o", options->output, "also write the JSON verdict to this file");
  eval->add_option("--trials", settings.trials, "correctness trials, each with fresh inputs")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  eval->add_option("--atol", options->atol, "absolute tolerance for every output (default: by dtype)")
      ->check(CLI::NonNegativeNumber);
  eval->add_option("--rtol", options->rtol, "relative tolerance for every output (default: by dtype)")
      ->check(CLI::NonNegativeNumber);
  eval->add_option("--seed", settings.seed, "base seed of model construction and inputs")
      ->capture_default_str();
  eval->add_flag("--small", settings.small, "use the problem's KFORGE_SMALL sizes (fast CPU runs)");
  eval->add_option("--size", options->sizes,
                   "override a module-level size constant of the problem: NAME=VALUE")
      ->take_all();
  eval->add_option("--timeout", settings.timeout_s, "seconds allowed for each call into a worker")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  eval->add_flag("--no-perf", options->no_perf, "skip timing even on a GPU");
  eval->add_option("--noise-target", settings.timing.noise_target,
                   "stop timing once the median's 95% CI half-width is below this fraction")
      ->check(CLI::Range(0.0001, 0.5))
      ->capture_default_str();
  eval->add_option("--time-budget", settings.timing.time_budget_s, "seconds of timing at most")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  eval->add_option("--profile", options->profile,
                   "static rule profile: strict rejects a candidate on any anti-cheating finding (for "
                   "benchmarks and rewards); lenient turns those findings into warnings for quick "
                   "iteration, except a missing Triton launch (rules: docs/rules.md)")
      ->check(CLI::IsMember({"strict", "lenient"}))
      ->capture_default_str();
  eval->add_option("--python", options->python,
                   "Python interpreter with torch and triton (default: the "
                   "project's .venv, $KFORGE_PYTHON, or python3)");
  return [options, eval]() { return eval->parsed() ? run_eval(*options) : -1; };
}

}  // namespace kforge::cli
