#pragma once

#include <string>

#include "verify/eval_settings.hpp"

namespace kforge::verify {

// What kforge eval tells the user about the sizes it runs at, printed in the header.
struct SizeNote {
  std::string text;      // "" when there is nothing to say
  bool warning = false;  // a full-size run on the interpreter: it will be slow
};

// The Triton interpreter runs a GPU-sized problem for many minutes. When the device was left to
// kforge (--device auto), it lands on the CPU (`resolved_device`), and the user chose no sizes
// (no --small, no --size), the problem's KFORGE_SMALL sizes are used if it has them (settings.small is
// set); without them the note warns that the run will be slow and says how to shrink it. An explicit
// --device cpu keeps the user's sizes.
SizeNote choose_interpreter_sizes(EvalSettings& settings, const std::string& resolved_device);

}  // namespace kforge::verify
