// Lesson 09 — memory: what a forward and a training step keep alive (beyond the articles).
//
// profile_memory records every allocation and free with the op that made it. The running sum of
// those records is the memory timeline (Python's export_memory_timeline draws the same thing by
// category): the lesson reads the inference forward, the training forward and a whole training
// step of the GeGLU MLP from it, and finds the peak and the op that reached it.
#include <torch/nn/functional/loss.h>

#include <algorithm>
#include <string>
#include <vector>

#include "workbook/findings/09_memory.h"
#include "workbook/lesson/answers.h"
#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"
#include "workbook/profiler/key_averages.h"
#include "workbook/profiler/memory_timeline.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"
#include "workbook/support/geglu.h"
#include "workbook/support/training_memory.h"

namespace {

using namespace workbook;

double mib(std::int64_t bytes) { return double(bytes) / 1048576.0; }

// What one recorded forward did to live memory.
// Peak and kept bytes of one forward, above the level at its start.
using ForwardMemory = findings09::ForwardBytes;

ForwardMemory forward_memory(const std::function<torch::Tensor()>& forward) {
  SessionOptions recording;
  recording.profile_memory = true;
  const Schedule schedule(0, 1, 1);
  Session session(schedule, recording);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    torch::Tensor out;
    {
      Region r("forward");
      out = forward();
    }
    session.step();
  }
  const Profile profile = session.finish();
  const MemoryTimeline timeline = memory_timeline(profile);
  const Event& region = profile[profile.find("forward").at(0)];
  const std::int64_t start = timeline.live_at(region.start_ns - 1);
  return {timeline.peak_between(region.start_ns, region.end_ns) - start, timeline.live_at(region.end_ns) - start};
}

// The forward written statement by statement, each intermediate released once its last user ran
// (what Python's reference counting does by itself).
torch::Tensor staged_forward(Geglu& model, const torch::Tensor& x) {
  torch::Tensor activated = torch::gelu(model->gate->forward(x), "tanh");  // the gate's output dies at ';'
  torch::Tensor product = activated * model->up->forward(x);               // so does up's
  activated.reset();
  return model->down->forward(product);  // product dies when this function returns
}

// "aten::mm in MmBackward0" or "aten::mul": the op, and the autograd node it ran for.
std::string where(const Profile& p, EventId memory_event) {
  const auto op = allocating_op(p, memory_event);
  if (!op) return "(outside every op)";
  std::string text(p[*op].name), node;
  for (auto up = p.parent(*op); up; up = p.parent(*up)) {
    const std::string_view name = p[*up].name;
    const auto colon = name.find(": ");
    if (name.rfind("autograd::engine::evaluate_function", 0) == 0 && colon != std::string::npos) {
      node = name.substr(colon + 2);
      break;
    }
    if (p[*up].category == Category::user_annotation) break;
  }
  if (text.rfind("autograd::engine::evaluate_function", 0) == 0)
    return text.substr(text.find(": ") + 2) + " (releasing)";
  return node.empty() ? text : text + " in " + node;
}

// The phase region a moment falls in.
std::string phase_at(const Profile& p, EventId step, std::int64_t time_ns) {
  for (const char* phase : kTrainingPhases)
    for (auto r : p.under(step, phase))
      if (p[r].start_ns <= time_ns && time_ns <= p[r].end_ns) return phase;
  return "between phases";
}

// The workload: the GeGLU MLP and a regression batch, with the sizes of the buffers it makes.
struct GegluBatch {
  std::int64_t tokens = 0, dim = 0, hidden = 0;
  std::int64_t activation = 0, output = 0;  // bytes of a [tokens, hidden] and a [tokens, dim] buffer
  std::int64_t gradients = 0;               // bytes of the three weights' gradients
  Geglu model{nullptr};
  torch::Tensor x, target;
};

GegluBatch make_geglu_batch(const LessonOptions& opt, std::int64_t dim, std::int64_t hidden) {
  torch::manual_seed(0);
  GegluBatch batch{opt.size, dim, hidden, 0, 0, 0, Geglu(dim, hidden), {}, {}};
  batch.x = torch::randn({batch.tokens, dim});
  batch.target = torch::randn({batch.tokens, dim});
  batch.activation = batch.tokens * hidden * 4;
  batch.output = batch.tokens * dim * 4;
  batch.gradients = 3 * hidden * dim * 4;
  return batch;
}

void describe_the_buffers(const GegluBatch& batch) {
  const std::int64_t tokens = batch.tokens, dim = batch.dim, hidden = batch.hidden;
  fmt::print(
      "\nGeGLU MLP dim {}, hidden {}, {} rows, float32, no biases: a [{}, {}] buffer is {:.3f} MiB, a [{}, {}] "
      "one {:.3f} MiB, a weight [{}, {}] {:.3f} MiB\n",
      dim, hidden, tokens, tokens, hidden, mib(batch.activation), tokens, dim, mib(batch.output), hidden, dim,
      mib(hidden * dim * 4));
}

// One forward, three ways: inference as one expression, inference statement by statement, training.
struct ThreeForwards {
  ForwardMemory expression, staged, training;
};

