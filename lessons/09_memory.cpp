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
  std::string text = p[*op].name, node;
  for (auto up = p.parent(*op); up; up = p.parent(*up)) {
    const std::string& name = p[*up].name;
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

int run(const LessonOptions& opt, std::int64_t dim, std::int64_t hidden) {
  print_lesson_header("Lesson 09 · Memory: what a forward and a training step keep alive");
  torch::manual_seed(0);
  Geglu model(dim, hidden);
  const std::int64_t tokens = opt.size;
  const auto x = torch::randn({tokens, dim}), target = torch::randn({tokens, dim});
  const std::int64_t activation = tokens * hidden * 4, output = tokens * dim * 4;
  fmt::print(
      "\nGeGLU MLP dim {}, hidden {}, {} rows, float32, no biases: a [{}, {}] buffer is {:.3f} MiB, a [{}, {}] "
      "one {:.3f} MiB, a weight [{}, {}] {:.3f} MiB\n",
      dim, hidden, tokens, tokens, hidden, mib(activation), tokens, dim, mib(output), hidden, dim,
      mib(hidden * dim * 4));

  // 1. One forward, three ways.
  ForwardMemory expression, staged, training;
  {
    torch::NoGradGuard no_grad;
    expression = forward_memory([&] { return model->forward(x); });
    staged = forward_memory([&] { return staged_forward(model, x); });
  }
  training = forward_memory([&] { return model->forward(x); });
  fmt::print("\n{:<44} {:>16} {:>18}\n", "one forward", "peak above start", "kept at its end");
  auto row = [](const char* name, const ForwardMemory& m) {
    fmt::print("{:<44} {:>12.3f} MiB {:>14.3f} MiB\n", name, mib(m.peak), mib(m.kept));
  };
  row("NoGradGuard, forward as one expression", expression);
  row("NoGradGuard, statement by statement", staged);
  row("training (autograd records the graph)", training);
  for (const Finding& f : {findings09::no_grad_keeps_only_the_output(expression, staged, output),
                           findings09::temporaries_live_to_the_semicolon(expression, staged, activation, output),
                           findings09::autograd_keeps_four_buffers(training, activation, output)})
    claim(f.holds, f.sentence, f.evidence);

  // 2. Training steps, allocation by allocation.
  const Profile profile = record_training_steps(model, x, target, opt.warmup, opt.steps);
  const MemoryTimeline timeline = memory_timeline(profile);
  const auto steps = step_memory(profile, timeline);
  fmt::print("\n{:<16} {:>14} {:>16} {:>20} {:>14}\n", "step", "live at start", "at forward start",
             "peak above forward", "live at end");
  for (const StepMemory& s : steps)
    fmt::print("{:<16} {:>10.3f} MiB {:>12.3f} MiB {:>16.3f} MiB {:>10.3f} MiB\n", profile[s.step].name,
               mib(s.at_step_start), mib(s.at_forward_start), mib(s.peak_above_forward), mib(s.at_step_end));

  const std::int64_t gradients = 3 * hidden * dim * 4;
  std::vector<findings09::StepBytes> step_bytes;
  for (const StepMemory& s : steps) step_bytes.push_back({s.at_step_start, s.at_forward_start, s.at_step_end});
  const Finding kept = findings09::steps_keep_only_gradients(step_bytes, gradients);
  claim(kept.holds, kept.sentence, kept.evidence);
  const StepMemory& last = steps.back();
  const Event& last_step = profile[last.step];
  fmt::print(
      "\n{}, from its forward on: every allocation (+) and free (-), and the bytes live above the forward's "
      "start\n{:<10} {:<40} {:>12} {:>12}\n",
      last_step.name, "phase", "op (autograd node)", "MiB", "live MiB");
  std::optional<EventId> step_peak;
  std::int64_t step_peak_bytes = 0;
  for (const MemoryPoint& point : timeline.points) {
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
  claim(in_backward.holds, in_backward.sentence, in_backward.evidence);
  if (steps.size() > 1) {
    const std::int64_t first_frees = steps[0].at_forward_start - steps[0].at_step_start;
    const std::int64_t later_frees = steps[1].at_forward_start - steps[1].at_step_start;
    if (opt.warmup > 0 && first_frees != later_frees)
      narrate(fmt::format(
          "The first recorded step's zero_grad frees the warm-up step's gradients too, yet the profile records "
          "{} bytes freed, not {}: the allocator reports a free only with a size it recorded while profiling "
          "(c10/core/CPUAllocator.cpp warns 'Memory block of unknown size was allocated before the profiling "
          "started'; warm-up steps only prepare the profiler, as Python's do). That is why each step is measured "
          "from its forward's start.",
          first_frees, -gradients));
  }

  // 3. The figure and the table of allocations per op.
  std::vector<TimelineBand> bands;
  for (const StepMemory& s : steps)
    for (const char* phase : kTrainingPhases)
      for (auto r : profile.under(s.step, phase)) bands.push_back({phase, profile[r].start_ns, profile[r].end_ns});
  write_memory_timeline_svg(
      timeline, opt.out / "memory.svg",
      fmt::format("Lesson 09 · live CPU memory over {} training steps · {}", steps.size(), opt.tag()), bands,
      where(profile, *timeline.peak_event));
  const KeyAverages averages(profile);
  const std::string table = averages.table("self_cpu_memory_usage", 12);
  fmt::print("\nkey_averages sorted by self_cpu_memory_usage (Python's sort_by=\"self_cpu_memory_usage\"):\n{}", table);
  const Finding nets = findings09::self_memory_nets(averages);
  claim(nets.holds, nets.sentence, nets.evidence);
  auto files = write_outputs(profile, averages, table, opt.out, opt.tag(), "Lesson 09 · memory · " + opt.tag());
  print_written(files);
  fmt::print("{}\n", (opt.out / "memory.svg").string());
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
