#pragma once

#include <linux/capability.h>

#include <string>

namespace kforge::runner {

// Drops every Linux capability before exec, bounding set included, and locks root out of regaining
// them: a candidate of a root supervisor must not keep root's privileges (real ones without a user
// namespace; inside one they still rule the namespaces it owns).
class CapabilityDrop {
 public:
  struct Outcome {
    bool held_any = false;  // the child had capabilities to drop
    int error = 0;          // errno of the first step that failed
  };

  CapabilityDrop();  // reads the highest capability number of this kernel

  // Async-signal-safe.
  Outcome apply() const noexcept;

  static std::string describe(const Outcome& outcome);

 private:
  int last_capability_ = CAP_LAST_CAP;
};

}  // namespace kforge::runner
