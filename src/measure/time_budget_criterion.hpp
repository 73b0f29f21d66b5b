#pragma once

#include <string>

#include "measure/measurement_state.hpp"
#include "measure/stopping_criterion.hpp"

namespace kforge::measure {

// A limit: stops once the measurement has run for budget_s seconds, converged or not.
class TimeBudgetCriterion final : public StoppingCriterion {
 public:
  // Throws std::invalid_argument unless budget_s is positive (+infinity means no budget).
  explicit TimeBudgetCriterion(double budget_s);

  std::string name() const override;
  bool should_stop(const MeasurementState& state) const override;
  std::string reason() const override;

  double budget_s() const { return budget_s_; }

 private:
  double budget_s_;
};

}  // namespace kforge::measure
