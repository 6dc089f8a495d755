// Lesson 02 — scale matmul + bias from tiny to large: overhead-bound vs compute-bound.
//
// For each size n the lesson profiles the article's schedule, splits each step's time into the
// arithmetic (the ops that run the BLAS call and the add loop on the CPU; the kernels' busy time
// on a GPU) and everything else, and says which regime the size is in.
#include <torch/cuda.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "workbook/findings/02_scale.h"
#include "workbook/lesson/answers.h"
#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"
#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/gpu_analysis.h"
#include "workbook/profiler/key_averages.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"
#include "workbook/profiler/svg.h"

namespace {

using namespace workbook;

struct Row {
  std::int64_t n = 0;
  double step_us = 0, ops_self_us = 0, compute_us = 0, busy = 0, gflops = 0;
  bool compute_bound() const { return busy >= 0.5; }
};

void synchronize(const LessonOptions& opt) {
  if (opt.device.is_cuda()) torch::cuda::synchronize();
}

// GFLOP/s of the best of three unprofiled n x n matmuls, after a warm-up.
double matmul_gflops(const LessonOptions& opt, std::int64_t n) {
  const auto options = torch::TensorOptions().dtype(opt.dtype).device(opt.device);
  const auto a = torch::randn({n, n}, options), b = torch::randn({n, n}, options);
  torch::Tensor c = torch::matmul(a, b);
  synchronize(opt);
  double best = 1e300;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    c = torch::matmul(a, b);
    synchronize(opt);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return 2.0 * double(n) * double(n) * double(n) / best / 1e9;
}

// The best matmul rate seen and the size it was seen at.
struct Ceiling {
  double gflops = 0;
  std::int64_t n = 0;
  bool profiled = false;  // from a profiled step of the sweep (mm + add), not an unprofiled mm
};

// The machine's matmul ceiling: the best unprofiled rate at large sizes, whatever the sweep (a
// BLAS is not always fastest at the largest size: caches and memory bandwidth have their say).
Ceiling ceiling_gflops(const LessonOptions& opt) {
  Ceiling best;
  const std::int64_t largest = opt.device.is_cuda() ? 4096 : 2048;
  for (std::int64_t n = largest / 4; n <= largest; n *= 2) {
    const double g = matmul_gflops(opt, n);
    if (g > best.gflops) best = {g, n};
  }
  return best;
}

Profile profile_size(const LessonOptions& opt, std::int64_t n) {
  const auto options = torch::TensorOptions().dtype(opt.dtype).device(opt.device);
  const auto x = torch::randn({n, n}, options), w = torch::randn({n, n}, options), b = torch::randn({n}, options);
  const Schedule schedule(1, opt.warmup, opt.steps);
  SessionOptions recording;
  recording.cuda = opt.device.is_cuda();
  Session session(schedule, recording);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    {
      Region region("matmul_add");
      torch::Tensor y = torch::add(torch::matmul(x, w), b);
    }
    synchronize(opt);
    session.step();
  }
  return session.finish();
}

double mean_step_us(const Profile& p) {
  const auto steps = p.find_prefix("ProfilerStep#");
  double total = 0;
  for (auto s : steps) total += double(p.total_ns(s)) / 1e3;
  return total / double(steps.size());
}

// Per recorded step: its time, what the profile attributes to the arithmetic ops, and the time
// in the arithmetic: the kernels' busy time on a GPU; on a CPU, where no event isolates the BLAS
// call from the op's dispatch and allocation, the step beyond the fixed cost of a tiny step.
Row measure(const Profile& p, std::int64_t n, double fixed_cost_us) {
  const auto steps = p.find_prefix("ProfilerStep#");
  const auto kernels = p.of_category(Category::kernel);
  const double count = double(steps.size()), flops = 2.0 * double(n) * double(n) * double(n) + double(n) * double(n);
  Row r;
  r.n = n;
  r.step_us = mean_step_us(p);
  r.ops_self_us = double(self_ns_of(p, {"aten::mm", "aten::add"})) / 1e3 / count;
  if (kernels.empty()) {
    r.compute_us = std::max(0.0, r.step_us - fixed_cost_us);
  } else {
    // The GPU's busy time inside each step, from the same analysis `workbook trace --gpu` prints.
    double busy_ns = 0;
    for (const StepUse& step : analyze_gpu(p).steps)
      for (const DeviceUse& d : step.devices) busy_ns += double(d.busy_ns);
    r.compute_us = busy_ns / 1e3 / count;
  }
  r.busy = r.compute_us / r.step_us;
  r.gflops = flops / (r.step_us * 1e3);
  return r;
}

