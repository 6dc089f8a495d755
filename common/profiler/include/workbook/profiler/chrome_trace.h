#pragma once
/// \file
/// \brief Chrome trace (Trace Event Format) export and import, in Kineto's dialect.
///
/// The files open in https://ui.perfetto.dev and chrome://tracing. Export works without
/// Kineto; import reads our files, LibTorch/Kineto's `ProfilerResult::save()` output and
/// Python's `export_chrome_trace` (Kineto and legacy).

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "workbook/profiler/profile.h"

namespace workbook {

/// A trace that cannot be read: the message names the source and what is wrong.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What goes into an exported trace besides the events.
struct TraceOptions {
  std::string process_name = "workbook";  ///< label of the host process lane
  long pid = 0;                           ///< host process id; 0 uses the current process's
  std::string trace_name;                 ///< optional "traceName" field
};

/// The profile as Kineto-style JSON: `ph:"X"` events (cat, name, pid, tid, ts and dur in µs),
/// `ph:"i"` memory instants, `ph:"M"` process and thread names, GPU lanes, and `ac2g` flow
/// events linking each launch to its kernel.
std::string to_chrome_trace(const Profile& profile, const TraceOptions& options = {});

/// Writes `to_chrome_trace` to `path` atomically (temporary file, then rename), gzip-compressed
/// when `path` ends in `.gz`.
void write_chrome_trace(const Profile& profile, const std::filesystem::path& path, const TraceOptions& options = {});

/// Parses trace JSON into a Profile, or gzip data holding it (decompressed up to kMaxStreamBytes);
/// `source` names it in errors. Throws TraceError.
Profile parse_chrome_trace(std::string_view json, const std::string& source = "trace");

/// How much of a pipe or device, or of what gzip data decompresses to, `load_chrome_trace` reads
/// before it gives up (a stream that never ends, a small file that expands a thousandfold); a
/// regular uncompressed file is read whole, whatever its size.
/// (Its events take about half its size in memory.)
inline constexpr std::uint64_t kMaxStreamBytes = std::uint64_t(2) << 30;

/// Reads and parses a trace file, a pipe or a device as a stream, in blocks; gzip data (Kineto's
/// `.pt.trace.json.gz`, known by its first bytes) is decompressed as it is read. Throws TraceError
/// naming the file, also when a stream or decompressed data passes `max_stream_bytes`.
Profile load_chrome_trace(const std::filesystem::path& path, std::uint64_t max_stream_bytes = kMaxStreamBytes);

}  // namespace workbook
