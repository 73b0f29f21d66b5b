#include "cli/kernel_mode.hpp"

#include <fmt/format.h>

#include <optional>
#include <stdexcept>

#include "cli/test_block_capture.hpp"
#include "problem/kernel_problem.hpp"
#include "runner/environment_probe.hpp"
#include "source/code_extraction.hpp"
#include "source/text_file.hpp"
#include "store/content_hash.hpp"
#include "verify/interpreter_sizes.hpp"

namespace kforge::cli {
namespace {

// Writes `text` to a file of the temporary directory named by its hash; returns the file.
std::filesystem::path write_by_hash(const std::string& text, const std::string& name) {
  const auto folder = std::filesystem::temp_directory_path() /
                      fmt::format("kforge-kernel-{}", store::sha256_hex(text).substr(0, 16));
  std::filesystem::create_directories(folder);
  auto file = folder / name;
  source::write_text_file(file, text);
  return file;
}

}  // namespace

void KernelModeOptions::add_options(CLI::App& command) {
  command
      .add_option("--kernel", kernel,
                  "kernel mode: a Triton file whose wrapper (--entry) is the reference (docs/kernel-mode.md)")
      ->check(CLI::ExistingFile)
      ->option_text("FILE");
  command.add_option("--entry", entry, "kernel mode: the wrapper function to call")->option_text("NAME");
  command
      .add_option("--inputs", inputs,
                  "kernel mode: JSON spec of the wrapper's arguments (shapes, dtypes, ranges); default: "
                  "the file's own get_inputs()")
      ->check(CLI::ExistingFile)
      ->option_text("FILE");
  command
      .add_option(
          "--writes", writes,
          "kernel mode: indices of the wrapper's arguments it writes its outputs into (out= tensors); "
          "each call gets fresh copies and they are compared like returned outputs")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber)
      ->option_text("LIST");
  command.add_flag("--inputs-from-test", inputs_from_test,
                   "kernel mode: take the wrapper's arguments from the calls in the file's own test block "
                   "(runs the test block once; shapes and value ranges of the largest call)");
  command.add_option("--test-case", test_case, "kernel mode: which call of the test block (from 0)")
      ->check(CLI::NonNegativeNumber)
      ->option_text("N");
}

std::string KernelModeOptions::usage_problem(const std::filesystem::path& problem) const {
  if (!active()) {
    return entry.empty() && inputs.empty() && writes.empty() && !inputs_from_test && test_case < 0
               ? ""
               : "--entry, --inputs, --inputs-from-test, --test-case and --writes need --kernel FILE";
  }
  if (!problem.empty()) {
    return "give --kernel FILE --entry NAME (the file is its own reference) or --problem FILE, not both";
  }
  if (inputs_from_test && !inputs.empty()) {
    return "give --inputs SPEC or --inputs-from-test, not both";
  }
  if (test_case >= 0 && !inputs_from_test) {
    return "--test-case needs --inputs-from-test";
  }
  return entry.empty() ? "--kernel needs --entry NAME: the wrapper function that launches the kernels" : "";
}

nlohmann::json KernelProblemFile::describe(const std::string& entry) const {
  nlohmann::json described = {{"entry", entry}, {"writes", writes}, {"writes_inferred", writes_inferred}};
  if (!keywords.empty()) {
    auto& by_name = described["keywords"] = nlohmann::json::object();
    for (const auto& [index, name] : keywords) {
      by_name[std::to_string(index)] = name;
    }
  }
  if (result == problem::WrapperResult::kIgnored) {
    described["result_ignored"] = true;
  }
  if (!called_tests.empty()) {
    described["called_tests"] = called_tests;
  }
  return described;
}

KernelProblemFile write_kernel_problem(const KernelModeOptions& options,
                                       const verify::EvalSettings& settings) {
  problem::KernelReference reference{options.kernel, options.entry, std::nullopt, options.writes,
                                     std::nullopt};
  if (!options.inputs.empty()) {
    reference.spec = options.inputs;
  }
  std::optional<problem::ObservedCall> observed;
  std::map<int, std::string> keywords = options.inputs.empty()
                                            ? std::map<int, std::string>{}
                                            : problem::spec_keywords(source::read_text_file(options.inputs));
  std::string where;
  std::vector<std::string> called_tests;
  if (options.inputs_from_test) {
    try {
      const auto captured = capture_test_block_spec(
          options.kernel, options.entry,
          options.test_case >= 0 ? std::optional<int>(options.test_case) : std::nullopt, settings.python,
          settings.timeout_s);
      reference.spec_text = captured.spec;
      observed = captured.call;
      called_tests = captured.called_tests;
      keywords = problem::spec_keywords(captured.spec);
    } catch (const std::runtime_error& error) {
      if (const auto gpu = capture_needs_a_gpu(error.what(), options.kernel)) {
        throw std::runtime_error(*gpu);
      }
      throw;
    }
    where = "the test block's call it was captured from";
  }
  const auto stem = std::filesystem::path(options.kernel).stem().string();
  const auto name = fmt::format("{}.{}.py", stem, options.entry);
  KernelProblemFile made{write_by_hash(problem::kernel_problem_text(reference), name),
                         options.writes,
                         false,
                         keywords,
                         problem::WrapperResult::kUnlessNone,
                         called_tests};
  if (!options.writes.empty()) {
    return made;
  }
  if (!observed) {  // one call on the problem's own inputs, as the judge will make them
    // At the sizes the evaluation will use: on a machine without a GPU, the problem's small ones.
    auto sized = settings;
    sized.problem_path = made.problem;
    verify::choose_interpreter_sizes(sized, runner::resolve_device(settings.device));
    observed = probe_wrapper_writes(made.problem, options.entry, sized.small, settings.sizes, settings.seed,
                                    settings.python, settings.timeout_s);
    where = "a call on the problem's inputs";
  }
  reference.writes = problem::inferred_writes(*observed, options.entry, where);
  if (reference.writes.empty()) {
    return made;
  }
  reference.result = problem::observed_result(*observed);
  return {write_by_hash(problem::kernel_problem_text(reference), name),
          reference.writes,
          true,
          keywords,
          reference.result,
          called_tests};
}

std::string kernel_candidate(const KernelModeOptions& options, const std::string& variant) {
  return problem::kernel_candidate_text(
      source::read_candidate_code(variant.empty() ? options.kernel : variant), options.entry, options.writes,
      options.keywords, options.result);
}

std::string kernel_test_block(const KernelModeOptions& options) {
  return problem::split_test_block(source::read_text_file(options.kernel)).test_block;
}

}  // namespace kforge::cli
