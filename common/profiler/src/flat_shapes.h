#pragma once
// Shapes collected flat (the trace reader's form) turned back into one vector per input: shared by
// the event table, which stores each distinct list once, and the reader, which keeps a "B" event's
// shapes until its "E" comes.

#include <cstddef>

#include "workbook/profiler/event_table.h"

namespace workbook::detail {

/// One vector of sizes per input, from the flat sizes and their ends.
inline Shapes shapes_of(const FlatShapes& flat) {
  Shapes shapes;
  shapes.reserve(flat.ends.size());
  std::size_t begin = 0;
  for (const std::size_t end : flat.ends) {
    shapes.emplace_back(flat.sizes.begin() + std::ptrdiff_t(begin), flat.sizes.begin() + std::ptrdiff_t(end));
    begin = end;
  }
  return shapes;
}

}  // namespace workbook::detail
