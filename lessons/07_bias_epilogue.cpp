// Lesson 07 — the bias epilogue by hand, in CUDA C++ (needs a CUDA GPU).
//
// Y = X·W^T + b three ways on the GPU (see 07_bias_epilogue_gpu.cu): cuBLAS then a separate
// bias kernel, cuBLASLt with its bias epilogue, and a hand-written tiled GEMM whose epilogue adds
// the bias before its single store. Correctness against a float64 reference, CUDA-event timings
// (median of many), the bytes the separate kernel costs, and, where LibTorch has CUDA, the same
// runs inside a profiler session so the kernels show up in the table, trace and timeline.
#include <torch/cuda.h>

#include <algorithm>

#include "07_bias_epilogue_gpu.h"
#include "workbook/findings/07_bias_epilogue.h"
#include "workbook/lesson/answers.h"
#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"
#include "workbook/lesson/timing.h"
#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"

namespace {

using namespace workbook;
using lesson07::Way;

constexpr Way kWays[] = {Way::cublas_then_bias_kernel, Way::cublaslt_bias_epilogue, Way::tiled_gemm_epilogue};

void profile_in_session(const LessonOptions& opt, lesson07::BiasGemm& gemm, const std::string& tag) {
  if (!torch::cuda::is_available()) {
    narrate(
        "This LibTorch has no CUDA, so its profiler cannot record GPU kernels: the timings above come from "
        "CUDA events alone. With a CUDA build of LibTorch (LIBTORCH=/path, see README) the same runs are "
        "recorded in a session and the kernels appear in the table, the trace and the timeline.");
    return;
  }
  SessionOptions recording;
  recording.cuda = true;
  const Schedule schedule(1, opt.warmup, opt.steps);
  Session session(schedule, recording);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    for (Way way : kWays) {
      Region region(lesson07::way_name(way));
      gemm.run(way);
      gemm.synchronize();
    }
    session.step();
  }
  const Profile profile = session.finish();
  report_profile(profile, true, opt.out, tag, "Lesson 07 · the bias epilogue by hand · " + tag);
}

// Step 1: the four ways, each checked against float64 and timed with CUDA events. Returns the
// median per way, in the order of the table.
std::vector<float> time_the_four_ways(const LessonOptions& opt, lesson07::BiasGemm& gemm, int iterations,
                                      const std::string& csv_name) {
  const int n = int(opt.size), m = n, k = n;
  fmt::print("\nY [{}, {}] = X [{}, {}] · W [{}, {}]^T + b [{}], float32, median of {} runs timed with CUDA events\n",
             m, n, m, k, n, k, n, iterations);
  fmt::print("\n{:<24} {:>12} {:>12} {:>10} {:>14}\n", "way", "median us", "min us", "TFLOP/s", "rel. error");
  std::string csv = "way,median_us,min_us,tflops,relative_error\n";
  const double flops = 2.0 * m * n * k;
  std::vector<float> medians;
  for (Way way :
       {Way::cublas_then_bias_kernel, Way::cublaslt_bias_epilogue, Way::tiled_gemm_epilogue, Way::bias_kernel_alone}) {
    const bool computes_y = way != Way::bias_kernel_alone;
    const double error = computes_y ? gemm.sampled_relative_error(way, 256) : 0.0;
    const std::vector<float> t = gemm.times_us(way, std::max(opt.warmup, 3), iterations);
    const float med = float(median(t)), best = *std::min_element(t.begin(), t.end());
    medians.push_back(med);
    const double tflops = computes_y ? flops / (double(med) * 1e6) : 0.0;
    fmt::print("{:<24} {:>12.1f} {:>12.1f} {:>10} {:>14}\n", lesson07::way_name(way), med, best,
               computes_y ? fmt::format("{:.1f}", tflops) : "-", computes_y ? fmt::format("{:.1e}", error) : "-");
    csv += fmt::format("{},{:.2f},{:.2f},{:.3f},{:.3e}\n", lesson07::way_name(way), med, best, tflops, error);
    if (computes_y && !(error < 1e-3))
      throw std::runtime_error(fmt::format("{} does not match the float64 reference (relative error {:.1e})",
                                           lesson07::way_name(way), error));
  }
  write_file_atomically(opt.out / csv_name, csv);
  return medians;
}

