#pragma once
// Sums of values read from a trace: a hostile or corrupt trace can hold byte counts, FLOPs or
// durations whose sum does not fit in 64 bits. Such sums stop at the limit instead of overflowing
// (undefined behaviour); real profiles never come near it.

#include <cstdint>
#include <limits>

namespace workbook::detail {

inline std::int64_t saturate(__int128 v) {
  if (v > std::numeric_limits<std::int64_t>::max()) return std::numeric_limits<std::int64_t>::max();
  if (v < std::numeric_limits<std::int64_t>::min()) return std::numeric_limits<std::int64_t>::min();
  return std::int64_t(v);
}

/// a + b, held at the int64 limits.
inline std::int64_t sat_add(std::int64_t a, std::int64_t b) { return saturate(__int128(a) + b); }

/// a - b, held at the int64 limits.
inline std::int64_t sat_sub(std::int64_t a, std::int64_t b) { return saturate(__int128(a) - b); }

}  // namespace workbook::detail