void progress(std::size_t done, std::size_t total, std::int64_t n) {
  if (!::isatty(2)) return;
  const int width = 30, filled = int(width * done / total);
  fmt::print(stderr, "\r[{}{}] {}/{} n={:<6}", std::string(std::size_t(filled), '#'),
             std::string(std::size_t(width - filled), ' '), done, total, n);
  if (done == total) fmt::print(stderr, "\r{}\r", std::string(60, ' '));
}

// A GPU run recorded elsewhere, read back: the lesson's question (overhead- or compute-bound?)
// answered from a Kineto trace, for learners without a GPU.
int replay(const LessonOptions& opt, const std::string& trace) {
  print_lesson_header("Lesson 02 · Scale: overhead-bound vs compute-bound, replayed from a recorded GPU trace");
  const Profile profile = load_chrome_trace(trace);
  const GpuAnalysis analysis = analyze_gpu(profile);
  fmt::print("\n{} ({} events), recorded on a GPU machine; nothing below ran here\n\n", trace, profile.size());
  if (analysis.devices.empty()) throw TraceError(trace + ": no device activity (kernels, copies, fills) to replay");
  fmt::print("{}", format_gpu_analysis(analysis, 5));
  const std::string figure_name = std::filesystem::path(trace).stem().string() + "_gpu.svg";
  write_file_atomically(opt.out / figure_name, gpu_utilisation_svg(analysis, trace));
  fmt::print("\nwrote {}\n", (opt.out / figure_name).string());
  int cpu_bound = 0, without_gpu_work = 0;
  for (const auto& step : analysis.steps) {
    cpu_bound += step.verdict.rfind("CPU-bound", 0) == 0;
    without_gpu_work += step.verdict.rfind("no GPU work", 0) == 0;
  }
  narrate(fmt::format(
      "Per step, the GPU's busy fraction is the time at least one kernel, copy or fill ran, over the step. "
      "{} of the {} recorded steps here gave the GPU work yet left it idle more than half the time ({} gave it "
      "none at all, which says nothing about either side): in those the GPU waited "
      "for the host side (dispatch, launches, syncs, whatever ran between them), as at n=64 in the articles "
      "(GPU about 98% idle, Part 1). A compute-bound step, like their n=4096, keeps the GPU busy most of the "
      "step. The launch queue (runtime call to kernel start) tells how far ahead the CPU ran: short delays "
      "with long idle gaps mean the GPU was starved, long delays mean work queued up behind the GPU.",
      cpu_bound, analysis.steps.size(), without_gpu_work));
  return 0;
}

// The workload: matmul + bias at every size of the sweep.
struct Sweep {
  std::vector<std::int64_t> sizes;
  bool write_traces = false;
};

Sweep make_sweep(const std::vector<std::int64_t>& sizes, bool traces) {
  torch::manual_seed(0);
  return {sizes, traces};
}

// Unprofiled matmuls at the large sizes first: they give the ceiling and bring OpenBLAS's
// thread pool and buffers up before anything is measured. Then one throwaway profile, since
// the first profile of a process pays the profiler's own start-up.
Ceiling warm_up_and_measure_the_ceiling(const LessonOptions& opt, const Sweep& sweep) {
  const Ceiling ceiling = ceiling_gflops(opt);
  profile_size(opt, sweep.sizes.front());
  return ceiling;
}

