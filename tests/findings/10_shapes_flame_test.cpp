// Lesson 10's findings: a by-shape table and collapsed stacks, shown and NOT shown.
#include <doctest/doctest.h>

#include "synthetic_events.h"
#include "workbook/findings/10_shapes_flame.h"

using testing::make_event;
using workbook::Event;
using workbook::Profile;
namespace f10 = workbook::findings10;

namespace {

Event mm(std::int64_t start, std::vector<std::vector<std::int64_t>> shapes) {
  Event e = make_event("aten::mm", start, start + 10);
  e.input_shapes = std::move(shapes);
  return e;
}

}  // namespace

TEST_CASE("aten::mm is a row per shape: NOT shown when every GEMM has one shape") {
  const Profile three_shapes({mm(0, {{8, 8}, {8, 24}}), mm(20, {{8, 8}, {8, 8}}), mm(40, {{8, 32}, {32, 8}})});
  CHECK(f10::one_row_per_shape(workbook::KeyAverages(three_shapes, true)).holds);
  CHECK_FALSE(f10::one_row_per_shape(workbook::KeyAverages(three_shapes, false)).holds);  // grouped by name
  const Profile one_shape({mm(0, {{8, 8}, {8, 8}}), mm(20, {{8, 8}, {8, 8}}), mm(40, {{8, 8}, {8, 8}})});
  CHECK_FALSE(f10::one_row_per_shape(workbook::KeyAverages(one_shape, true)).holds);
}

TEST_CASE("stacks are 'frame;frame;... microseconds': NOT shown for a space in a frame, no number, or nothing") {
  CHECK(f10::stacks_well_formed("ProfilerStep#1;block_forward;aten::mm 12\nProfilerStep#1 3\n").holds);
  CHECK_FALSE(f10::stacks_well_formed("ProfilerStep#1;block forward 12\n").holds);
  CHECK_FALSE(f10::stacks_well_formed("ProfilerStep#1;aten::mm\n").holds);
  CHECK_FALSE(f10::stacks_well_formed("").holds);
}

TEST_CASE("the top op by name owns the top shape: NOT shown when many small calls win by name only") {
  // aten::mm: 3 x 10 ns at three shapes (30 by name, 10 per shape); aten::add: 20 ns at one shape.
  Event add = make_event("aten::add", 100, 120);
  add.input_shapes = {{8}, {8}};
  const Profile spread({mm(0, {{8, 8}, {8, 24}}), mm(20, {{8, 8}, {8, 8}}), mm(40, {{8, 32}, {32, 8}}), add});
  CHECK_FALSE(f10::top_op_owns_top_shape(workbook::KeyAverages(spread), workbook::KeyAverages(spread, true)).holds);
  // The same GEMMs at one shape: aten::mm wins both ways.
  const Profile one({mm(0, {{8, 8}, {8, 8}}), mm(20, {{8, 8}, {8, 8}}), mm(40, {{8, 8}, {8, 8}}), add});
  CHECK(f10::top_op_owns_top_shape(workbook::KeyAverages(one), workbook::KeyAverages(one, true)).holds);
}
