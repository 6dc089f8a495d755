// Decimal text to exact integers (common/profiler/src/decimal.h) and Kineto's category table
// read both ways (kineto_meaning.h): the importer's conversions, apart from its JSON reading.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "decimal.h"
#include "kineto_meaning.h"

using workbook::detail::decimal_to_int;

namespace {

std::int64_t ns(const char* us_text) {
  std::int64_t out = -1;
  REQUIRE(decimal_to_int(us_text, 3, out));
  return out;
}

}  // namespace

TEST_SUITE("decimal") {
  TEST_CASE("microseconds become exact nanoseconds, rounded half away from zero") {
    CHECK(ns("0") == 0);
    CHECK(ns("1") == 1000);
    CHECK(ns("1.5") == 1500);
    CHECK(ns("0.0004") == 0);
    CHECK(ns("0.0005") == 1);
    CHECK(ns("-0.0005") == -1);
    CHECK(ns("2.0015") == 2002);
    CHECK(ns("-2.0014") == -2001);
    CHECK(ns("1e3") == 1000000);
    CHECK(ns("1.25E-1") == 125);
    CHECK(ns("000012.5") == 12500);
  }

  TEST_CASE("a 19-digit time stamp keeps every nanosecond a double would lose") {
    // 1.7e15 us since the epoch: a double's step there is 0.25 us.
    CHECK(ns("1700000000123456.789") == 1700000000123456789);
    CHECK(ns("1700000000123456.7894") == 1700000000123456789);
    CHECK(ns("1700000000123456.7895") == 1700000000123456790);
  }

  TEST_CASE("plain decimal text of every length agrees with a digit-by-digit reference, the fast path's edges too") {
    // Up to 18 digits with at most `shift` after the point take a shorter path: it must give what
    // rounding the exact value gives, on both sides of that edge.
    std::uint64_t state = 12345;
    const auto next = [&state](unsigned below) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      return unsigned(state >> 33) % below;
    };
    for (int trial = 0; trial < 20000; ++trial) {
      const bool negative = next(2) == 1;
      const unsigned whole = 1 + next(20), fraction = next(6), shift = next(4);
      std::string text = negative ? "-" : "";
      for (unsigned k = 0; k < whole; ++k) text += char('0' + (k == 0 && whole > 1 ? 1 + next(9) : next(10)));
      if (fraction > 0) text += '.';
      for (unsigned k = 0; k < fraction; ++k) text += char('0' + next(10));
      // The reference: all digits as one integer, scaled by 10^(shift - fraction), rounded half up.
      unsigned __int128 digits = 0;
      for (const char c : text)
        if (c >= '0' && c <= '9') digits = digits * 10 + unsigned(c - '0');
      const int scale = int(shift) - int(fraction);
      for (int k = 0; k < scale; ++k) digits *= 10;
      for (int k = 0; k < -scale; ++k) digits = k + 1 == -scale ? (digits + 5) / 10 : digits / 10;
      const unsigned __int128 limit =
          static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
      std::int64_t out = 0;
      CAPTURE(text);
      CAPTURE(shift);
      REQUIRE(decimal_to_int(text, int(shift), out) == (digits <= limit));
      const __int128 expected = negative ? -static_cast<__int128>(digits) : static_cast<__int128>(digits);
      if (digits <= limit) CHECK(out == std::int64_t(expected));
    }
  }

  TEST_CASE("the int64 edges fit, one past them does not") {
    std::int64_t out = 0;
    CHECK(decimal_to_int("9223372036854775807", 0, out));
    CHECK(out == std::numeric_limits<std::int64_t>::max());
    CHECK(decimal_to_int("-9223372036854775808", 0, out));
    CHECK(out == std::numeric_limits<std::int64_t>::min());
    CHECK_FALSE(decimal_to_int("9223372036854775808", 0, out));
    CHECK(decimal_to_int("9223372036854775.807", 3, out));  // the largest stamp in ns
    CHECK(out == std::numeric_limits<std::int64_t>::max());
    CHECK_FALSE(decimal_to_int("9223372036854776", 3, out));
    CHECK_FALSE(decimal_to_int("1e400", 0, out));
    CHECK(decimal_to_int("1e-400", 0, out));
    CHECK(out == 0);
  }

  TEST_CASE("integer text is told from fractions and exponents") {
    CHECK(workbook::detail::is_integer_text("123"));
    CHECK(workbook::detail::is_integer_text("-7"));
    CHECK_FALSE(workbook::detail::is_integer_text("1.0"));
    CHECK_FALSE(workbook::detail::is_integer_text("1e3"));
  }
}

TEST_SUITE("kineto categories") {
  TEST_CASE("what the exporter writes, the importer reads back as the same meaning") {
    using workbook::Category;
    using workbook::DeviceWork;
    for (Category c : {Category::cpu_op, Category::user_annotation, Category::kernel, Category::runtime}) {
      const auto row = workbook::detail::kineto_category(workbook::category_name(c));
      REQUIRE(row);
      CHECK(row->category == c);
    }
    for (DeviceWork w :
         {DeviceWork::kernel, DeviceWork::memcpy, DeviceWork::memset, DeviceWork::sync, DeviceWork::annotation}) {
      const auto row = workbook::detail::kineto_category(workbook::device_work_name(w));
      REQUIRE(row);
      CHECK(row->on_device);
      CHECK(row->work == w);
    }
    CHECK_FALSE(workbook::detail::kineto_category("no such category"));
    CHECK(workbook::detail::kineto_category("Memcpy")->work == DeviceWork::memcpy);  // an older spelling
  }

  TEST_CASE("c10 device codes in memory records: CPU, CUDA, or neither") {
    CHECK(workbook::detail::memory_device(0) == workbook::DeviceType::cpu);
    CHECK(workbook::detail::memory_device(5) == workbook::DeviceType::cpu);
    CHECK(workbook::detail::memory_device(6) == workbook::DeviceType::cuda);
    CHECK_FALSE(workbook::detail::memory_device(3));
  }
}