ThreeForwards measure_one_forward_three_ways(GegluBatch& batch) {
  Geglu& model = batch.model;
  const torch::Tensor& x = batch.x;
  ThreeForwards m;
  {
    torch::NoGradGuard no_grad;
    m.expression = forward_memory([&] { return model->forward(x); });
    m.staged = forward_memory([&] { return staged_forward(model, x); });
  }
  m.training = forward_memory([&] { return model->forward(x); });
  fmt::print("\n{:<44} {:>16} {:>18}\n", "one forward", "peak above start", "kept at its end");
  auto row = [](const char* name, const ForwardMemory& f) {
    fmt::print("{:<44} {:>12.3f} MiB {:>14.3f} MiB\n", name, mib(f.peak), mib(f.kept));
  };
  row("NoGradGuard, forward as one expression", m.expression);
  row("NoGradGuard, statement by statement", m.staged);
  row("training (autograd records the graph)", m.training);
  const std::int64_t activation = batch.activation, output = batch.output;
  for (const Finding& f : {findings09::no_grad_keeps_only_the_output(m.expression, m.staged, output),
                           findings09::temporaries_live_to_the_semicolon(m.expression, m.staged, activation, output),
                           findings09::autograd_keeps_four_buffers(m.training, activation, output)})
    claim(f);
  answer("four_buffers_kept", findings09::autograd_keeps_four_buffers(m.training, activation, output));
  return m;
}

// Training steps, allocation by allocation: the profile, its memory timeline and each step's levels.
struct TrainingSteps {
  Profile profile;
  MemoryTimeline timeline;
  std::vector<StepMemory> steps;
};

TrainingSteps record_the_training_steps(const LessonOptions& opt, GegluBatch& batch) {
  TrainingSteps recorded;
  recorded.profile = record_training_steps(batch.model, batch.x, batch.target, opt.warmup, opt.steps);
  recorded.timeline = memory_timeline(recorded.profile);
  recorded.steps = step_memory(recorded.profile, recorded.timeline);
  return recorded;
}

void print_live_memory_per_step(const GegluBatch& batch, const TrainingSteps& recorded) {
  const Profile& profile = recorded.profile;
  fmt::print("\n{:<16} {:>14} {:>16} {:>20} {:>14}\n", "step", "live at start", "at forward start",
             "peak above forward", "live at end");
  for (const StepMemory& s : recorded.steps)
    fmt::print("{:<16} {:>10.3f} MiB {:>12.3f} MiB {:>16.3f} MiB {:>10.3f} MiB\n", profile[s.step].name,
               mib(s.at_step_start), mib(s.at_forward_start), mib(s.peak_above_forward), mib(s.at_step_end));

  std::vector<findings09::StepBytes> step_bytes;
  for (const StepMemory& s : recorded.steps) step_bytes.push_back({s.at_step_start, s.at_forward_start, s.at_step_end});
  const Finding kept = findings09::steps_keep_only_gradients(step_bytes, batch.gradients);
  claim(kept);
}

void find_the_peak_of_the_last_step(const TrainingSteps& recorded, const ForwardMemory& training) {
  const Profile& profile = recorded.profile;
  const StepMemory& last = recorded.steps.back();
  const Event& last_step = profile[last.step];
  fmt::print(
      "\n{}, from its forward on: every allocation (+) and free (-), and the bytes live above the forward's "
      "start\n{:<10} {:<40} {:>12} {:>12}\n",
      last_step.name, "phase", "op (autograd node)", "MiB", "live MiB");
  std::optional<EventId> step_peak;
  std::int64_t step_peak_bytes = 0;
  for (const MemoryPoint& point : recorded.timeline.points) {
    if (point.time_ns < profile[profile.under(last.step, "forward").at(0)].start_ns || point.time_ns > last_step.end_ns)
      continue;
    const std::int64_t bytes = profile[point.event].bytes, above = point.live_bytes - last.at_forward_start;
    if (!step_peak || above > step_peak_bytes) step_peak = point.event, step_peak_bytes = above;
    if (std::abs(bytes) < 1024) continue;  // scalars: the loss, the ones backward starts from
    fmt::print("{:<10} {:<40} {:>+12.3f} {:>12.3f}\n", phase_at(profile, last.step, point.time_ns),
               where(profile, point.event), mib(bytes), mib(above));
  }
  const std::string peak_where = where(profile, *step_peak);
  const std::string peak_phase = phase_at(profile, last.step, profile[*step_peak].start_ns);
  fmt::print("small records (< 1 KiB: scalars) are left out of this list, not out of the sums\n");
  const Finding in_backward = findings09::peak_in_backward(
      peak_phase, fmt::format("peak {:.3f} MiB above the forward's start, reached by {} in {}; the forward ended at "
                              "{:.3f} MiB",
                              mib(step_peak_bytes), peak_where, peak_phase, mib(training.kept)));
  claim(in_backward);
  answer("peak_in_backward", in_backward);
}

