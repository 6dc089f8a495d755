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

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f)
      out += fmt::format("\\x{:02x}", byte);
    else
      out += c;
  }
  return out;
}

}  // namespace workbook
