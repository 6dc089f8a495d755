// Lesson 04 — the bias lives in the GEMM: addmm's fused epilogue (Part 2 of the articles).
//
// Three ways to compute y = x W^T + b, profiled side by side in one run: unfused mm + add,
// fused addmm, and nn::Linear. Per forward: the ops, the extra intermediate the unfused path
// allocates, the bytes its separate add moves, and fused vs unfused time.
#include <torch/cuda.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>

#include "workbook/findings/04_addmm_epilogue.h"
#include "workbook/lesson/answers.h"
#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"
#include "workbook/lesson/timing.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"

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

// The workload: y = x W^T + b with x [M, K], W [N, K], b [N], and the three forwards that compute
// it. The forwards hold their own handles to the tensors and the Linear, so a Forwards can move.
struct Forwards {
  std::int64_t m = 0, k = 0, n = 0;
  std::int64_t elem = 0;  // bytes per element of the run's dtype
  torch::Tensor x, w, b;
  std::vector<Variant> variants;
};

Forwards make_forwards(const LessonOptions& opt, std::int64_t m, std::int64_t k, std::int64_t n) {
  torch::manual_seed(0);
  const auto options = torch::TensorOptions().dtype(opt.dtype).device(opt.device);
  const torch::Tensor x = torch::randn({m, k}, options), w = torch::randn({n, k}, options),
                      b = torch::randn({n}, options);
  torch::nn::Linear linear(k, n);
  linear->to(opt.device, opt.dtype);
  {
    torch::NoGradGuard no_grad;
    linear->weight.copy_(w);
    linear->bias.copy_(b);
  }
  Forwards forwards{m, k, n, std::int64_t(c10::elementSize(opt.dtype)), x, w, b, {}};
  forwards.variants = {
      {"unfused", [x, w, b] { return torch::add(torch::mm(x, w.t()), b); }},
      {"fused", [x, w, b] { return torch::addmm(b, x, w.t()); }},
      {"nn_linear", [linear = linear.ptr(), x] { return linear->forward(x); }},
  };
  const torch::Tensor reference = forwards.variants[0].forward();
  for (const Variant& v : forwards.variants)
    if (!torch::allclose(v.forward(), reference, 1e-2, 1e-2))
      throw std::runtime_error(std::string(v.name) + " differs");
  return forwards;
}

Profile profile_three_forwards(const LessonOptions& opt, const Forwards& forwards) {
  const std::int64_t m = forwards.m, k = forwards.k, n = forwards.n;
  fmt::print("\ny = x W^T + b with x [{}, {}], W [{}, {}], b [{}] ({}, {}): three forwards per step\n", m, k, n, k, n,
             opt.dtype_name(), opt.device_name());
  SessionOptions recording;
  recording.record_shapes = true;
  recording.profile_memory = true;
  recording.cuda = opt.device.is_cuda();
  const Schedule schedule(1, opt.warmup, opt.steps);
  Session session(schedule, recording);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    for (const Variant& v : forwards.variants) {
      Region region(v.name);
      torch::Tensor y = v.forward();
      synchronize(opt);
    }
    session.step();
  }
  return session.finish();
}

void show_where_the_bias_goes(const LessonOptions& opt, const Forwards& forwards, const Profile& profile) {
  const std::int64_t out_bytes = forwards.m * forwards.n * forwards.elem;
  fmt::print("\n{:<10} {:>8} {:>8} {:>8} {:>8} {:>16}\n", "forward", "addmm", "mm", "add", "copy_",
             "[M,N] allocations");
  for (const Variant& v : forwards.variants) {
    const auto r = first_named(profile, v.name);
    std::size_t allocations = 0;
    for (auto d : profile.descendants(r))
      allocations += profile[d].category == Category::memory && profile[d].bytes >= out_bytes;
    fmt::print("{:<10} {:>8} {:>8} {:>8} {:>8} {:>16}\n", v.name, profile.count_under(r, "aten::addmm"),
               profile.count_under(r, "aten::mm"), profile.count_under(r, "aten::add"),
               profile.count_under(r, "aten::copy_"), allocations);
  }
  // What the run shows, decided by lesson 04's findings (lessons/findings, tested on synthetic
  // profiles where each must come out NOT shown).
  for (const Finding& f :
       {findings04::bias_inside_the_op(profile), findings04::one_more_output_buffer(profile, out_bytes)})
    claim(f);
  const Finding inside = findings04::bias_inside_the_op(profile);
  answer("fused_runs_add", inside.holds ? "no" : "yes", inside.evidence);
  if (!opt.device.is_cuda()) {
    const Finding copied = findings04::bias_copied_into_output(profile);
    claim(copied);
    answer("bias_copied", copied);
  }
}