void explain_the_first_steps_frees(const LessonOptions& opt, const GegluBatch& batch, const TrainingSteps& recorded) {
  const std::vector<StepMemory>& steps = recorded.steps;
  if (steps.size() > 1) {
    const std::int64_t first_frees = steps[0].at_forward_start - steps[0].at_step_start;
    const std::int64_t later_frees = steps[1].at_forward_start - steps[1].at_step_start;
    if (opt.warmup > 0 && first_frees != later_frees)
      narrate(fmt::format(
          "The first recorded step's zero_grad frees the warm-up step's gradients too, yet the profile records "
          "{} bytes freed, not {}: the allocator reports a free only when it knows the block's size, which it "
          "learns when the block is allocated with memory profiling on (c10/core/CPUAllocator.cpp warns 'Memory "
          "block of unknown size was allocated before the profiling started'). The warm-up step records with "
          "memory profiling on (its records are dropped), so the frees of what it allocated are expected to "
          "match; a mismatch comes from blocks older than the warm-up, or from the table of sizes, which is not "
          "emptied between recordings, matching a reused address to an earlier entry. That is why each step is "
          "measured from its forward's start.",
          first_frees, -batch.gradients));
  }
}

void draw_the_memory_timeline(const LessonOptions& opt, const TrainingSteps& recorded) {
  const Profile& profile = recorded.profile;
  std::vector<TimelineBand> bands;
  for (const StepMemory& s : recorded.steps)
    for (const char* phase : kTrainingPhases)
      for (auto r : profile.under(s.step, phase)) bands.push_back({phase, profile[r].start_ns, profile[r].end_ns});
  write_memory_timeline_svg(
      recorded.timeline, opt.out / "memory.svg",
      fmt::format("Lesson 09 · live CPU memory over {} training steps · {}", recorded.steps.size(), opt.tag()), bands,
      where(profile, *recorded.timeline.peak_event));
}

void sort_by_self_memory_and_write_the_reports(const LessonOptions& opt, const TrainingSteps& recorded) {
  const Profile& profile = recorded.profile;
  const KeyAverages averages(profile);
  const std::string table = averages.table("self_cpu_memory_usage", 12);
  fmt::print("\nkey_averages sorted by self_cpu_memory_usage (Python's sort_by=\"self_cpu_memory_usage\"):\n{}", table);
  const Finding nets = findings09::self_memory_nets(averages);
  claim(nets);
  auto files = write_outputs(profile, averages, table, opt.out, opt.tag(), "Lesson 09 · memory · " + opt.tag());
  print_written(files);
  fmt::print("{}\n", (opt.out / "memory.svg").string());
}

int run(const LessonOptions& opt, std::int64_t dim, std::int64_t hidden) {
  print_lesson_header("Lesson 09 · Memory: what a forward and a training step keep alive");
  GegluBatch batch = make_geglu_batch(opt, dim, hidden);
  // The model's sizes and the bytes of its activations, outputs and weights.
  describe_the_buffers(batch);
  // Peak and kept bytes of one forward under NoGradGuard (two ways) and in training.
  const ThreeForwards forwards = measure_one_forward_three_ways(batch);
  // Nothing printed: training steps recorded with profile_memory, and their memory timeline.
  const TrainingSteps recorded = record_the_training_steps(opt, batch);
  // Per step, the live bytes at its start, its forward's start, its peak and its end.
  print_live_memory_per_step(batch, recorded);
  // The last step allocation by allocation, and the phase and op that reached its peak.
  find_the_peak_of_the_last_step(recorded, forwards.training);
  // Why the first recorded step's zero_grad frees fewer bytes than the later ones.
  explain_the_first_steps_frees(opt, batch, recorded);
  // Nothing printed yet: memory.svg, live bytes over time with a band per phase.
  draw_the_memory_timeline(opt, recorded);
  // key_averages sorted by self_cpu_memory_usage, then the trace, table and timeline files.
  sort_by_self_memory_and_write_the_reports(opt, recorded);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Default --size: rows per batch
  LessonDefaults defaults("lesson09", "09_memory", "Lesson 09: memory, what a forward and a training step keep alive",
                          256);
  defaults.cpu_only_reason = "it reads the CPU allocator's records";
  defaults.steps = 2;
  std::string dim_text = "256", hidden_text = "1024";
  defaults.extra = {{"--dim", "model width", &dim_text}, {"--hidden", "hidden width", &hidden_text}};
  defaults.float32_only_reason = "its byte counts are 4 per element";
  const LessonOptions opt = parse_lesson_flags(argc, argv, defaults);
  const std::int64_t dim = size_flag(defaults.program, "--dim", dim_text, 16384);
  const std::int64_t hidden = size_flag(defaults.program, "--hidden", hidden_text, 65536);
  // float32: the weights, their gradients and the optimizer's copies (3 x hidden x dim each, four
  // times), and the training step's [rows, hidden] and [rows, dim] buffers.
  const double h = double(hidden), d = double(dim), rows = double(opt.size);
  require_memory(defaults.program, fmt::format("--size {} --dim {} --hidden {}", opt.size, dim, hidden),
                 4 * (12 * h * d + 8 * rows * h + 4 * rows * d));
  return run_reporting_errors(defaults.program, [&] { return run(opt, dim, hidden); });
}