// Step 2: what the separate bias kernel costs, and when LibTorch's addmm avoids it.
void explain_the_epilogue(const LessonOptions& opt, const std::vector<float>& medians) {
  const int n = int(opt.size), m = n;
  const double bias_bytes = (2.0 * m * n + n) * sizeof(float);
  fmt::print(
      "\nthe separate bias kernel moves {:.1f} MiB ({} reads + {} writes of Y, {} bias reads): "
      "{:.1f} us alone, {:.0f} GB/s\n",
      bias_bytes / double(1 << 20), std::int64_t(m) * n, std::int64_t(m) * n, n, medians[3],
      bias_bytes / (double(medians[3]) * 1e3));
  fmt::print("cuBLAS + bias kernel / cuBLASLt with the bias epilogue = {:.2f}x the time\n", medians[0] / medians[1]);
  const findings07::WayTimes times{medians[0], medians[1], medians[2], medians[3]};
  claim(findings07::separate_bias_kernel_costs(times));
  answer("separate_bias_costs", findings07::separate_bias_kernel_costs(times));
  answer("tiled_slower", findings07::tiled_slower_than_library(times));
  narrate(fmt::format(
      "Way (a) stores the GEMM's output, launches a second kernel that reads it back with the bias and "
      "writes Y again: two launches and an extra round trip of Y through memory. Ways (b) and (c) add the bias in the "
      "epilogue, while each output value "
      "is still in a register, before the one store. LibTorch's addmm does (b) under conditions: "
      "aten/src/ATen/native/cuda/Blas.cpp (addmm_out_cuda_impl, PyTorch 2.x built with CUDA >= 11.4) asks "
      "cuBLASLt for the bias epilogue only "
      "when the call is not in place (result is not self: addmm_ never takes it), beta = 1, the bias is 1-D, "
      "contiguous and as long as the output's columns, the output is 2-D and contiguous, the dtype is float32, "
      "float16, bfloat16 or float64, both sides of the weight are longer than 1, and DISABLE_ADDMM_CUDA_LT is "
      "not set; below CUDA 12.1 also every side of both matrices below 65535*32 and, for 16-bit dtypes, both "
      "matrices row- or column-major (a leading dimension equal to the other side). nn.Linear's usual "
      "call meets them, which is why the articles' profile shows one GEMM kernel and no add. Otherwise addmm "
      "copies the broadcast bias into the output and runs the GEMM with beta = 1, as on the CPU. The "
      "tiled kernel (c) is the same idea written out by hand. {}",
      findings07::tiled_against_library(times)));
}

int run(const LessonOptions& opt, int iterations) {
  print_lesson_header("Lesson 07 · The bias epilogue by hand (CUDA C++)");
  const lesson07::GpuInfo gpu = lesson07::require_gpu();
  fmt::print("GPU: {} (sm_{}{}, {:.0f} GiB) · driver {}.{} · runtime {}.{}\n", gpu.name, gpu.major, gpu.minor,
             gpu.memory_gib, gpu.driver_version / 1000, gpu.driver_version % 1000 / 10, gpu.runtime_version / 1000,
             gpu.runtime_version % 1000 / 10);
  // The workload: Y = X W^T + b with square float32 matrices on the GPU.
  const int n = int(opt.size);
  lesson07::BiasGemm gemm(n, n, n, 0);
  const std::vector<float> medians =
      time_the_four_ways(opt, gemm, iterations, fmt::format("{}_float32_cuda_timings.csv", n));
  explain_the_epilogue(opt, medians);
  profile_in_session(opt, gemm, fmt::format("{}_float32_cuda", n));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  LessonDefaults defaults("lesson07", "07_bias_epilogue",
                          "Lesson 07: matmul + bias on the GPU three ways, in CUDA C++ (needs a CUDA GPU)", 4096);
  defaults.float32_only_reason = "its kernels are float32";
  std::string iterations = "50";
  defaults.extra = {{"--iterations", "timed runs per way (median reported)", &iterations}};
  const LessonOptions opt = parse_lesson_flags(argc, argv, defaults);
  const int runs = int(size_flag(defaults.program, "--iterations", iterations, 100000));
  // Without a GPU (or without nvcc) lesson07::NoGpu becomes one line and exit status 1.
  return run_reporting_errors(defaults.program, [&] { return run(opt, runs); });
}
