#include "decimal.h"

#include <algorithm>
#include <limits>

namespace workbook::detail {

namespace {

// The usual case, at a trace's pace: plain digits with at most `shift` of them after the point and
// at most 18 in all, so that the value times 10^shift fits an int64 without rounding. False for
// anything else (an exponent, more fraction, more digits), which the exact path then reads.
bool plain_decimal_to_int(std::string_view text, int shift, std::int64_t& out) {
  std::size_t i = text.size() > 0 && text[0] == '-' ? 1 : 0;
  std::uint64_t value = 0;
  int digits = 0, fraction = -1;  // fraction: digits after the point, -1 before it
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      if (++digits > 18) return false;
      value = value * 10 + std::uint64_t(c - '0');
      if (fraction >= 0) ++fraction;
    } else if (c == '.' && fraction < 0) {
      fraction = 0;
    } else {
      return false;
    }
  }
  const int scale = shift - std::max(fraction, 0);
  if (digits == 0 || scale < 0 || digits + scale > 18) return false;
  for (int k = 0; k < scale; ++k) value *= 10;
  out = text[0] == '-' ? -std::int64_t(value) : std::int64_t(value);
  return true;
}

}  // namespace

bool decimal_to_int(std::string_view text, int shift, std::int64_t& out) {
  if (plain_decimal_to_int(text, shift, out)) return true;
  std::size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  char digits[40];
  int n = 0, dropped = 0, frac_digits = 0;
  bool in_fraction = false;
  int first_dropped = -1;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      in_fraction = true;
      continue;
    }
    if (c == 'e' || c == 'E') break;
    if (in_fraction) ++frac_digits;
    if (n == 0 && c == '0') continue;  // leading zeros
    if (n < 38) {
      digits[n++] = c;
    } else {
      if (first_dropped < 0) first_dropped = c - '0';
      ++dropped;
    }
  }
  long exponent = 0;
  if (i < text.size()) {  // exponent
    ++i;
    bool exp_negative = false;
    if (text[i] == '+' || text[i] == '-') exp_negative = text[i++] == '-';
    for (; i < text.size(); ++i) exponent = std::min(exponent * 10 + (text[i] - '0'), 100000L);
    if (exp_negative) exponent = -exponent;
  }
  // value = digits × 10^(e) with e = exponent + shift - frac_digits + dropped
  const long e = exponent + shift - frac_digits + dropped;
  if (n == 0) {
    out = 0;
    return true;
  }
  const long integer_digits = n + e;
  if (integer_digits > 19) return false;
  unsigned __int128 value = 0;
  int round_digit = -1;
  if (e >= 0) {
    for (int k = 0; k < n; ++k) value = value * 10 + unsigned(digits[k] - '0');
    for (long k = 0; k < e; ++k) value *= 10;
  } else {
    const long keep = integer_digits;  // may be <= 0
    for (long k = 0; k < keep; ++k) value = value * 10 + unsigned(digits[k] - '0');
    if (keep >= 0) round_digit = keep < n ? digits[keep] - '0' : first_dropped;
    if (round_digit >= 5) value += 1;
  }
  const unsigned __int128 limit = negative ? (unsigned __int128)std::numeric_limits<std::int64_t>::max() + 1
                                           : (unsigned __int128)std::numeric_limits<std::int64_t>::max();
  if (value > limit) return false;
  out = negative ? std::int64_t(-(__int128)value) : std::int64_t(value);
  return true;
}

}  // namespace workbook::detail
