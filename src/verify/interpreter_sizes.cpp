#include "verify/interpreter_sizes.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "problem/kforge_hooks.hpp"
#include "source/text_file.hpp"

namespace kforge::verify {

SizeNote choose_interpreter_sizes(EvalSettings& settings, const std::string& resolved_device) {
  if (settings.device != "auto" || resolved_device != "cpu" || settings.small || !settings.sizes.empty()) {
    return {};
  }
  std::string source;
  try {
    source = source::read_text_file(settings.problem_path);
  } catch (const std::runtime_error&) {
    return {};  // the evaluation reports the unreadable file
  }
  if (problem::defines_small_sizes(source)) {
    settings.small = true;
    return {
        "sizes    the problem's small sizes (KFORGE_SMALL): no GPU, so the Triton interpreter runs on the "
        "CPU; --device cpu keeps the full size",
        false};
  }
  return {
      fmt::format("WARNING  no GPU: the Triton interpreter runs {} at its full size on the CPU, which can "
                  "take many minutes; shrink it with --size NAME=VALUE (its module-level size constants) "
                  "or give it a KFORGE_SMALL dict for --small",
                  settings.problem_path.filename().string()),
      true};
}

}  // namespace kforge::verify
