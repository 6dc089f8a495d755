#pragma once
// The only door to LibTorch's profiler API. Its implementation is the one file that knows how
// LibTorch versions differ (1.13: no Kineto, save() throws; 2.x: Kineto, prepareProfiler is
// mandatory before enableProfiler, inputs recorded as tensor metadata).

#include <string>

#include "workbook/profiler/profile.h"

namespace workbook::detail {

/// What the LibTorch profiler records.
struct RecorderConfig {
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_flops = false;
  bool cuda = false;  ///< also collect CUDA activity (kernels, runtime calls)
};

/// Starts recording on the calling thread (prepares first when that was not done).
void start_profiler(const RecorderConfig& config);
/// Stops recording and converts LibTorch's events into a Profile with times from its first event.
/// When `kineto_trace_path` is not empty, also asks LibTorch to save its own trace there and
/// reports in `saved` whether it could (it cannot without Kineto). When `first_kept` is not
/// empty, the recording is cut before the host event of that name (events_from, normalize.h).
Profile stop_profiler(const std::string& kineto_trace_path = "", bool* saved = nullptr,
                      const std::string& first_kept = "");
/// How many times this process started the profiler (a test's witness that a Session's warm-up
/// runs on into its active steps instead of restarting).
int profiler_starts();
/// Stops recording and throws the events away (a session's warm-up).
void discard_recording();
/// True while this library's recording is active.
bool profiler_running();

/// "1.13.1" etc.
std::string torch_version();
/// Whether this LibTorch has Kineto: a tiny profile whose save() is tried (the answer is cached;
/// asked while a recording runs it says false without caching).
bool kineto_available();

}  // namespace workbook::detail