std::vector<Profile> profile_every_size(const LessonOptions& opt, const Sweep& sweep) {
  const std::vector<std::int64_t>& sizes = sweep.sizes;
  std::vector<Profile> profiles;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    progress(i, sizes.size(), sizes[i]);
    profiles.push_back(profile_size(opt, sizes[i]));
    if (sweep.write_traces) {
      const std::string tag = fmt::format("{}_{}_{}", sizes[i], opt.dtype_name(), opt.device_name());
      const KeyAverages averages(profiles.back());
      write_outputs(profiles.back(), averages, averages.table("cpu_time_total", 15), opt.out, tag,
                    "Lesson 02 · n=" + tag);
    }
  }
  return profiles;
}

// Every size's row, and the ceiling: the best rate seen, unprofiled or profiled.
struct Measured {
  std::vector<Row> rows;
  Ceiling ceiling;
};

Measured split_every_step(const LessonOptions& opt, const Sweep& sweep, const std::vector<Profile>& profiles,
                          const Ceiling& unprofiled) {
  const std::vector<std::int64_t>& sizes = sweep.sizes;
  // The fixed cost of a step: the smallest size's step, whose arithmetic is negligible.
  const double fixed_cost = mean_step_us(profiles.front());
  Ceiling ceiling = unprofiled;
  std::vector<Row> rows;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    rows.push_back(measure(profiles[i], sizes[i], fixed_cost));
    // The ceiling is the best rate this run saw, unprofiled or profiled, so that no size beats it.
    if (rows.back().gflops > ceiling.gflops) ceiling = {rows.back().gflops, sizes[i], true};
  }
  fmt::print("matmul ceiling here: {:.1f} GFLOP/s at n={}, {} ({})\n", ceiling.gflops, ceiling.n, opt.dtype_name(),
             ceiling.profiled ? "the best profiled step of the sweep below, mm + add"
                              : "the best of the unprofiled matmuls timed before the sweep: mm only, no profiler; "
                                "the profiled rows below, mm + add, can be slower");
  if (!opt.device.is_cuda())
    fmt::print(
        "fixed cost of a step: {:.1f} us, the n={} step; its GEMM's 2n^3 flops need {:.3f} us at the ceiling\n\n",
        fixed_cost, sizes.front(),
        (2.0 * double(sizes.front()) * double(sizes.front()) * double(sizes.front())) / (ceiling.gflops * 1e3));
  progress(sizes.size(), sizes.size(), sizes.back());
  return {rows, ceiling};
}

// Prints the table and returns the same rows as sweep.csv's text.
std::string print_the_regime_table(const LessonOptions& opt, const std::vector<Row>& rows, double ceiling) {
  std::string csv = "n,step_us,ops_self_us,compute_us,overhead_us,busy_fraction,gflops,of_ceiling,regime\n";
  const bool gpu = opt.device.is_cuda();
  fmt::print("{:>6}  {:>11}  {:>11}  {:>12}  {:>11}  {:>5}  {:>9}  {:>8}  {}\n", "n", "step us", "mm+add self",
             gpu ? "kernels us" : "beyond fixed", gpu ? "rest us" : "fixed us", "busy", "GFLOP/s", "ceiling", "regime");
  const Row* crossover = nullptr;
  for (const Row& r : rows) {
    const char* regime = r.compute_bound() ? "compute-bound" : "overhead-bound";
    if (!crossover && r.compute_bound()) crossover = &r;
    fmt::print("{:>6}  {:>11.1f}  {:>11.1f}  {:>12.1f}  {:>11.1f}  {:>5.2f}  {:>9.2f}  {:>7.1f}%  {}\n", r.n, r.step_us,
               r.ops_self_us, r.compute_us, r.step_us - r.compute_us, std::min(r.busy, 9.99), r.gflops,
               100 * r.gflops / ceiling, regime);
    csv += fmt::format("{},{:.3f},{:.3f},{:.3f},{:.3f},{:.4f},{:.3f},{:.4f},{}\n", r.n, r.step_us, r.ops_self_us,
                       r.compute_us, r.step_us - r.compute_us, r.busy, r.gflops, r.gflops / ceiling, regime);
  }
  fmt::print("\ncrossover: {}\n", crossover ? fmt::format("n = {} is the first compute-bound size", crossover->n)
                                            : std::string("none in this range: every size is overhead-bound"));
  return csv;
}

