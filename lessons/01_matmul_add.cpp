// Lesson 01 — profile matmul + bias (Part 1 of the articles).
//
// fn(x, w, b) = add(matmul(x, w), b), inside a region named "matmul_add", profiled with the
// schedule wait=1, warmup=1, active=3 over 5 steps, then the statistics table and three files:
// traces/01_matmul_add/<size>_<dtype>_<device>.{json,txt,svg}.
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>

#include "workbook/findings/01_matmul_add.h"
#include "workbook/lesson/answers.h"
#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"
#include "workbook/lesson/timing.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"

namespace {

using namespace workbook;

// The workload: one n x n matmul plus a bias vector, the articles' fn(x, w, b). (Their bias may
// have been [n, n]: the 32 MB Memcpy DtoD Part 1 saw at n = 4096 in bf16 is a plain copy of that
// size, and a broadcast vector would need a copy kernel instead.)
struct MatmulAdd {
  torch::Tensor x, w, b;
};

MatmulAdd make_matmul_add(const LessonOptions& opt) {
  torch::manual_seed(0);
  const auto options = torch::TensorOptions().dtype(opt.dtype).device(opt.device);
  MatmulAdd work;
  work.x = torch::randn({opt.size, opt.size}, options);
  work.w = torch::randn({opt.size, opt.size}, options);
  work.b = torch::randn({opt.size}, options);
  return work;
}

torch::Tensor matmul_add(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  Region region("matmul_add");
  return torch::add(torch::matmul(x, w), b);
}

void synchronize(const LessonOptions& opt) {
  if (opt.device.is_cuda()) torch::cuda::synchronize();
}

// What the scheduled run left: the profile of its recorded steps and the wall time of every step.
struct ScheduledRun {
  Schedule schedule;
  Profile profile;
  std::vector<double> step_us;
};

ScheduledRun profile_the_schedule(const LessonOptions& opt, const MatmulAdd& work) {
  ScheduledRun recorded;
  recorded.schedule = Schedule(/*wait=*/1, /*warmup=*/opt.warmup, /*active=*/opt.steps);
  SessionOptions recording;
  recording.record_shapes = true;
  recording.profile_memory = true;
  recording.with_flops = true;
  recording.cuda = opt.device.is_cuda();

  Session session(recorded.schedule, recording);
  for (int step = 0; step < recorded.schedule.total_steps(); ++step) {
    const auto start = std::chrono::steady_clock::now();
    {
      // The result dies inside its own step. Freed after session.step(), it would be freed under
      // the next step's ProfilerStep#, and the first recorded step would pay for freeing a block
      // allocated before recording began (LibTorch's allocator reporter logs that case).
      const torch::Tensor y = matmul_add(work.x, work.w, work.b);
      synchronize(opt);
    }
    recorded.step_us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    session.step();
  }
  recorded.profile = session.finish();
  return recorded;
}

void show_the_chain(const LessonOptions& opt, const ScheduledRun& recorded) {
  const Profile& profile = recorded.profile;
  fmt::print("\nmatmul_add at n={} ({}, {}): {} steps, {} recorded, {} events\n", opt.size, opt.dtype_name(),
             opt.device_name(), recorded.schedule.total_steps(), opt.steps, profile.size());
  narrate(
      "The chain to look for: ProfilerStep#N -> matmul_add -> aten::matmul -> aten::mm, and aten::add "
      "beside aten::matmul. Here is the first recorded step as a tree:");
  const auto steps = profile.find_prefix("ProfilerStep#");
  if (!steps.empty()) fmt::print("{}", format_tree(profile, steps.front(), 4));
}

void write_the_table_and_traces(const LessonOptions& opt, const Profile& profile) {
  report_profile(profile, opt.device.is_cuda(), opt.out, opt.tag(), "Lesson 01 · matmul + bias · " + opt.tag());
  narrate("Self time is an op's own time, total time includes its children: " +
          findings01::matmul_self_against_total(profile) +
          ". The percentages are of the sum of all self times, so the ProfilerStep rows can reach 100%.");
}

// Per recorded step, what the profile says about its start: the gap before aten::matmul and the
// step's own (self) time, both in microseconds.
struct StepGaps {
  std::vector<double> gaps, step_self;
};

StepGaps measure_the_gap_before_matmul(const Profile& profile) {
  fmt::print("per recorded step: its total, its self time, and the gap from matmul_add's start to aten::matmul's\n");
  StepGaps measured;
  std::vector<double>& gaps = measured.gaps;
  for (auto region : profile.find("matmul_add")) {
    const auto matmul = profile.under(region, "aten::matmul");
    const auto step = profile.parent(region);
    if (matmul.empty() || !step) continue;
    gaps.push_back(double(profile[matmul[0]].start_ns - profile[region].start_ns) / 1e3);
    measured.step_self.push_back(double(profile.self_ns(*step)) / 1e3);
    fmt::print("  {:<16} total {:>9.1f} us   self {:>7.1f} us   gap {:>7.1f} us\n", profile[*step].name,
               profile.total_ns(*step) / 1e3, measured.step_self.back(), gaps.back());
  }
  if (gaps.size() >= 2) {
    const double later = median(std::vector<double>(gaps.begin() + 1, gaps.end()));
    fmt::print("gap before aten::matmul: first recorded step {:.1f} us, median of the later ones {:.1f} us ({:.1f}x)\n",
               gaps[0], later, gaps[0] / later);
  }
  return measured;
}

void tell_whether_the_first_step_was_cold(const LessonOptions& opt, const std::vector<double>& gaps) {
  const Finding cold_start = findings01::first_step_was_cold(gaps);
  answer("first_step_cold", cold_start);  // the learner's prediction is scored against it
  const bool cold = cold_start.holds;
  const char* what_this_run_shows =
      !cold ? "Here the first recorded step's gap was not much larger than the later ones. A cold start shows up in "
              "the first recorded step: "
      : opt.warmup > 0
          ? workbook::kineto_available()
                ? "Here the first recorded step paid for a cold start although warm-up ran before it: with Kineto "
                  "(LibTorch 2.6) the first two steps a recording holds both pay for the profiler's start, so "
                  "one warm-up step is not enough there (try -- --warmup 2); or something else ran for the "
                  "first time in that step. A cold start is "
                : "Here the first recorded step paid for a cold start although warm-up ran before it, which took "
                  "the profiler's start: something else ran for the first time in that step. A cold start is "
          : "Here the first recorded step paid for a cold start: ";
  narrate(std::string(what_this_run_shows) +
          "whatever runs for the first time under the profiler. That is the gap the articles measured: about "
          "228 us before the first aten::matmul of the first recorded step against about 5 us later (Part 1, "
          "A100). The schedule's wait and warm-up steps did not remove it there; warm-up iterations run before "
          "the profiler started did. This workbook's Session records its warm-up steps and throws them away (as "
          "torch.profiler's documentation describes warm-up): the recording runs on into the active steps and the "
          "warm-up is cut from it, so what the profiler's start costs lands in the warm-up. On LibTorch 1.13 one "
          "warm-up step takes it; with Kineto (LibTorch 2.6, this workbook's second CI leg) the first two recorded "
          "steps pay it, so it takes two. This run had " +
          fmt::format("{} warm-up step(s) (-- --warmup N).", opt.warmup));
}

void print_the_wall_time_per_step(const ScheduledRun& recorded) {
  fmt::print("wall time per step, from this loop: ");
  for (int k = 0; k < int(recorded.step_us.size()); ++k) {
    const auto action = recorded.schedule.action(k);
    fmt::print("{}{:.1f} us ({})", k ? ", " : "", recorded.step_us[std::size_t(k)],
               action == Schedule::Action::none     ? "wait: profiler off"
               : action == Schedule::Action::warmup ? "warm-up: recorded, thrown away"
                                                    : "recorded");
  }
  fmt::print("\n");
}

void explain_the_steps_self_time(const LessonOptions& opt, const Profile& profile,
                                 const std::vector<double>& step_self) {
  if (step_self.size() < 2) return;
  double total_self = 0, total_steps = 0;
  for (auto st : profile.find_prefix("ProfilerStep#")) total_steps += double(profile.total_ns(st)) / 1e3;
  for (double v : step_self) total_self += v;
  narrate(fmt::format(
      "ProfilerStep* self time is time inside a step that no op covers: {:.1f} us of the steps' {:.1f} us here "
      "({:.0f}%), {:.1f} us of it in the first recorded step and a median of {:.1f} us in the later ones. It "
      "holds the loop's code between ops (the wall-clock reads{}, freeing the result) and the profiler's own "
      "work at the start and end of the step's region, and any time the thread was not running (descheduled on a "
      "busy machine; the profile does not show which): real time, but not the workload's.",
      total_self, total_steps, 100 * total_self / total_steps, step_self[0],
      median(std::vector<double>(step_self.begin() + 1, step_self.end())),
      opt.device.is_cuda() ? ", the synchronize call" : ""));
}

void compare_with_the_articles_a100() {
  narrate(
      "For comparison, at n=64 on an A100 (Part 1) the articles saw about 2.3 ms of self CPU time for 23 us of "
      "GPU work, and a sync call that waited about 1.78 ms for 26 us of GPU work: overhead-bound. "
      "On the CPU there is no asynchronous launch, so every op's time is spent right here, in this table.");
  fmt::print("open the .json in https://ui.perfetto.dev or chrome://tracing; the .svg in a browser\n");
}

int run(const LessonOptions& opt) {
  print_lesson_header("Lesson 01 · Profile matmul + bias");
  const MatmulAdd work = make_matmul_add(opt);
  // Five steps under wait=1, warmup, active: the loop the rest of the lesson reads.
  const ScheduledRun recorded = profile_the_schedule(opt, work);
  // The first recorded step as a tree: ProfilerStep#N -> matmul_add -> aten::matmul -> aten::mm.
  show_the_chain(opt, recorded);
  const std::size_t ops = findings01::ops_directly_inside(recorded.profile, "matmul_add");
  answer("ops_in_region", std::to_string(ops), fmt::format("{} ops directly inside the first matmul_add", ops));
  // The statistics table, self vs total time, and the trace, table and timeline files.
  write_the_table_and_traces(opt, recorded.profile);
  // Each recorded step's total and self time and how long matmul_add waited for aten::matmul.
  const StepGaps measured = measure_the_gap_before_matmul(recorded.profile);
  // Whether the first recorded step paid for a cold start, as in the articles.
  tell_whether_the_first_step_was_cold(opt, measured.gaps);
  // The loop's own clock per step, labelled with what the profiler did in it.
  print_the_wall_time_per_step(recorded);
  // What the ProfilerStep rows' self time is made of.
  explain_the_steps_self_time(opt, recorded.profile, measured.step_self);
  // The articles' A100 numbers beside this run, and where to open the files.
  compare_with_the_articles_a100();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  workbook::LessonDefaults defaults("lesson01", "01_matmul_add",
                                    "Lesson 01: profile add(matmul(x, w), b) with a wait/warmup/active schedule", 64);
  const workbook::LessonOptions opt = workbook::parse_lesson_flags(argc, argv, defaults);
  return workbook::run_reporting_errors(defaults.program, [&] { return run(opt); });
}
