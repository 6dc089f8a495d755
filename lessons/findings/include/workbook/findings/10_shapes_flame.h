#pragma once
/// \file
/// \brief Lesson 10's findings: a table grouped by input shape, and collapsed stacks' format.

#include <string>

#include "workbook/findings/finding.h"
#include "workbook/profiler/key_averages.h"

namespace workbook::findings10 {

/// Grouped by input shape, the same op is a row per distinct list of shapes: aten::mm is at least
/// three rows of `grouped` (the block's GEMMs differ in shape).
Finding one_row_per_shape(const KeyAverages& grouped);

/// Every line of `stacks` (export_stacks' format) is "frame;frame;... microseconds": frames
/// without spaces or semicolons, a whole number last; at least one line.
Finding stacks_well_formed(const std::string& stacks);

/// The op with the most self CPU time by name (regions, device work and memory rows left out) is
/// also the op of the costliest (op, input shapes) row: `by_name` and `by_shape` are the same
/// profile's tables. NOT shown when another op owns the costliest shape.
Finding top_op_owns_top_shape(const KeyAverages& by_name, const KeyAverages& by_shape);

}  // namespace workbook::findings10
