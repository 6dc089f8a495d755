// Decimal text to exact integers (common/profiler/src/decimal.h) and Kineto's category table
// read both ways (kineto_meaning.h): the importer's conversions, apart from its JSON reading.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

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
