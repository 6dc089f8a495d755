#pragma once
/// \file
/// \brief A profiling session: Python's `with torch.profiler.profile(schedule=...) as prof`.

#include <functional>
#include <memory>
#include <string>

#include "workbook/profiler/profile.h"

namespace workbook {

/// Python's `torch.profiler.schedule(wait, warmup, active, repeat, skip_first)`.
/// Steps are numbered from 0; each cycle is `wait` idle steps, `warmup` steps where the
/// profiler runs but discards what it sees, then `active` recorded steps.
struct Schedule {
  /// What the profiler does during a step.
  enum class Action { none, warmup, record, record_and_save };

  int wait = 0;        ///< idle steps at the start of each cycle
  int warmup = 0;      ///< steps profiled and discarded
  int active = 1;      ///< steps recorded
  int repeat = 1;      ///< cycles; 0 repeats for ever
  int skip_first = 0;  ///< idle steps before the first cycle

  /// Python's default when no schedule is given: every step is recorded until the end.
  static Schedule record_all();

  Schedule() = default;
  /// Throws std::invalid_argument for negative counts or active < 1.
  Schedule(int wait, int warmup, int active, int repeat = 1, int skip_first = 0);

  /// The action for a step, with Python's arithmetic.
  Action action(int step) const;
  /// Steps needed to run every cycle once through (skip_first + repeat cycles); 0 when it never ends.
  int total_steps() const;

 private:
  bool record_all_ = false;
};

/// What a session records, named like Python's keyword arguments.
struct SessionOptions {
  bool record_shapes = false;   ///< input shapes per op (for group_by_input_shape)
  bool profile_memory = false;  ///< allocations and frees
  bool with_flops = false;      ///< estimated FLOPs of matmul-like ops
  bool cuda = false;            ///< CUDA activity too (kernels, launches); needs LibTorch with CUDA
  /// When not empty, LibTorch's own trace writer (`ProfilerResult::save()`, Kineto only) also
  /// writes each cycle's trace here; see Session::libtorch_trace_saved().
  std::string libtorch_trace_path;
  /// Called with each cycle's profile when its last active step ends (Python's on_trace_ready).
  std::function<void(const Profile&)> on_trace_ready;
};

/// A profiling session (RAII). Construct it, call `step()` at the end of every iteration, then
/// `finish()`. Each recorded step is wrapped in a `ProfilerStep#N` region, as in Python.
/// Recording is per thread: ops run on other threads are not seen. A session holds LibTorch's
/// profiler while a cycle is in its warm-up or active steps, until that cycle is saved, finish()
/// or its destruction: meanwhile a second Session throws std::logic_error. Warm-up steps are
/// recorded and cut from the recording when it is saved: the profiler runs on from the warm-up
/// into the active steps, so what its start costs lands in the warm-up (one warm-up step takes it
/// on LibTorch 1.13; with Kineto, 2.6, the first two recorded steps pay it, so it takes two).
/// Asked for LibTorch's own trace file (libtorch_trace_path), it stops after the warm-up and
/// starts again, since that file holds whatever the recording held.
class Session {
 public:
  /// Starts a session; with the default schedule every step is recorded until finish().
  explicit Session(Schedule schedule = Schedule::record_all(), SessionOptions options = {});
  /// Stops recording if finish() was not called.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Ends the current step and begins the next (Python's `prof.step()`).
  void step();
  /// Stops the session and hands over the profile of the last recorded cycle (a second call
  /// returns an empty profile; on_trace_ready sees every cycle).
  Profile finish();

  /// Number of the current step.
  int step_num() const;
  /// How many cycles were handed to on_trace_ready so far.
  int cycles_saved() const;
  /// Whether LibTorch's own save() wrote libtorch_trace_path for the last cycle (never without Kineto).
  bool libtorch_trace_saved() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// The LibTorch version this was built against ("1.13.0", "2.6.0").
std::string libtorch_version();

/// Whether this LibTorch has Kineto (its own trace writer, CUDA activity). Probed once with a
/// tiny profile; asked before that while a session holds the profiler (in its warm-up too), it
/// answers false without remembering it.
bool kineto_available();

}  // namespace workbook
