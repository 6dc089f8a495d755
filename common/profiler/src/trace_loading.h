#pragma once
// load_chrome_trace with its split threshold given, for the tests: they split files of any size into
// parts to prove that readers in parts give what one reader gives.

#include <cstdint>
#include <filesystem>

#include "workbook/profiler/chrome_trace.h"

namespace workbook::detail {

/// From this size on, a regular, uncompressed trace file is read in parts (of about half this size,
/// at most 16) by two threads; below a few MB a second thread gains little.
inline constexpr std::uint64_t kSplitFromBytes = std::uint64_t(4) << 20;

/// load_chrome_trace, reading files of `split_from` bytes or more in parts (split_from / 2 bytes
/// each, at most 16) on two threads when the machine has two cores: the result is the same as one
/// reader's, errors included. `read_in_parts`, if given, says whether the parts gave the result
/// (else one reader read it all).
Profile load_chrome_trace(const std::filesystem::path& path, std::uint64_t max_stream_bytes, std::uint64_t split_from,
                          bool* read_in_parts = nullptr);

}  // namespace workbook::detail
