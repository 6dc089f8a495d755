// Lesson 11's findings on hand-made profiles and peaks: each shown where the run bears it out,
// NOT shown where it does not, and a missing variant is an error, never a count of zero.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "synthetic_events.h"
#include "workbook/findings/11_attention.h"

using testing::make_event;
using workbook::Category;
using workbook::Event;
using workbook::Profile;
namespace f11 = workbook::findings11;

namespace {

// One forward named `region` at `at` us holding `ops`. Leading '>' give an op's depth: ">aten::clone"
// is a child of the latest op one level up (each level's ops sit side by side inside their parent).
void forward(std::vector<Event>& e, const char* region, std::int64_t at, std::vector<const char*> ops) {
  const std::int64_t base = at * 1000;
  e.push_back(make_event(region, base, base + 900, Category::user_annotation));
  const std::int64_t width[] = {200, 40, 8};
  std::vector<std::int64_t> cursor{base + 10};  // where the next op at each depth starts
  for (const char* op : ops) {
    std::size_t depth = 0;
    while (op[depth] == '>') ++depth;
    cursor.resize(depth + 1);
    const std::int64_t start = cursor[depth] + 1, end = start + width[depth];
    e.push_back(make_event(op + depth, start, end));
    cursor[depth] = end;
    cursor.push_back(start);  // its children start inside it
  }
}

Profile attention_forwards(bool naive_copies = true, bool inplace_clean = true, bool math_tril = true) {
  std::vector<Event> e;
  for (int call = 0; call < 2; ++call) {
    forward(e, "naive", call * 10 + 0,
            naive_copies ? std::vector<const char*>{"aten::bmm", "aten::masked_fill", ">aten::clone", ">>aten::copy_",
                                                    ">aten::masked_fill_"}
                         : std::vector<const char*>{"aten::bmm", "aten::masked_fill", ">aten::masked_fill_"});
    forward(e, "naive_inplace", call * 10 + 1,
            inplace_clean ? std::vector<const char*>{"aten::bmm", "aten::masked_fill_"}
                          : std::vector<const char*>{"aten::bmm", "aten::masked_fill", ">aten::clone", ">aten::copy_",
                                                     "aten::masked_fill_"});
    forward(e, "sdpa_math", call * 10 + 2,
            math_tril ? std::vector<const char*>{"aten::ones", "aten::tril", "aten::_safe_softmax"}
                      : std::vector<const char*>{"aten::ones", "aten::_safe_softmax"});
    forward(e, "sdpa_flash", call * 10 + 3, {"aten::_scaled_dot_product_flash_attention_for_cpu", "aten::transpose"});
  }
  return Profile(std::move(e));
}

}  // namespace

TEST_CASE("the hidden copy: shown with clone -> copy_ beneath masked_fill, NOT shown without it") {
  const Profile p = attention_forwards();
  CHECK(f11::out_of_place_mask_copies(p).holds);
  CHECK_FALSE(f11::out_of_place_mask_copies(attention_forwards(/*naive_copies=*/false)).holds);
}

TEST_CASE("in place drops the copy: NOT shown when an in-place forward still clones") {
  CHECK(f11::in_place_drops_the_copy(attention_forwards()).holds);
  CHECK_FALSE(f11::in_place_drops_the_copy(attention_forwards(true, /*inplace_clean=*/false)).holds);
}

TEST_CASE("the math path rebuilds its mask: NOT shown when a forward has no tril, or no ones") {
  CHECK(f11::math_rebuilds_the_mask(attention_forwards()).holds);
  CHECK_FALSE(f11::math_rebuilds_the_mask(attention_forwards(true, true, /*math_tril=*/false)).holds);
  std::vector<Event> e;
  forward(e, "sdpa_math", 0, {"aten::tril", "aten::_safe_softmax"});
  CHECK_FALSE(f11::math_rebuilds_the_mask(Profile(std::move(e))).holds);
}

