#include "cli/kernel_mode.hpp"

#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <stdexcept>

#include "problem/kernel_problem.hpp"
#include "source/code_extraction.hpp"
#include "source/text_file.hpp"
#include "store/content_hash.hpp"

namespace kforge::cli {

void KernelModeOptions::add_options(CLI::App& command) {
  command
      .add_option("--kernel", kernel,
                  "kernel mode: a Triton file whose wrapper (--entry) is the reference (docs/kernel-mode.md)")
      ->check(CLI::ExistingFile);
  command.add_option("--entry", entry, "kernel mode: the wrapper function to call");
  command
      .add_option("--inputs", inputs,
                  "kernel mode: JSON spec of the wrapper's arguments (shapes, dtypes, ranges); default: "
                  "the file's own get_inputs()")
      ->check(CLI::ExistingFile);
  command
      .add_option(
          "--writes", writes,
          "kernel mode: indices of the wrapper's arguments it writes its outputs into (out= tensors); "
          "each call gets fresh copies and they are compared like returned outputs")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
}

std::string KernelModeOptions::usage_problem(const std::filesystem::path& problem) const {
  if (!active()) {
    return entry.empty() && inputs.empty() && writes.empty()
               ? ""
               : "--entry, --inputs and --writes need --kernel FILE";
  }
  if (!problem.empty()) {
    return "give --kernel FILE --entry NAME (the file is its own reference) or --problem FILE, not both";
  }
  return entry.empty() ? "--kernel needs --entry NAME: the wrapper function that launches the kernels" : "";
}

std::filesystem::path write_kernel_problem(const KernelModeOptions& options) {
  problem::KernelReference reference{options.kernel, options.entry, std::nullopt, options.writes};
  if (!options.inputs.empty()) {
    reference.spec = options.inputs;
  }
  const auto text = problem::kernel_problem_text(reference);
  const auto folder = std::filesystem::temp_directory_path() /
                      fmt::format("kforge-kernel-{}", store::sha256_hex(text).substr(0, 16));
  std::filesystem::create_directories(folder);
  const auto stem = std::filesystem::path(options.kernel).stem().string();
  auto file = folder / fmt::format("{}.{}.py", stem, options.entry);
  std::ofstream out(file, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    throw std::runtime_error(fmt::format("cannot write the generated problem {}", file.string()));
  }
  return file;
}

std::string kernel_candidate(const KernelModeOptions& options, const std::string& variant) {
  return problem::kernel_candidate_text(
      source::read_candidate_code(variant.empty() ? options.kernel : variant), options.entry, options.writes);
}

std::string kernel_test_block(const KernelModeOptions& options) {
  return problem::split_test_block(source::read_text_file(options.kernel)).test_block;
}

}  // namespace kforge::cli
