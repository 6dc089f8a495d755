// Lesson 03 — nn::Linear and aten::t, a metadata operation (Part 2 of the articles).
//
// y = x W^T + b. The profile shows aten::t before the GEMM; the lesson proves that it moves no
// data: same storage, swapped strides, nothing beneath it that copies or allocates: work that does
// not grow with the matrix, unlike w.t().contiguous(), which allocates and writes every element.
#include <torch/nn/modules/linear.h>

#include <algorithm>

#include "workbook/findings/03_linear_t.h"
#include "workbook/lesson/answers.h"
#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"
#include "workbook/lesson/machine.h"
#include "workbook/lesson/timing.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"
#include "workbook/support/inspect.h"

namespace {

using namespace workbook;

// Profiles, per step, a Linear forward and an explicit copy of the transposed weight.
Profile profile_linear(const LessonOptions& opt, torch::nn::Linear& linear, const torch::Tensor& x) {
  SessionOptions recording;
  recording.record_shapes = true;
  recording.profile_memory = true;
  recording.cuda = opt.device.is_cuda();
  const Schedule schedule(1, opt.warmup, opt.steps);
  Session session(schedule, recording);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    {
      Region region("linear_forward");
      torch::Tensor y = linear->forward(x);
    }
    {
      Region region("transpose_copy");
      torch::Tensor wt = linear->weight.t().contiguous();
    }
    session.step();
  }
  return session.finish();
}

// The fastest recorded call: the first recorded step also pays for the profiler's start-up.
double fastest_total_us(const Profile& p, const std::string& name) {
  double best = -1;
  for (auto id : p.find(name)) {
    const double t = double(p.total_ns(id)) / 1e3;
    if (best < 0 || t < best) best = t;
  }
  return std::max(best, 0.0);
}

// Step 1: one forward as the profiler saw it, and what C++'s nn::Linear runs.
void show_one_forward(const LessonOptions& opt, const Profile& profile, std::int64_t in, std::int64_t out,
                      std::int64_t batch) {
  fmt::print("\nnn::Linear({}, {}) on a batch of {} ({}, {})\n", in, out, batch, opt.dtype_name(), opt.device_name());
  narrate("One forward, as the profiler saw it (first recorded step):");
  const auto forwards = profile.find("linear_forward");
  if (!forwards.empty()) fmt::print("{}", format_tree(profile, forwards.front(), 4));
  narrate("LibTorch " + machine_info().torch_version +
          " here. Python's nn.Linear shows aten::linear -> aten::t -> aten::addmm. C++'s nn::Linear calls "
          "F::linear (torch/nn/functional/linear.h, LibTorch 1.13 and 2.6), which for a 2-D input with a bias, "
          "as here, is torch::addmm(bias, input, weight.t()): no aten::linear row in C++, only aten::t and "
          "aten::addmm. Any other input runs input.matmul(weight.t()), then, if there is a bias, += bias "
          "(aten::add_): lesson 05's "
          "3-D input shows aten::t, then aten::matmul beside it (beneath that aten::reshape, aten::mm, "
          "aten::_unsafe_view).");
  for (const Finding& f : {findings03::linear_is_one_addmm(profile), findings03::bias_inside_addmm(profile)}) claim(f);
  const Finding one_addmm = findings03::linear_is_one_addmm(profile);
  answer("linear_op", one_addmm.holds ? "no" : "yes", one_addmm.evidence);
}

// Step 2: W and W.t() side by side: same data, swapped strides.
void show_the_transpose_is_a_view(torch::nn::Linear& linear) {
  const TensorView w = inspect(linear->weight), wt = inspect(linear->weight.t());
  fmt::print("W      {}\nW.t()  {}\n", describe(w), describe(wt));
  const Finding view = findings03::transpose_is_view(
      {shares_storage(linear->weight, linear->weight.t()), w.data, wt.data, w.strides, wt.strides});
  claim(view);
  narrate(
      "aten::t returns a view: the same data pointer, the sizes and the strides swapped. Reading W.t() "
      "row by row walks W column by column; nothing is copied. The GEMM is told the layout (a 'transposed' "
      "flag) and reads W where it lies.");
}

