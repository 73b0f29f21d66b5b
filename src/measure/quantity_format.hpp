#pragma once

#include <string>

namespace kforge::measure {

// Short human-readable numbers for stop messages, locale-independent: 3 significant digits with
// trailing zeros trimmed below 1000 ("10", "2.5", "0.812"), whole numbers from 1000 up ("1234");
// non-finite values print as "inf" / "nan".
std::string format_significant(double value);

// A fraction as a percentage: 0.008 -> "0.8%", 0.01 -> "1%".
std::string format_percent(double fraction);

}  // namespace kforge::measure
