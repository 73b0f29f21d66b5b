#pragma once

#include <cstddef>
#include <span>
#include <stdexcept>

namespace kforge::measure {

// Thrown when a timing sample is NaN or infinite. Such a sample means the timer itself failed,
// so it is rejected rather than dropped: dropping it would quietly bias every statistic.
class NonFiniteSampleError : public std::invalid_argument {
 public:
  NonFiniteSampleError(std::size_t index, double value);

  std::size_t index() const noexcept { return index_; }
  double value() const noexcept { return value_; }

 private:
  std::size_t index_;
  double value_;
};

// Throws NonFiniteSampleError naming the first NaN or infinite sample; empty input is accepted.
void require_finite_samples(std::span<const double> samples);

// For kernel times: require_finite_samples, then std::invalid_argument naming the first sample
// <= 0, since a zero or negative duration also means the timer failed (and would break ratios).
void require_positive_times(std::span<const double> samples_ms);

}  // namespace kforge::measure
