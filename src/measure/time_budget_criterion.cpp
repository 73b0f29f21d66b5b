#include "measure/time_budget_criterion.hpp"

#include <stdexcept>

#include "measure/quantity_format.hpp"

namespace kforge::measure {

TimeBudgetCriterion::TimeBudgetCriterion(double budget_s) : budget_s_(budget_s) {
  // Written as !(x > 0) so NaN is rejected too.
  if (!(budget_s > 0.0)) {
    throw std::invalid_argument("time budget must be positive seconds");
  }
}

std::string TimeBudgetCriterion::name() const { return "time-budget"; }

bool TimeBudgetCriterion::should_stop(const MeasurementState& state) const {
  return state.elapsed_s >= budget_s_;
}

std::string TimeBudgetCriterion::reason() const {
  return "time budget " + format_significant(budget_s_) + " s reached";
}

}  // namespace kforge::measure
