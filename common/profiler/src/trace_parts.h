#pragma once
// A large trace file read in parts on two threads (see PartsReader in trace_parts.cpp).

#include <cstdint>
#include <memory>
#include <string>

#include "trace_reader.h"

namespace workbook::detail {

/// The file `fd` of `size` bytes read in parts of about `part_bytes` (at most 16) by this thread
/// and one more: a reader holding every event exactly as one reader of the whole file would, or
/// none, when the parts could not be used (the file does not split between events where its parts
/// begin, a part met an error or a "B"/"E" event, no second thread): then the caller reads it with
/// one reader. A TraceError from the start of the file, read as one reader reads it, is thrown.
std::unique_ptr<TraceReader> read_in_parts(const std::string& source, int fd, std::uint64_t size,
                                           std::uint64_t part_bytes);

}  // namespace workbook::detail