std::vector<findings02::SizePoint> size_points(const std::vector<Row>& rows) {
  std::vector<findings02::SizePoint> points;
  for (const Row& r : rows) points.push_back({r.n, r.step_us, r.ops_self_us, r.busy});
  return points;
}

void explain_the_busy_fraction(const std::vector<Row>& rows, double ceiling) {
  const auto points = size_points(rows);
  narrate(fmt::format(
      "Busy fraction = the time that grows with the work / the step's time; a size is compute-bound when "
      "it is at least one half. On a CPU a step is a fixed cost (the dispatcher, allocating the output, the "
      "BLAS call's set-up, the profiler's bookkeeping) plus the work beyond it: the arithmetic, 2n^3 + n^2 "
      "flops, and whatever else grows with n (moving the n^2 output and bias is memory-bound work, counted "
      "here too). The fixed cost is the smallest size's step. Why not aten::mm's self time? Look: {}. The profiler "
      "cannot see inside an op, so the op's own overhead hides in its self time. The model takes the fixed "
      "cost to stay put while the arithmetic grows as n^3: {}.",
      findings02::small_size_self_share(points, ceiling), findings02::busy_fraction_trend(points)));
  answer("smallest_overhead_bound", findings02::smallest_size_overhead_bound(points));
  const std::int64_t first_compute_bound = findings02::first_compute_bound_size(points);
  answer("first_compute_bound", std::to_string(first_compute_bound),
         first_compute_bound ? fmt::format("busy fraction at least one half from n = {}", first_compute_bound)
                             : std::string("no size of the sweep reached one half"));
  const std::string disturbed = findings02::disturbed_sizes(points);
  if (!disturbed.empty()) narrate("Careful: " + disturbed + ".");
}

void compare_with_the_articles_a100(const LessonOptions& opt, const std::vector<Row>& rows, double ceiling) {
  const bool gpu = opt.device.is_cuda();
  narrate(fmt::format(
      "On a GPU the CPU only launches kernels and runs ahead, asynchronously. The articles (Part 1, A100, bf16) "
      "saw at n=64 about 2.3 ms of self CPU time for 23 us of GPU time, and a sync call that waited about 1.78 ms "
      "for 26 us of GPU work: the GPU was idle 98% of the time. At n=4096 the table read 4.9 ms "
      "self CPU and 4.5 ms self CUDA, the GPU busy; those are totals over 3 recorded steps of a GEMM and an add. "
      "The article reads one 4096 GEMM kernel in the trace as about 580 us: 2*4096^3 flops at about 237 TFLOP/s "
      "(the mean of its 5 kernels, 1084 us, is slowed by single outliers: 127 TFLOP/s).{}",
      gpu ? std::string()
          : fmt::format(" This CPU's ceiling is {:.0f} GFLOP/s, {:.0f}x to {:.0f}x slower per flop. {}. On a "
                        "CPU there is no launch queue: its costs add up instead of overlapping.",
                        ceiling, 127e3 / ceiling, 237e3 / ceiling,
                        findings02::crossover_against_the_a100(size_points(rows)))));
}

void write_the_sweep_files(const LessonOptions& opt, const std::vector<Row>& rows, const std::string& csv) {
  std::vector<double> ns, step, compute, overhead, busy;
  for (const Row& r : rows) {
    ns.push_back(double(r.n));
    step.push_back(r.step_us);
    compute.push_back(r.compute_us);
    overhead.push_back(r.step_us - r.compute_us);
    busy.push_back(r.busy);
  }
  PlotOptions plot;
  plot.title = fmt::format("Lesson 02 · time per step vs n ({}, {})", opt.dtype_name(), opt.device_name());
  plot.x_label = "matrix size n";
  plot.y_label = "microseconds per step";
  plot.right_label = "busy fraction";
  const bool on_gpu = opt.device.is_cuda();
  const std::string svg = line_plot_svg({{"step", ns, step, "#555555", false},
                                         {on_gpu ? "kernels" : "beyond the fixed cost", ns, compute, "#4e79a7", false},
                                         {on_gpu ? "rest of the step" : "fixed cost", ns, overhead, "#f28e2b", false}},
                                        plot, {{"busy fraction (right axis)", ns, busy, "#e15759", true}});
  write_file_atomically(opt.out / "sweep.csv", csv);
  write_file_atomically(opt.out / "sweep.svg", svg);
  fmt::print("wrote {}\n      {}\n", (opt.out / "sweep.csv").string(), (opt.out / "sweep.svg").string());
}

