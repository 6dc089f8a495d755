// Lesson 08 — a training step: forward, loss, backward, optimizer (beyond the articles).
//
// The articles' GeGLU MLP trained on a regression target: each phase of a step in its own region,
// so the profile shows what backward and the optimizer add to a forward, which autograd nodes run,
// and how zero_grad's two forms differ.
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <map>
#include <memory>
#include <set>

#include "workbook/findings/08_training_step.h"
#include "workbook/lesson/answers.h"
#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"
#include "workbook/profiler/key_averages.h"
#include "workbook/profiler/session.h"
#include "workbook/support/geglu.h"
#include "workbook/support/training_memory.h"

namespace {

using namespace workbook;

double mean_us(const Profile& p, const char* region) {
  const auto ids = p.find(region);
  double sum = 0;
  for (auto id : ids) sum += double(p.total_ns(id)) / 1e3;
  return ids.empty() ? 0 : sum / double(ids.size());
}

std::int64_t flops_under(const Profile& p, const char* region) {
  std::int64_t sum = 0;
  for (auto r : p.find(region))
    for (auto d : p.descendants(r)) sum += p[d].flops;
  return sum;
}

// The workload: the GeGLU MLP, a regression batch and the optimizer that trains it.
struct Training {
  std::int64_t dim = 0, hidden = 0;
  std::string optimizer_name;
  Geglu model{nullptr};
  torch::Tensor x, target;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
};

Training make_training(const LessonOptions& opt, std::int64_t dim, std::int64_t hidden,
                       const std::string& optimizer_name) {
  torch::manual_seed(0);
  Training t{dim, hidden, optimizer_name, Geglu(dim, hidden), torch::randn({opt.size, dim}), {}, {}};
  t.target = torch::randn({opt.size, dim});
  if (optimizer_name == "adamw")
    t.optimizer = std::make_unique<torch::optim::AdamW>(t.model->parameters(), torch::optim::AdamWOptions(1e-3));
  else
    t.optimizer = std::make_unique<torch::optim::SGD>(t.model->parameters(), torch::optim::SGDOptions(1e-2));
  return t;
}

Profile profile_training_steps(const LessonOptions& opt, Training& t) {
  SessionOptions recording;
  recording.with_flops = true;
  recording.record_shapes = true;
  const Schedule schedule(1, opt.warmup, opt.steps);
  Session session(schedule, recording);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    training_step(t.model, t.x, t.target, *t.optimizer, /*set_to_none=*/step % 2 == 0);
    session.step();
  }
  return session.finish();
}

void describe_the_training(const LessonOptions& opt, const Training& t) {
  fmt::print("\nGeGLU MLP dim {}, hidden {}, {} rows, optimizer {} ({} parameter tensors): one step per ProfilerStep\n",
             t.dim, t.hidden, opt.size, t.optimizer_name, t.model->parameters().size());
}

double recorded_steps(const Profile& profile) { return double(profile.find_prefix("ProfilerStep#").size()); }

// Returns each phase's mean time per step, in microseconds.
std::map<std::string, double> time_each_phase(const Profile& profile) {
  fmt::print("\n{:<10} {:>12} {:>16}\n", "phase", "us per step", "GFLOP per step");
  std::map<std::string, double> phase_us;
  const double steps = recorded_steps(profile);
  for (const char* phase : kTrainingPhases) {
    phase_us[phase] = mean_us(profile, phase);
    fmt::print("{:<10} {:>12.1f} {:>16.4f}\n", phase, phase_us[phase],
               double(flops_under(profile, phase)) / steps / 1e9);
  }
  return phase_us;
}

void compare_backward_with_forward(const Profile& profile, const std::map<std::string, double>& phase_us) {
  const double steps = recorded_steps(profile);
  const double forward_flops = double(flops_under(profile, "forward")),
               backward_flops = double(flops_under(profile, "backward"));
  fmt::print("backward / forward: {:.2f}x the time, {:.2f}x the FLOPs\n",
             phase_us.at("backward") / phase_us.at("forward"), backward_flops / forward_flops);
  std::size_t forward_mm = 0, backward_mm = 0;
  for (auto r : profile.find("forward")) forward_mm += profile.count_under(r, "aten::mm");
  for (auto r : profile.find("backward")) backward_mm += profile.count_under(r, "aten::mm");
  narrate(
      fmt::format("The rule of thumb says backward costs about twice the forward: each GEMM y = x W^T needs two in "
                  "backward, dL/dx = dL/dy W and dL/dW = dL/dy^T x. Here x is the input data, which needs no gradient, "
                  "so the gate and up GEMMs need only dL/dW. This run's backward ran {} aten::mm per step for the "
                  "forward's {}: {:.2f}x the FLOPs by the profiler's estimate, which counts the GEMMs and the "
                  "multiplies, not gelu.",
                  std::size_t(double(backward_mm) / steps), std::size_t(double(forward_mm) / steps),
                  backward_flops / forward_flops));
}

