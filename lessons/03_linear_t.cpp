// Lesson 03 — nn::Linear and aten::t, a metadata operation (Part 2 of the articles).
//
// y = x W^T + b. The profile shows aten::t before the GEMM; the lesson proves that it moves no
// data: same storage, swapped strides, nothing beneath it that copies or allocates: work that does
// not grow with the matrix, unlike w.t().contiguous(), which allocates and writes every element.
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <set>

#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"
#include "workbook/lesson/machine.h"
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

int run(const LessonOptions& opt, std::int64_t in, std::int64_t out, std::int64_t batch, std::int64_t large) {
  print_lesson_header("Lesson 03 · nn::Linear and aten::t, a metadata operation");
  torch::manual_seed(0);
  const auto options = torch::TensorOptions().dtype(opt.dtype).device(opt.device);
  torch::nn::Linear linear(in, out);
  linear->to(opt.device, opt.dtype);
  const torch::Tensor x = torch::randn({batch, in}, options);

  const Profile profile = profile_linear(opt, linear, x);
  fmt::print("\nnn::Linear({}, {}) on a batch of {} ({}, {})\n", in, out, batch, opt.dtype_name(), opt.device_name());
  narrate("One forward, as the profiler saw it (first recorded step):");
  const auto forwards = profile.find("linear_forward");
  if (!forwards.empty()) fmt::print("{}", format_tree(profile, forwards.front(), 4));
  narrate("LibTorch " + machine_info().torch_version +
          " here. Python's nn.Linear shows aten::linear -> aten::t -> aten::addmm. C++'s nn::Linear calls "
          "F::linear (torch/nn/functional/linear.h, LibTorch 1.13 and 2.6), which for a 2-D input with a bias, "
          "as here, is torch::addmm(bias, input, weight.t()): no aten::linear row in C++, only aten::t and "
          "aten::addmm. Any other input runs input.matmul(weight.t()), then += bias (aten::add_): lesson 05's "
          "3-D input shows aten::t -> aten::matmul.");
  std::size_t linear_rows = 0, addmm = 0, add = 0;
  for (auto f : forwards) {
    linear_rows += profile.count_under(f, "aten::linear");
    addmm += profile.count_under(f, "aten::addmm");
    add += profile.count_under(f, "aten::add") + profile.count_under(f, "aten::add_");
  }
  claim(linear_rows == 0 && addmm == forwards.size(), "C++'s nn::Linear forward has no aten::linear, one aten::addmm",
        fmt::format("{} recorded forwards: {} aten::linear, {} aten::addmm", forwards.size(), linear_rows, addmm));
  claim(add == 0, "there is no separate add: the bias goes into addmm",
        fmt::format("{} aten::add / aten::add_ under the forwards", add));

  const TensorView w = inspect(linear->weight), wt = inspect(linear->weight.t());
  fmt::print("W      {}\nW.t()  {}\n", describe(w), describe(wt));
  claim(shares_storage(linear->weight, linear->weight.t()) && w.data == wt.data && w.strides.size() == 2 &&
            wt.strides == std::vector<std::int64_t>{w.strides[1], w.strides[0]},
        "W.t() is a view: same storage, same data pointer, strides swapped",
        fmt::format("W strides [{}], W.t() strides [{}], data {} vs {}", fmt::join(w.strides, ", "),
                    fmt::join(wt.strides, ", "), w.data, wt.data));
  narrate(
      "aten::t returns a view: the same data pointer, the sizes and the strides swapped. Reading W.t() "
      "row by row walks W column by column; nothing is copied. The GEMM is told the layout (a 'transposed' "
      "flag) and reads W where it lies.");

  // A small and a large Linear in one run: the view touches no element, the copy writes n^2 of them.
  // (The view's recorded time can still rise beside a large GEMM, from what the big GEMM and copy
  // leave behind between its calls; timed alone, w.t() takes the same time at any size.)
  torch::nn::Linear big(large, large);
  big->to(opt.device, opt.dtype);
  const Profile big_profile = profile_linear(opt, big, torch::randn({batch, large}, options));
  fmt::print("\n{:<28} {:>14} {:>14}\n", "fastest call", fmt::format("{}x{}", out, in),
             fmt::format("{}x{}", large, large));
  for (const char* op : {"aten::t", "aten::contiguous"})
    fmt::print("{:<28} {:>11.2f} us {:>11.2f} us\n", op, fastest_total_us(profile, op),
               fastest_total_us(big_profile, op));
  std::set<std::string> beneath_t;
  std::size_t t_allocations = 0;
  for (auto t : profile.find("aten::t"))
    for (auto d : profile.descendants(t)) {
      beneath_t.insert(profile[d].name);
      if (profile[d].category == Category::memory && profile[d].bytes > 0) ++t_allocations;
    }
  const bool only_views = std::all_of(beneath_t.begin(), beneath_t.end(), [](const std::string& n) {
    return n == "aten::transpose" || n == "aten::as_strided";
  });
  claim(
      only_views && t_allocations == 0,
      "beneath aten::t there are only views (aten::transpose, aten::as_strided), no allocation",
      fmt::format("ops beneath aten::t: [{}]; allocations beneath it: {}", fmt::join(beneath_t, ", "), t_allocations));
  // Every contiguous() call allocates a buffer the size of the weight and copy_ fills it.
  const std::int64_t weight_bytes = linear->weight.numel() * std::int64_t(linear->weight.element_size());
  std::size_t copies = 0, full_buffers = 0;
  const auto contiguous_calls = profile.find("aten::contiguous");
  for (auto c : contiguous_calls) {
    copies += profile.count_under(c, "aten::copy_");
    std::int64_t allocated = 0;
    for (auto d : profile.descendants(c))
      if (profile[d].category == Category::memory && profile[d].bytes > 0) allocated += profile[d].bytes;
    full_buffers += allocated >= weight_bytes;
  }
  claim(!contiguous_calls.empty() && copies >= contiguous_calls.size() && full_buffers == contiguous_calls.size(),
        "each aten::contiguous allocates a buffer of the weight's size and aten::copy_ fills it",
        fmt::format("{} aten::contiguous calls: {} aten::copy_ beneath them, {} allocated >= {} bytes (the weight)",
                    contiguous_calls.size(), copies, full_buffers, weight_bytes));

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
