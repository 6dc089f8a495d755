#pragma once
/// \file
/// \brief Numbers as Python's profiler prints them: times and memory sizes.

#include <cstdint>
#include <string>

namespace workbook {

/// Python's `_format_time`: "12.345us", "1.234ms", "1.234s".
std::string format_time_us(double us);
/// Python's `_format_memory`: "512 b", "16.00 Kb", "1.50 Mb", "2.00 Gb".
std::string format_memory(std::int64_t bytes);

}  // namespace workbook