// Bytes through memory beyond the GEMM's inputs, from the shapes, per path.
void count_the_bytes_each_path_moves(const Forwards& forwards) {
  const std::int64_t m = forwards.m, n = forwards.n, elem = forwards.elem;
  const double mib = double(1 << 20);
  const double unfused_bytes = double((3 * m * n + n) * elem), cpu_fused_bytes = double((3 * m * n + n) * elem),
               epilogue_bytes = double((m * n + n) * elem);
  fmt::print(
      "\nbytes through memory for the output, per forward (from the shapes):\n"
      "  unfused mm + add : mm writes [M,N]; add reads it and b, writes a second [M,N]   {:8.2f} MiB\n"
      "  addmm on the CPU : copy_ writes b broadcast to [M,N]; the BLAS (beta = 1) reads\n"
      "                     it back and writes the result                                {:8.2f} MiB\n"
      "  GPU epilogue     : the GEMM adds b in registers and stores [M,N] once           {:8.2f} MiB\n",
      unfused_bytes / mib, cpu_fused_bytes / mib, epilogue_bytes / mib);
  narrate(
      "Counted per op from the shapes, the fused path moves as many bytes as the unfused one: LibTorch's CPU "
      "addmm is not an epilogue. It writes the broadcast bias into the output (the aten::copy_ beneath it) and "
      "asks the BLAS to accumulate the product onto it (beta = 1). The count stops at the ops: inside the BLAS, "
      "OpenBLAS's level-3 driver also passes over the output whenever beta is not 1 (zeroing it for the unfused "
      "mm, beta = 0), which beta = 1 skips. So the fused path replaces the add's loop over [M, N] with the "
      "copy_ (the table at the end gives their times: the aten::add row, and the aten::copy_ row, whose calls "
      "are the fused and the nn_linear forwards' together) and saves one "
      "[M, N] allocation; on the CPU it saves no dispatch (there LibTorch's addmm runs aten::expand and aten::copy_ "
      "beneath it, where the unfused path runs aten::mm and aten::add: a CPU run's copy_ finding checks it); the "
      "timing below says which path was faster in this run. "
      "On a "
      "GPU, when addmm's cuBLASLt conditions hold (lesson 07 lists them), the bias epilogue adds the bias while "
      "each output tile is still in registers, so the output is stored once: that is the round trip Part 2 of "
      "the articles means.");
}

// Timing uses preallocated outputs (the out= forms of the same ops): the allocator's page faults,
// large and erratic in a virtual machine, stay out of it; the profile above counts allocations.
void time_fused_against_unfused(const LessonOptions& opt, const Forwards& forwards) {
  const auto options = torch::TensorOptions().dtype(opt.dtype).device(opt.device);
  const torch::Tensor &x = forwards.x, &b = forwards.b;
  const torch::Tensor wt = forwards.w.t();
  torch::Tensor tmp = torch::empty({forwards.m, forwards.n}, options),
                y = torch::empty({forwards.m, forwards.n}, options);
  const std::vector<Variant> timed{
      {"unfused", [&] { return torch::add_out(y, torch::mm_out(tmp, x, wt), b); }},
      {"fused", [&] { return torch::addmm_out(y, b, x, wt); }},
  };
  const int rounds = 21;
  const std::vector<double> t = interleaved_medians_us(opt, timed, rounds);
  const double fused_less_us = t[0] - t[1];
  fmt::print(
      "median of {} unprofiled rounds into preallocated outputs: unfused {:.1f} us, fused {:.1f} us\n"
      "fused / unfused = {:.2f}x the time: fused took {:.1f} us {} per forward (outputs preallocated, so the\n"
      "allocation the fused path saves is not in these times)\n",
      rounds, t[0], t[1], t[1] / t[0], std::abs(fused_less_us), fused_less_us >= 0 ? "less" : "longer");
}

void write_the_reports(const LessonOptions& opt, const Forwards& forwards, const Profile& profile) {
  const std::string tag =
      fmt::format("{}x{}x{}_{}_{}", forwards.m, forwards.k, forwards.n, opt.dtype_name(), opt.device_name());
  report_profile(profile, opt.device.is_cuda(), opt.out, tag, "Lesson 04 · addmm's epilogue · " + tag);
}

int run(const LessonOptions& opt, std::int64_t m, std::int64_t k, std::int64_t n) {
  print_lesson_header("Lesson 04 · The bias lives in the GEMM: addmm's epilogue");
  const Forwards forwards = make_forwards(opt, m, k, n);
  // The shapes, then unfused, fused and nn::Linear, each in its own region, every step.
  const Profile profile = profile_three_forwards(opt, forwards);
  // Per forward, the ops and the [M, N] allocations: where the bias is added and what that costs.
  show_where_the_bias_goes(opt, forwards, profile);
  // From the shapes: the bytes through memory of each path, and why CPU addmm moves as many.
  count_the_bytes_each_path_moves(forwards);
  // Unprofiled, into preallocated outputs: fused against unfused time.
  time_fused_against_unfused(opt, forwards);
  // The statistics table, the trace and the timeline.
  write_the_reports(opt, forwards, profile);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Default --size: M: a tall batch, where the extra pass over the output shows
  LessonDefaults defaults("lesson04", "04_addmm_epilogue", "Lesson 04: unfused mm + add vs fused addmm vs nn::Linear",
                          8192);
  std::string features = "256";
  defaults.extra = {{"--features", "K = N, the Linear's in and out features", &features}};
  const LessonOptions opt = parse_lesson_flags(argc, argv, defaults);
  const std::int64_t kn = size_flag(defaults.program, "--features", features, 16384);
  return workbook::run_reporting_errors(defaults.program, [&] { return run(opt, opt.size, kn, kn); });
}
