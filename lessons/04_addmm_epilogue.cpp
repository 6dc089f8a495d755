// Lesson 04 — the bias lives in the GEMM: addmm's fused epilogue (Part 2 of the articles).
//
// Three ways to compute y = x W^T + b, profiled side by side in one run: unfused mm + add,
// fused addmm, and nn::Linear. Per forward: the ops, the extra intermediate the unfused path
// allocates, the bytes its separate add moves, and fused vs unfused time.
#include <torch/cuda.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "workbook/lesson_cli.h"
#include "workbook/lesson_output.h"
#include "workbook/region.h"
#include "workbook/session.h"
#include "workbook/timing.h"

namespace {

using namespace workbook;

struct Variant {
  const char* name;
  std::function<torch::Tensor()> forward;
};

void synchronize(const LessonOptions& opt) {
  if (opt.device.is_cuda()) torch::cuda::synchronize();
}

// Median time per variant over `rounds` interleaved rounds (all see the same cache state).
std::vector<double> interleaved_medians_us(const LessonOptions& opt, const std::vector<Variant>& variants, int rounds) {
  std::vector<std::function<void()>> work;
  for (const auto& v : variants)
    work.push_back([&opt, &v] {
      torch::Tensor y = v.forward();
      synchronize(opt);
    });
  return interleaved_median_us(work, 1, rounds);
}

int run(const LessonOptions& opt, std::int64_t m, std::int64_t k, std::int64_t n) {
  print_lesson_header("Lesson 04 · The bias lives in the GEMM: addmm's epilogue");
  torch::manual_seed(0);
  const auto options = torch::TensorOptions().dtype(opt.dtype).device(opt.device);
  const torch::Tensor x = torch::randn({m, k}, options), w = torch::randn({n, k}, options), b = torch::randn({n}, options);
  torch::nn::Linear linear(k, n);
  linear->to(opt.device, opt.dtype);
  {
    torch::NoGradGuard no_grad;
    linear->weight.copy_(w);
    linear->bias.copy_(b);
  }
  const std::vector<Variant> variants{
      {"unfused", [&] { return torch::add(torch::mm(x, w.t()), b); }},
      {"fused", [&] { return torch::addmm(b, x, w.t()); }},
      {"nn_linear", [&] { return linear->forward(x); }},
  };
  const torch::Tensor reference = variants[0].forward();
  for (const Variant& v : variants)
    if (!torch::allclose(v.forward(), reference, 1e-2, 1e-2)) throw std::runtime_error(std::string(v.name) + " differs");

  fmt::print("\ny = x W^T + b with x [{}, {}], W [{}, {}], b [{}] ({}, {}): three forwards per step\n", m, k, n, k, n,
             opt.dtype_name(), opt.device_name());
  SessionOptions recording;
  recording.record_shapes = true;
  recording.profile_memory = true;
  recording.cuda = opt.device.is_cuda();
  const Schedule schedule(1, opt.warmup, opt.steps);
  Session session(schedule, recording);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    for (const Variant& v : variants) {
      Region region(v.name);
      torch::Tensor y = v.forward();
      synchronize(opt);
    }
    session.step();
  }
  const Profile profile = session.finish();

  const std::int64_t out_bytes = m * n * std::int64_t(c10::elementSize(opt.dtype));
  fmt::print("\n{:<10} {:>8} {:>8} {:>8} {:>8} {:>16}\n", "forward", "addmm", "mm", "add", "copy_",
             "[M,N] allocations");
  for (const Variant& v : variants) {
    const auto regions = profile.find(v.name);
    if (regions.empty()) continue;
    const auto r = regions.front();
    int allocations = 0;
    for (auto d : profile.descendants(r))
      allocations += profile[d].category == Category::memory && profile[d].bytes >= out_bytes;
    fmt::print("{:<10} {:>8} {:>8} {:>8} {:>8} {:>16}\n", v.name, profile.count_under(r, "aten::addmm"),
               profile.count_under(r, "aten::mm"), profile.count_under(r, "aten::add"),
               profile.count_under(r, "aten::copy_"), allocations);
  }
  const std::int64_t extra = (2 * m * n + n) * std::int64_t(c10::elementSize(opt.dtype));
  fmt::print("\nthe unfused add's extra pass: {} reads + {} writes of the output + {} bias reads = {:.2f} MiB per forward\n",
             m * n, m * n, n, double(extra) / double(1 << 20));

  narrate("The unfused path writes the GEMM's output to memory, then aten::add reads it back, adds the bias "
          "and writes a second [M, N] buffer: one more allocation and a full extra round trip. aten::addmm "
          "does it in one op. On a GPU the GEMM kernel adds the bias in its epilogue, while each output tile "
          "is still in registers, before the single store. On the CPU, LibTorch's addmm first writes the "
          "broadcast bias into the output (the aten::copy_ beneath it) and then asks the BLAS to accumulate the "
          "product onto it (beta = 1): still one op, one buffer, no separate add.");

  // Timing uses preallocated outputs (the out= forms of the same ops): the allocator's page faults,
  // large and erratic in a virtual machine, stay out of it; the profile above counts allocations.
  const torch::Tensor wt = w.t();
  torch::Tensor tmp = torch::empty({m, n}, options), y = torch::empty({m, n}, options);
  const std::vector<Variant> timed{
      {"unfused", [&] { return torch::add_out(y, torch::mm_out(tmp, x, wt), b); }},
      {"fused", [&] { return torch::addmm_out(y, b, x, wt); }},
  };
  const int rounds = 21;
  const std::vector<double> t = interleaved_medians_us(opt, timed, rounds);
  fmt::print("median of {} unprofiled rounds into preallocated outputs: unfused {:.1f} us, fused {:.1f} us\n"
             "fused / unfused = {:.2f}x the time ({:.1f} us saved: {:.1f} GB/s for the extra pass's bytes)\n",
             rounds, t[0], t[1], t[1] / t[0], t[0] - t[1], double(extra) / ((t[0] - t[1]) * 1e3));

  const std::string tag = fmt::format("{}x{}x{}_{}_{}", m, k, n, opt.dtype_name(), opt.device_name());
  report_profile(profile, opt.device.is_cuda(), opt.out, tag, "Lesson 04 · addmm's epilogue · " + tag);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Default --size: M: a tall batch, where the extra pass over the output shows
  LessonDefaults defaults("lesson04", "04_addmm_epilogue",
                          "Lesson 04: unfused mm + add vs fused addmm vs nn::Linear", 8192);
  std::string features = "256";
  defaults.extra = {{"--features", "K = N, the Linear's in and out features", &features}};
  const LessonOptions opt = parse_lesson_flags(argc, argv, defaults);
  const std::int64_t kn = size_flag(defaults.program, "--features", features, 16384);
  return workbook::run_reporting_errors(defaults.program, [&] { return run(opt, opt.size, kn, kn); });
}
