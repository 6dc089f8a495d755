#pragma once
// load_chrome_trace with its split threshold given, for the tests: they split files of any size to
// prove that two readers give what one gives.

#include <cstdint>
#include <filesystem>

#include "workbook/profiler/chrome_trace.h"

namespace workbook::detail {

/// From this size on, a regular, uncompressed trace file is read by two threads (each half of a
/// 100 MB trace takes about a tenth of a second alone; below a few MB a second thread gains little).
inline constexpr std::uint64_t kSplitFromBytes = std::uint64_t(4) << 20;

/// load_chrome_trace, splitting files of `split_from` bytes or more between two readers when the
/// machine has two cores: the result is the same as one reader's, errors included. `read_by_two`,
/// if given, says whether the second reader's part was used (else one reader read it all).
Profile load_chrome_trace(const std::filesystem::path& path, std::uint64_t max_stream_bytes, std::uint64_t split_from,
                          bool* read_by_two = nullptr);

}  // namespace workbook::detail
