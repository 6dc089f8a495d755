#include "workbook/profiler/format.h"

#include <fmt/format.h>

#include <cmath>

namespace workbook {

std::string format_time_us(double us) {
  if (us >= 1e6) return fmt::format("{:.3f}s", us / 1e6);
  if (us >= 1e3) return fmt::format("{:.3f}ms", us / 1e3);
  return fmt::format("{:.3f}us", us);
}

std::string format_memory(std::int64_t bytes) {
  const double kb = 1024, mb = kb * 1024, gb = mb * 1024;
  const double a = std::fabs(double(bytes));
  if (a >= gb) return fmt::format("{:.2f} Gb", double(bytes) / gb);
  if (a >= mb) return fmt::format("{:.2f} Mb", double(bytes) / mb);
  if (a >= kb) return fmt::format("{:.2f} Kb", double(bytes) / kb);
  return fmt::format("{} b", bytes);
}

std::string shortened(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t cut = max_bytes > 3 ? max_bytes - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t k) { return at + k < text.size() ? static_cast<unsigned char>(text[at + k]) : 0u; };
  const unsigned lead = byte(0);
  std::size_t length = 0;
  unsigned low = 0x80, high = 0xBF;  // the allowed range of the second byte (RFC 3629's table)
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF)
    length = 2;
  else if (lead >= 0xE0 && lead <= 0xEF)
    length = 3, low = lead == 0xE0 ? 0xA0 : 0x80, high = lead == 0xED ? 0x9F : 0xBF;
  else if (lead >= 0xF0 && lead <= 0xF4)
    length = 4, low = lead == 0xF0 ? 0x90 : 0x80, high = lead == 0xF4 ? 0x8F : 0xBF;
  else
    return 0;
  if (byte(1) < low || byte(1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k)
    if (byte(k) < 0x80 || byte(k) > 0xBF) return 0;
  return length;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const auto next = [&](std::size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0; };
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else if (byte == 0xC2 && next(1) >= 0x80 && next(1) <= 0x9F) {
      // C1 controls (U+0080..U+009F): U+009B starts a terminal escape like ESC [ does.
      out += fmt::format("\\u{{{:04x}}}", next(1));
      i += 1;
    } else if (byte == 0xE2 && ((next(1) == 0x80 && next(2) >= 0xAA && next(2) <= 0xAE) ||
                                (next(1) == 0x81 && next(2) >= 0xA6 && next(2) <= 0xA9))) {
      // Bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069) reorder what follows.
      out += fmt::format("\\u{{{:04x}}}", 0x2000 | ((next(1) & 0x3F) << 6) | (next(2) & 0x3F));
      i += 2;
    } else if (byte >= 0x80) {
      // Any other non-ASCII byte passes only as part of a well-formed UTF-8 sequence; a stray or
      // truncated one is escaped (a terminal or an XML reader would choke on it).
      const std::size_t length = utf8_sequence_length(text, i);
      if (length == 0) {
        out += fmt::format("\\x{:02x}", byte);
      } else {
        out.append(text.substr(i, length));
        i += length - 1;
      }
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace workbook