void list_the_autograd_nodes(const Profile& profile) {
  const double steps = recorded_steps(profile);
  std::map<std::string, int> nodes;
  for (auto r : profile.find("backward"))
    for (auto d : profile.descendants(r)) {
      const std::string name(profile[d].name);
      if (findings08::is_autograd_node(name)) ++nodes[name];
    }
  fmt::print("\nautograd nodes per step:");
  for (const auto& [name, n] : nodes) fmt::print(" {} x{}", name, int(n / steps));
  fmt::print("\n");
}

// What the run shows, decided by lesson 08's findings (lessons/findings, each tested NOT shown too).
void check_backward_zero_grad_and_optimizer(const Profile& profile, const Training& t) {
  std::vector<std::vector<std::int64_t>> parameter_shapes;
  for (const auto& p : t.model->parameters()) parameter_shapes.push_back(p.sizes().vec());
  const Finding per_gemm = findings08::one_mm_backward_per_gemm(profile, 3);
  const Finding same_thread = findings08::backward_on_callers_thread(profile);
  for (const Finding& f : {per_gemm, same_thread, findings08::zero_grad_forms(profile),
                           findings08::optimizer_per_parameter(profile, parameter_shapes)})
    claim(f);
  answer("mm_backward_per_gemm", per_gemm);
  answer("backward_same_thread", same_thread);
  narrate(
      "Setting gradients to none runs no op (it drops the gradient tensors, and their memory is freed); "
      "backward's AccumulateGrad then stores a new gradient instead of adding into a zeroed one "
      "(torch/csrc/autograd/functions/accumulate_grad.h). LibTorch's C++ optimizers loop over the "
      "parameters, one or a few ops per parameter tensor (SGD: one add_; AdamW: several), each a pass over "
      "that parameter; "
      "Python's can batch them across parameters (foreach=True, torch/optim/adamw.py).");
}

void write_the_reports(const LessonOptions& opt, const Profile& profile) {
  report_profile(profile, false, opt.out, opt.tag(), "Lesson 08 · a training step · " + opt.tag(), 15);
}

int run(const LessonOptions& opt, std::int64_t dim, std::int64_t hidden, const std::string& optimizer_name) {
  print_lesson_header("Lesson 08 · A training step: forward, loss, backward, optimizer");
  Training training = make_training(opt, dim, hidden, optimizer_name);
  // Nothing printed: one training step per step of the schedule, each phase in its own region.
  const Profile profile = profile_training_steps(opt, training);
  // The model, the batch and the optimizer that were profiled.
  describe_the_training(opt, training);
  // Per phase: time and GFLOP per step.
  const std::map<std::string, double> phase_us = time_each_phase(profile);
  // Backward against forward, in time, FLOPs and aten::mm calls, beside the rule of thumb.
  compare_backward_with_forward(profile, phase_us);
  // Which autograd nodes backward ran, and how many of each per step.
  list_the_autograd_nodes(profile);
  // The checks on backward's GEMMs and thread, zero_grad's two forms and the optimizer's ops.
  check_backward_zero_grad_and_optimizer(profile, training);
  // The statistics table, the trace and the timeline.
  write_the_reports(opt, profile);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Default --size: rows per batch
  LessonDefaults defaults("lesson08", "08_training_step", "Lesson 08: a training step, phase by phase", 256);
  defaults.cpu_only_reason = "its step is recorded on the CPU";
  defaults.float32_only_reason = "its model and optimizer are float32";
  defaults.steps = 4;
  std::string dim_text = "256", hidden_text = "1024", optimizer = "sgd";
  defaults.extra = {{"--dim", "model width", &dim_text},
                    {"--hidden", "hidden width", &hidden_text},
                    {"--optimizer", "sgd | adamw", &optimizer}};
  const LessonOptions opt = parse_lesson_flags(argc, argv, defaults);
  const std::int64_t dim = size_flag(defaults.program, "--dim", dim_text, 16384);
  const std::int64_t hidden = size_flag(defaults.program, "--hidden", hidden_text, 65536);
  // float32: weights, gradients and AdamW's two moments (3 x dim x hidden each), the step's
  // [rows, hidden] and [rows, dim] buffers.
  const double rows = double(opt.size), d = double(dim), h = double(hidden);
  require_memory(defaults.program, fmt::format("--size {} --dim {} --hidden {}", opt.size, dim, hidden),
                 4 * (12 * d * h + 8 * rows * h + 4 * rows * d));
  if (optimizer != "sgd" && optimizer != "adamw")
    usage_error(defaults.program, "--optimizer must be sgd or adamw (got '" + optimizer + "')");
  return run_reporting_errors(defaults.program, [&] { return run(opt, dim, hidden, optimizer); });
}
