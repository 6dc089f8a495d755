#include "workbook/profiler/session.h"

#include <optional>
#include <string>
#include <utility>

#include "libtorch_profiler.h"
#include "workbook/profiler/region.h"

namespace workbook {

struct Session::State {
  Schedule schedule;
  SessionOptions options;
  detail::RecorderConfig config;
  Schedule::Action action = Schedule::Action::none;
  int step = 0;
  int saved = 0;
  bool finished = false;
  bool started = false;      // this session's recording is on (warm-up or recorded steps)
  bool warming = false;      // ...and what it records now is the warm-up, to be thrown away
  int cut_before_step = -1;  // the recording runs on from a warm-up: events before this step are cut
  bool libtorch_saved = false;
  std::optional<Region> step_region;
  Profile last;

  bool recording(Schedule::Action a) const {
    return a == Schedule::Action::record || a == Schedule::Action::record_and_save;
  }

  void open_step_region() {
    if (recording(action)) step_region.emplace("ProfilerStep#" + std::to_string(step));
  }

  void save() {
    started = false;
    const int cut = std::exchange(cut_before_step, -1);
    last = detail::stop_profiler(options.libtorch_trace_path, &libtorch_saved,
                                 cut >= 0 ? "ProfilerStep#" + std::to_string(cut) : std::string());
    ++saved;
    if (options.on_trace_ready) options.on_trace_ready(last);
  }

  void start() {
    if (started) return;
    detail::start_profiler(config);  // throws when another session is recording
    started = true;
  }

  void throw_away_the_warm_up() {
    if (!warming) return;
    warming = false;
    started = false;
    detail::discard_recording();
  }

  // The transitions of torch.profiler's _transit_action table, with one difference: warm-up
  // steps are recorded and thrown away, as torch.profiler's documentation describes warm-up ("the
  // profiler starts tracing, but the results are discarded ... they are usually skewed by an extra
  // overhead"). The recording runs on into the active steps and the warm-up is cut from it when it
  // is saved, because starting the profiler is what costs: on 1.13 the first ops recorded in a
  // process pay ~50 us (~120 us with shapes), which one warm-up step takes; with Kineto (2.6) the
  // first two steps of every recording pay 50-150 us, so it takes two (lesson 01 measures both).
  // Python's 2.6 warm-up prepares the tracing without recording, so its first active step pays the
  // start. One exception: a session asked for LibTorch's own trace file stops after the warm-up and
  // starts again, since that file holds whatever the recording held.
  void enter(Schedule::Action from, Schedule::Action to) {
    if (recording(from) && (from == Schedule::Action::record_and_save || !recording(to))) save();
    if (to == Schedule::Action::warmup) {
      start();
      warming = true;
    } else if (warming && recording(to) && options.libtorch_trace_path.empty()) {
      warming = false;
      cut_before_step = step;
    } else {
      throw_away_the_warm_up();
    }
    if (recording(to)) start();
  }
};

Session::Session(Schedule schedule, SessionOptions options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.schedule = schedule;
  s.options = std::move(options);
  s.config.record_shapes = s.options.record_shapes;
  s.config.profile_memory = s.options.profile_memory;
  s.config.with_flops = s.options.with_flops;
  s.config.cuda = s.options.cuda;
  s.action = s.schedule.action(0);
  s.enter(Schedule::Action::none, s.action);
  s.open_step_region();
}

Session::~Session() {
  try {
    if (state_ && !state_->finished) finish();
  } catch (...) {
    // A destructor must not throw; the profile is lost, the profiler is off.
  }
}

void Session::step() {
  State& s = *state_;
  if (s.finished) return;
  s.step_region.reset();
  const Schedule::Action previous = s.action;
  ++s.step;
  s.action = s.schedule.action(s.step);
  s.enter(previous, s.action);
  s.open_step_region();
}

Profile Session::finish() {
  State& s = *state_;
  if (!s.finished) {
    s.finished = true;
    s.step_region.reset();
    if (s.warming)
      s.throw_away_the_warm_up();
    else if (s.started)
      s.save();
    s.action = Schedule::Action::none;
  }
  // Handed over, not copied: a profile can hold millions of events.
  return std::move(s.last);
}

std::string libtorch_version() { return detail::torch_version(); }
bool kineto_available() { return detail::kineto_available(); }

int Session::step_num() const { return state_->step; }
int Session::cycles_saved() const { return state_->saved; }
bool Session::libtorch_trace_saved() const { return state_->libtorch_saved; }

}  // namespace workbook
