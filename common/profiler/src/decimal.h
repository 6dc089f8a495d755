#pragma once
// Decimal text to integers, exactly: a trace's times are decimal µs text, and a double has only
// 0.25 µs steps at µs-since-epoch time stamps (~1.7e15), so they go from text straight to ns.

#include <cstdint>
#include <string_view>

namespace workbook::detail {

/// Decimal text in JSON's number grammar (already checked) times 10^shift, rounded half away
/// from zero, into `out`. False when the result does not fit in an int64.
bool decimal_to_int(std::string_view text, int shift, std::int64_t& out);

/// True when the number's text has no fraction and no exponent.
inline bool is_integer_text(std::string_view text) {
  // A loop, not find_first_of: that calls memchr once for each character of a short text.
  for (const char c : text)
    if (c == '.' || c == 'e' || c == 'E') return false;
  return true;
}

}  // namespace workbook::detail