// Step 3: a small and a large Linear: the view touches no element, the copy touches every one.
void compare_with_a_large_linear(const LessonOptions& opt, torch::nn::Linear& linear, const Profile& profile,
                                 std::int64_t batch, std::int64_t large) {
  const auto options = torch::TensorOptions().dtype(opt.dtype).device(opt.device);
  torch::nn::Linear big(large, large);
  big->to(opt.device, opt.dtype);
  const Profile big_profile = profile_linear(opt, big, torch::randn({batch, large}, options));
  fmt::print("\n{:<28} {:>14} {:>14}\n", "fastest call",
             fmt::format("{}x{}", linear->weight.size(0), linear->weight.size(1)), fmt::format("{}x{}", large, large));
  for (const char* op : {"aten::t", "aten::contiguous"})
    fmt::print("{:<28} {:>11.2f} us {:>11.2f} us\n", op, fastest_total_us(profile, op),
               fastest_total_us(big_profile, op));
  // The view alone, unprofiled, with nothing between its calls: what the view itself costs.
  const torch::Tensor small_w = linear->weight.detach(), large_w = big->weight.detach();
  const std::vector<double> alone =
      interleaved_median_us({[&] { torch::Tensor v = small_w.t(); }, [&] { torch::Tensor v = large_w.t(); }}, 1000, 9);
  fmt::print("{:<28} {:>11.2f} us {:>11.2f} us\n", "w.t() alone, unprofiled", alone[0], alone[1]);
  narrate(fmt::format(
      "The large weight's column comes from a second recording, not the table below (the small Linear's). "
      "The last row times w.t() alone (median of 9 rounds of 1000 calls, no profiler, nothing between the "
      "calls): {:.2f} us for the small weight, {:.2f} us for the large one. A recorded aten::t call also pays "
      "for the profiler's bookkeeping and runs between a large GEMM and a large copy, so its recorded time "
      "can differ from this.",
      alone[0], alone[1]));
  const std::int64_t weight_bytes = linear->weight.numel() * std::int64_t(linear->weight.element_size());
  for (const Finding& f :
       {findings03::t_runs_only_views(profile), findings03::contiguous_copies_the_weight(profile, weight_bytes)})
    claim(f);
  const Finding views = findings03::t_runs_only_views(profile);
  answer("t_allocates", views.holds ? "no" : "yes", views.evidence);
}

int run(const LessonOptions& opt, std::int64_t in, std::int64_t out, std::int64_t batch, std::int64_t large) {
  print_lesson_header("Lesson 03 · nn::Linear and aten::t, a metadata operation");
  torch::manual_seed(0);
  const auto options = torch::TensorOptions().dtype(opt.dtype).device(opt.device);
  // The workload: the articles' Linear and a batch for it.
  torch::nn::Linear linear(in, out);
  linear->to(opt.device, opt.dtype);
  const torch::Tensor x = torch::randn({batch, in}, options);
  const Profile profile = profile_linear(opt, linear, x);
  show_one_forward(opt, profile, in, out, batch);
  show_the_transpose_is_a_view(linear);
  compare_with_a_large_linear(opt, linear, profile, batch, large);
  report_profile(profile, opt.device.is_cuda(), opt.out, opt.tag(),
                 "Lesson 03 · nn::Linear and aten::t · " + opt.tag());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Default --size: the articles' batch; the Linear is theirs too: 32 in, 64 out.
  LessonDefaults defaults("lesson03", "03_linear_t",
                          "Lesson 03: nn::Linear's aten::t is a view; prove it from the tensor and the profile", 1024);
  std::string large_text = "1024";
  defaults.extra = {{"--large", "size of the square Linear compared with the small one", &large_text}};
  const LessonOptions opt = parse_lesson_flags(argc, argv, defaults);
  const std::int64_t large = size_flag(defaults.program, "--large", large_text, 8192);
  return workbook::run_reporting_errors(defaults.program, [&] { return run(opt, 32, 64, opt.size, large); });
}