TEST_CASE("_safe_softmax and the flash op: each NOT shown when a forward lacks it or runs a GEMM") {
  const Profile p = attention_forwards();
  CHECK(f11::math_uses_safe_softmax(p).holds);
  CHECK(f11::flash_is_one_fused_op(p).holds);
  std::vector<Event> e;
  forward(e, "sdpa_math", 0, {"aten::softmax"});
  forward(e, "sdpa_flash", 1, {"aten::_scaled_dot_product_flash_attention_for_cpu", "aten::bmm"});
  const Profile unfused(std::move(e));
  CHECK_FALSE(f11::math_uses_safe_softmax(unfused).holds);
  CHECK_FALSE(f11::flash_is_one_fused_op(unfused).holds);
}

TEST_CASE("memory against seq: squared growth, and no [seq, seq] buffer, each NOT shown the other way") {
  f11::MemoryBySeq quadratic{"naive", {128, 256, 512}, {1000, 4000, 16100}, {}};
  f11::MemoryBySeq flash{"sdpa_flash", {128, 256, 512}, {1000, 2600, 5100}, {}};
  CHECK(f11::peak_grows_as_seq_squared(quadratic).holds);
  CHECK_FALSE(f11::peak_grows_as_seq_squared(flash).holds);
  // One head: a [seq, seq] float matrix is 64, 256, 1024 KiB at these seqs.
  quadratic.largest_allocation_bytes = {65536, 262144, 1048576};
  flash.largest_allocation_bytes = {4096, 8192, 16384};
  CHECK(f11::no_seq_squared_buffer(flash, 1).holds);
  CHECK_FALSE(f11::no_seq_squared_buffer(quadratic, 1).holds);
  CHECK(f11::no_seq_squared_buffer(flash, 1).evidence.rfind(
            "sdpa_flash's largest allocation: seq 128 4.0 KiB of 64.0 KiB", 0) == 0);
  CHECK_FALSE(f11::no_seq_squared_buffer({"x", {128}, {1000}, {}}, 1).holds);  // nothing measured: nothing shown
  // A kernel's fixed blocks may outweigh a tiny matrix at short seqs: the longest seq decides.
  flash.largest_allocation_bytes = {80000, 200000, 16384};
  CHECK(f11::no_seq_squared_buffer(flash, 1).holds);
  flash.largest_allocation_bytes = {4096, 8192, 1048576};
  CHECK_FALSE(f11::no_seq_squared_buffer(flash, 1).holds);
  // One seq says nothing about growth.
  CHECK_FALSE(f11::peak_grows_as_seq_squared({"x", {128}, {1000}, {}}).holds);
}

TEST_CASE("in place and the peak: alike, lower or not lower, as the numbers say") {
  const f11::MemoryBySeq naive{"naive", {128, 256}, {1000, 4000}, {}};
  CHECK(f11::in_place_peak(naive, {"naive_inplace", {128, 256}, {1000, 4000}, {}}).find("peak alike") !=
        std::string::npos);
  CHECK(f11::in_place_peak(naive, {"naive_inplace", {128, 256}, {1000, 3000}, {}}) ==
        "Here the in-place version peaks 1.0 KiB lower at seq 256");
  CHECK(f11::in_place_peak(naive, {"naive_inplace", {128, 256}, {1000, 5024}, {}}).find("does not peak lower") !=
        std::string::npos);
  CHECK_THROWS_AS(f11::in_place_peak(naive, {"naive_inplace", {128}, {1000}, {}}), std::invalid_argument);
}

TEST_CASE("a fully masked row: NaN from softmax and 0 from _safe_softmax, NOT shown otherwise") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(f11::safe_softmax_zeroes_masked_rows({nan, nan}, {0, 0}).holds);
  CHECK_FALSE(f11::safe_softmax_zeroes_masked_rows({0.5f, 0.5f}, {0, 0}).holds);
  CHECK_FALSE(f11::safe_softmax_zeroes_masked_rows({nan, nan}, {nan, nan}).holds);
  CHECK_FALSE(f11::safe_softmax_zeroes_masked_rows({}, {}).holds);
}

TEST_CASE("a variant missing from the profile is an error, not a count of zero") {
  const Profile only_naive({make_event("naive", 0, 10, Category::user_annotation)});
  CHECK_THROWS_WITH_AS(f11::in_place_drops_the_copy(only_naive), doctest::Contains("naive_inplace"),
                       std::invalid_argument);
  CHECK_THROWS_AS(f11::flash_is_one_fused_op(only_naive), std::invalid_argument);
}