int run(const LessonOptions& opt, const std::vector<std::int64_t>& sizes, bool traces) {
  print_lesson_header("Lesson 02 · Scale the size: overhead-bound vs compute-bound");
  const Sweep sweep = make_sweep(sizes, traces);
  // Nothing printed yet: the BLAS and the profiler warm up, and the unprofiled matmul ceiling.
  const Ceiling unprofiled = warm_up_and_measure_the_ceiling(opt, sweep);
  // Every size under the article's schedule; with --traces, each size's trace, table and timeline.
  const std::vector<Profile> profiles = profile_every_size(opt, sweep);
  // The run's ceiling and the fixed cost of a step, which every size's step is split against.
  const Measured measured = split_every_step(opt, sweep, profiles, unprofiled);
  const double ceiling = measured.ceiling.gflops;
  // Size by size: the step in two parts, busy fraction, GFLOP/s, regime; then the crossover.
  const std::string csv = print_the_regime_table(opt, measured.rows, ceiling);
  // Why the busy fraction is the measure, and not aten::mm's self time.
  explain_the_busy_fraction(measured.rows, ceiling);
  // The articles' A100 numbers at n=64 and n=4096 beside this machine's ceiling.
  compare_with_the_articles_a100(opt, measured.rows, ceiling);
  // sweep.csv and sweep.svg: step time, its two parts and the busy fraction against n.
  write_the_sweep_files(opt, measured.rows, csv);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  LessonDefaults defaults("lesson02", "02_scale",
                          "Lesson 02: sweep matmul + bias over sizes; overhead-bound vs compute-bound");
  std::string sizes_text, max_size_text, traces, from_trace;
  defaults.extra = {
      {"--sizes", "comma-separated sizes (default: powers of two, 16..2048 on CPU, 64..4096 on CUDA)", &sizes_text},
      {"--max-size", "largest power of two in the default sweep", &max_size_text},
      {"--traces", "also write each size's trace, table and timeline", &traces, true},
      {"--from-trace", "replay a Kineto trace recorded on a GPU instead of running (no GPU needed)", &from_trace}};
  defaults.unused_flags = {{"--size", "it sweeps the sizes of --sizes and --max-size"}};
  const LessonOptions opt = parse_lesson_flags(argc, argv, defaults);
  if (!from_trace.empty()) {
    // A replay runs nothing: a sweep's flags given beside it would silently do nothing.
    for (const auto& [flag, value] : {std::pair<const char*, const std::string*>{"--sizes", &sizes_text},
                                      {"--max-size", &max_size_text},
                                      {"--traces", &traces}})
      if (!value->empty())
        usage_error(defaults.program, fmt::format("{} and --from-trace: a replay runs no sweep, give one", flag));
    return workbook::run_reporting_errors(defaults.program, [&] { return replay(opt, from_trace); });
  }

  std::vector<std::int64_t> sizes;
  try {
    if (!sizes_text.empty()) {
      sizes = parse_sizes(sizes_text, defaults.max_size);
    } else {
      const std::int64_t first = opt.device.is_cuda() ? 64 : 16;
      std::int64_t last = opt.device.is_cuda() ? 4096 : 2048;
      if (!max_size_text.empty()) last = parse_size(max_size_text, defaults.max_size);
      if (last < first) throw std::invalid_argument(fmt::format("must be at least {}", first));
      for (std::int64_t n = first; n <= last; n *= 2) sizes.push_back(n);
    }
  } catch (const std::invalid_argument& e) {
    usage_error(defaults.program, std::string(sizes_text.empty() ? "--max-size: " : "--sizes: ") + e.what());
  }
  std::sort(sizes.begin(), sizes.end());
  return workbook::run_reporting_errors(defaults.program, [&] { return run(opt, sizes, !traces.empty()); });
}
