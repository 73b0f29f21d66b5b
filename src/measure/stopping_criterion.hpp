#pragma once

#include <string>

#include "measure/measurement_state.hpp"

namespace kforge::measure {

// One small, pluggable rule for ending a measurement (in the spirit of nvbench's stopping
// criteria). Criteria are stateless: each check judges the whole MeasurementState afresh.
class StoppingCriterion {
 public:
  StoppingCriterion() = default;
  virtual ~StoppingCriterion() = default;

  // Short stable identifier, e.g. "noise-target", reported in StopDecision::criterion.
  virtual std::string name() const = 0;
  virtual bool should_stop(const MeasurementState& state) const = 0;
  // The rule in words, e.g. "time budget 10 s reached"; phrased to read as the stop reason.
  virtual std::string reason() const = 0;

 protected:
  // Copying only through derived classes prevents slicing through a base reference.
  StoppingCriterion(const StoppingCriterion&) = default;
  StoppingCriterion(StoppingCriterion&&) = default;
  StoppingCriterion& operator=(const StoppingCriterion&) = default;
  StoppingCriterion& operator=(StoppingCriterion&&) = default;
};

}  // namespace kforge::measure
