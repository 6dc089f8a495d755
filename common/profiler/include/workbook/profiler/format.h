#pragma once
/// \file
/// \brief Numbers as Python's profiler prints them (times and memory sizes), and names made safe
/// for a terminal.

#include <cstdint>
#include <string>
#include <string_view>

namespace workbook {

/// Python's `_format_time`: "12.345us", "1.234ms", "1.234s".
std::string format_time_us(double us);
/// Python's `_format_memory`: "512 b", "16.00 Kb", "1.50 Mb", "2.00 Gb".
std::string format_memory(std::int64_t bytes);
/// The text with its control characters written out: bytes below 0x20 and 0x7f as `\xNN`, the C1
/// controls and the bidirectional overrides as `\u{NNNN}`, and any byte that is not part of
/// well-formed UTF-8 as `\xNN`. A name read from a trace can then neither move a terminal's
/// cursor, reorder a line, nor break a line or an XML file.
std::string printable(std::string_view text);

/// The length of the well-formed UTF-8 sequence starting at `at` (1 for ASCII), or 0 when the
/// bytes there are not one (a stray continuation byte, an overlong form, a surrogate, a cut).
std::size_t utf8_sequence_length(std::string_view text, std::size_t at);

/// The text itself when it has at most `max_bytes` bytes, else its start followed by "..." in
/// `max_bytes` bytes, cut at the start of a character, never inside a multi-byte one.
std::string shortened(std::string_view text, std::size_t max_bytes);

}  // namespace workbook
