// Lesson 12 — beyond one process: data-parallel training on c10d, profiled rank by rank (beyond
// the articles).
//
// `lesson12 --ranks N` starts N copies of itself with the environment torchrun gives its workers
// (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT); a copy started that way — by this
// launcher or by another that sets the same variables — is one rank. Each rank trains the GeGLU
// MLP on its shard of the batch, averaging the gradients over a Gloo process group three ways, and
// records each way's steps. The launcher then reads every rank's trace and compares the ways:
// collectives per step, communication in flight, and how much of it the rank spent computing.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>
#include "12_data_parallel.h"  // way 3 is exercise 12: the lesson runs its reference solution
#include "workbook/findings/12_data_parallel.h"
#include "workbook/lesson/answers.h"
#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"

#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/communication.h"
#include "workbook/profiler/multi_rank.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"
#include "workbook/support/data_parallel.h"
#include "workbook/support/geglu.h"

namespace {

using namespace workbook;

// The three ways of averaging gradients, in the order each rank runs them.
const char* const kWays[] = {"each_gradient", "flat_bucket", "overlapped"};
const char* describe(const std::string& way) {
  return way == "each_gradient" ? "each gradient, after backward"
         : way == "flat_bucket" ? "one flat bucket, after backward"
                                : "buckets from hooks, during backward";
}

struct Job {
  std::int64_t dim = 0, hidden = 0, bucket_bytes = 0;
  int ranks = 2, fail_rank = -1, fail_step = -1;
  std::chrono::milliseconds timeout{30000};
};

// ---- One rank ---------------------------------------------------------------------------------

// The workload: the same whole batch on every rank (one seed), each rank training on its shard.
struct Batch {
  torch::Tensor x, target;
};

Batch whole_batch(const LessonOptions& opt, const Job& job) {
  torch::manual_seed(0);
  Batch b{torch::randn({opt.size, job.dim}), {}};
  b.target = torch::randn({opt.size, job.dim});
  return b;
}

Geglu fresh_model(const Job& job) {
  torch::manual_seed(1);
  return Geglu(job.dim, job.hidden);
}

constexpr double kLearningRate = 1e-2;

// What one process training on the whole batch ends with: every way must end there too.
std::vector<torch::Tensor> single_process_weights(const Batch& b, const Job& job, int steps) {
  Geglu model = fresh_model(job);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(kLearningRate));
  for (int step = 0; step < steps; ++step) {
    zero_grad(*model, /*set_to_none=*/true);
    torch::mse_loss(model->forward(b.x), b.target).backward();
    optimizer.step();
  }
  std::vector<torch::Tensor> weights;
  for (const auto& p : model->parameters()) weights.push_back(p.detach().clone());
  return weights;
}

// Trains a fresh model on this rank's shard one way, each step a ProfilerStep with regions
// forward, backward, sync and optimizer; returns the recorded steps and checks the final weights.
Profile train_one_way(const LessonOptions& opt, const Job& job, Collectives& group, const Batch& b,
                      const std::string& way, const std::vector<torch::Tensor>& expected) {
  Geglu model = fresh_model(job);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(kLearningRate));
  const torch::Tensor x = shard_rows(b.x, group.rank(), group.world_size());
  const torch::Tensor target = shard_rows(b.target, group.rank(), group.world_size());
  std::unique_ptr<exercises::OverlappedAllreduce> overlapped;
  if (way == "overlapped")
    overlapped = std::make_unique<exercises::OverlappedAllreduce>(model->parameters(), group, job.bucket_bytes);
  const Schedule schedule(0, opt.warmup, opt.steps);
  Session session(schedule);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    if (group.rank() == job.fail_rank && step == job.fail_step && way == kWays[0]) {
      fmt::print(stderr, "lesson12 (rank {}): stopping at step {} as --fail-rank asked\n", group.rank(), step);
      std::_Exit(3);  // as a crash would: no goodbye to the other ranks
    }
    zero_grad(*model, /*set_to_none=*/true);
    torch::Tensor loss;
    {
      Region r("forward");
      loss = torch::mse_loss(model->forward(x), target);
    }
    {
      Region r("backward");
      loss.backward();
    }
    {
      Region r("sync");
      if (way == "each_gradient") allreduce_each_gradient(group, model->parameters());
      if (way == "flat_bucket") allreduce_one_flat_bucket(group, model->parameters());
      if (overlapped) overlapped->finish();
    }
    {
      Region r("optimizer");
      optimizer.step();
    }
    session.step();
  }
  const auto parameters = model->parameters();
  for (std::size_t k = 0; k < parameters.size(); ++k)
    if (!torch::allclose(parameters[k].detach(), expected[k], 1e-4, 1e-6))
      throw std::runtime_error(
          fmt::format("way {} ends with weights that differ from one process's (parameter {}, "
                      "largest difference {:.3g})",
                      way, k, (parameters[k].detach() - expected[k]).abs().max().item<double>()));
  return session.finish();
}

int run_rank(const LessonOptions& opt, const Job& job, const RankEnv& env) {
  // One intra-op thread per rank (torchrun defaults OMP_NUM_THREADS to 1 when it starts several
  // processes and the variable is unset); Gloo adds worker threads of its own.
  torch::set_num_threads(1);
  Collectives group(env, job.timeout);
  const Batch b = whole_batch(opt, job);
  const auto expected = single_process_weights(b, job, opt.warmup + opt.steps);
  for (const char* way : kWays) {
    const Profile profile = train_one_way(opt, job, group, b, way, expected);
    TraceOptions trace;
    trace.process_name = fmt::format("rank {}", env.rank);
    write_chrome_trace(profile, opt.out / way / fmt::format("rank{}.json", env.rank), trace);
  }
  return 0;
}

// ---- The launcher -----------------------------------------------------------------------------

// Starts this program once per rank with a launcher's environment; returns the processes.
std::vector<pid_t> start_ranks(const Job& job, int port, char** argv) {
  std::vector<pid_t> ranks;
  for (int r = 0; r < job.ranks; ++r) {
    RankEnv rank;
    rank.rank = r;
    rank.world_size = job.ranks;
    rank.master_port = port;
    std::vector<std::string> settings = rank_environment(rank, {"OMP_NUM_THREADS=1"});
    std::vector<char*> env;
    for (auto& s : settings) env.push_back(s.data());
    env.push_back(nullptr);
    pid_t pid = 0;
    if (const int error = ::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, env.data()); error != 0)
      throw std::runtime_error(fmt::format("cannot start rank {}: {}", r, std::strerror(error)));
    ranks.push_back(pid);
  }
  return ranks;
}

// Waits for every rank. Once one has failed, the others get the collective timeout (and 5 s) to
// notice and stop; any still running then is killed. Returns one line per failed rank.
std::vector<std::string> wait_for_ranks(std::vector<pid_t> ranks, const Job& job) {
  std::vector<std::string> failures;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::size_t running = ranks.size();
  while (running > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      const auto it = std::find(ranks.begin(), ranks.end(), pid);
      if (it == ranks.end()) continue;
      const int rank = int(it - ranks.begin());
      *it = 0;
      --running;
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok) {
        failures.push_back(WIFEXITED(status) ? fmt::format("rank {} exited with status {}", rank, WEXITSTATUS(status))
                                             : fmt::format("rank {} was killed by signal {}", rank, WTERMSIG(status)));
        if (!deadline) deadline = std::chrono::steady_clock::now() + job.timeout + std::chrono::seconds(5);
      }
      continue;
    }
    if (deadline && std::chrono::steady_clock::now() > *deadline) {
      for (std::size_t r = 0; r < ranks.size(); ++r)
        if (ranks[r] != 0) {
          ::kill(ranks[r], SIGKILL);
          failures.push_back(fmt::format("rank {} did not stop within the collective timeout: killed", r));
        }
      for (pid_t p : ranks)
        if (p != 0) ::waitpid(p, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return failures;
}

std::vector<Profile> load_the_ranks(const LessonOptions& opt, const Job& job, const std::string& way) {
  std::vector<Profile> ranks;
  for (int r = 0; r < job.ranks; ++r) ranks.push_back(load_chrome_trace(opt.out / way / fmt::format("rank{}.json", r)));
  return ranks;
}

// What the findings read of a way: each rank's steps and its all-reduce calls per step.
findings12::WayOnRanks steps_of(const std::string& way, const std::vector<Profile>& ranks) {
  findings12::WayOnRanks result;
  result.way = way;
  for (const Profile& profile : ranks) {
    result.ranks.push_back(findings12::RankSteps{step_communication(profile), {}});
    for (auto step : profile.find_prefix("ProfilerStep#"))
      result.ranks.back().collective_calls.push_back(profile.count_under(step, "c10d::allreduce_"));
  }
  return result;
}

// One line per rank: the medians over its recorded steps (`trace --ranks` computes the same).
void print_way(const std::string& way, const MultiRankAnalysis& analysis, const findings12::WayOnRanks& steps) {
  for (std::size_t r = 0; r < analysis.ranks.size(); ++r) {
    const RankSummary& s = analysis.ranks[r];
    const auto& calls = steps.ranks[r].collective_calls;
    fmt::print("{:<36} {:>4} {:>9.2f} {:>9.2f} {:>11.2f} {:>8.0f}% {:>12.2f} {:>17}\n", r == 0 ? describe(way) : "", r,
               double(s.step_ns) / 1e6, double(s.communication_ns) / 1e6, double(s.exposed_ns) / 1e6,
               100 * s.overlap_fraction, double(s.waited_ns) / 1e6, calls.empty() ? 0 : calls.front());
  }
}

// One trace with a process per rank, for Perfetto, each rank moved onto the others' clock as
// analyze_ranks aligns them (by the first all-reduce's end).
std::filesystem::path write_all_ranks_trace(const LessonOptions& opt, const Job& job, const std::string& way) {
  const std::vector<Profile> ranks = load_the_ranks(opt, job, way);
  const std::vector<std::int64_t> shift = analyze_ranks(ranks).shift_ns;
  nlohmann::json merged = {{"traceEvents", nlohmann::json::array()}};
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    std::vector<Event> events(ranks[r].events().begin(), ranks[r].events().end());
    for (Event& e : events) e.start_ns += shift[r], e.end_ns += shift[r];
    TraceOptions options;
    options.pid = long(r) + 1;
    options.process_name = fmt::format("rank {}", r);
    nlohmann::json trace = nlohmann::json::parse(to_chrome_trace(Profile(std::move(events)), options));
    for (auto& e : trace["traceEvents"]) merged["traceEvents"].push_back(std::move(e));
  }
  const auto path = opt.out / (way + "_all_ranks.json");
  write_file_atomically(path, merged.dump());
  return path;
}

// The statistics table, trace and timeline of rank 0's overlapped steps, and a trace per way with
// every rank in it.
void write_the_reports(const LessonOptions& opt, const Job& job) {
  const std::vector<Profile> ranks = load_the_ranks(opt, job, "overlapped");
  report_profile(ranks.front(), false, opt.out, "overlapped_rank0", "Lesson 12 · rank 0, buckets from hooks", 15);
  const auto figure = opt.out / "overlapped_ranks.svg";
  write_file_atomically(figure, ranks_timeline_svg(ranks, analyze_ranks(ranks),
                                                   {"Lesson 12 · every rank, buckets from hooks: compute and "
                                                    "communication on one clock",
                                                    1200, 18}));
  fmt::print("written: {} (every rank's compute and communication, overlap shaded)\n", figure.string());
  for (const char* way : kWays)
    fmt::print("written: {} (every rank, one process each)\n", write_all_ranks_trace(opt, job, way).string());
}

int launch(const LessonOptions& opt, const Job& job, char** argv) {
  print_lesson_header("Lesson 12 · Data-parallel training on c10d, rank by rank");
  if (job.ranks > int(std::thread::hardware_concurrency()))
    fmt::print("warning: {} ranks on {} cores: ranks take turns on a core, and their waits grow\n", job.ranks,
               std::thread::hardware_concurrency());
  const int port = free_local_port();
  fmt::print(
      "\n{} ranks on this machine (their rendezvous store at 127.0.0.1:{}, Gloo connects on ports of its "
      "own), each training the GeGLU MLP dim {}, hidden {} on {} of the batch's {} rows with one intra-op thread; "
      "{} warm-up and {} recorded steps per way; buckets of up to {} KiB\n",
      job.ranks, port, job.dim, job.hidden, opt.size / job.ranks, opt.size, opt.warmup, opt.steps,
      job.bucket_bytes / 1024);
  // The ranks train and record; nothing is printed meanwhile unless a rank fails.
  const auto failures = wait_for_ranks(start_ranks(job, port, argv), job);
  if (!failures.empty()) {
    std::string line;
    for (const auto& f : failures) line += (line.empty() ? "" : "; ") + f;
    fmt::print(stderr, "lesson12: the job stopped: {}\n", line);
    return 1;
  }
  fmt::print("every rank ended each way with the weights of one process training on the whole batch\n");
  // Per way and rank: medians over the recorded steps.
  fmt::print("\n{:<36} {:>4} {:>9} {:>9} {:>11} {:>9} {:>12} {:>17}\n", "gradients averaged", "rank", "step ms",
             "comm ms", "exposed ms", "overlap", "waited ms, Σ", "allreduce_ step 1");
  std::vector<findings12::WayOnRanks> ways;
  for (const char* way : kWays) {
    const std::vector<Profile> ranks = load_the_ranks(opt, job, way);
    ways.push_back(steps_of(way, ranks));
    print_way(way, analyze_ranks(ranks), ways.back());
  }
  narrate(
      "comm ms is the time at least one all-reduce was in flight: the gloo:all_reduce events, each from the moment "
      "a Gloo worker thread starts it (not the call: time queued for a worker is in no column) until this rank has "
      "the sum, waiting for the other ranks included. exposed ms is the part of it in which this rank ran no op "
      "outside the collective calls; overlap is the rest, as a share of comm over all steps. step, comm and "
      "exposed are medians per step taken one by one: they need not add up. waited ms, Σ adds up, over the "
      "recorded all-reduces, how long this rank called each one before the last rank did, on clocks aligned by "
      "the first all-reduce's end (each trace counts from its own first event; the alignment is good to a "
      "message's latency). `./workbook trace --ranks " +
      (opt.out / "overlapped").string() + "` computes the same from the traces.");
  // What the profiles show, decided by lesson 12's findings (each tested NOT shown too).
  claim(findings12::collectives_per_step(ways[0], 3, "each_gradient"));
  const Finding one_call = findings12::collectives_per_step(ways[1], 1, "flat_bucket");
  const Finding overlap = findings12::overlap_only_from_hooks({ways[0], ways[1]}, ways[2]);
  claim(one_call);
  claim(overlap);
  answer("one_call_per_flat_bucket", one_call);
  answer("overlap_only_from_hooks", overlap);
  write_the_reports(opt, job);
  return 0;
}

// A whole number in [0, max] (a rank, a step); anything else is a usage error naming the flag.
int count_flag(const std::string& program, const std::string& flag, const std::string& text, int max) {
  const bool digits = !text.empty() && text.size() <= 6 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoi(text) > max)
    usage_error(program, fmt::format("{} takes a whole number from 0 to {} (got '{}')", flag, max, text));
  return std::stoi(text);
}

}  // namespace

int main(int argc, char** argv) {
  // Default --size: rows in the whole batch, split over the ranks
  LessonDefaults defaults("lesson12", "12_data_parallel", "Lesson 12: data-parallel training on c10d, rank by rank",
                          256);
  defaults.cpu_only_reason = "its ranks talk over Gloo on the CPU (NCCL would need a GPU per rank)";
  defaults.float32_only_reason = "its model and gradients are float32";
  defaults.unused_flags = {{"--threads", "each rank runs one intra-op thread (set by the lesson)"}};
  std::string dim_text = "256", hidden_text = "1024", ranks_text = "2", bucket_text = "1024", timeout_text = "30",
              fail_rank_text, fail_step_text = "1";
  defaults.extra = {
      {"--ranks", "processes to start on this machine (default 2)", &ranks_text},
      {"--dim", "model width", &dim_text},
      {"--hidden", "hidden width", &hidden_text},
      {"--bucket-kb", "largest bucket of gradients, KiB (DDP's bucket_cap_mb)", &bucket_text},
      {"--timeout", "seconds a rank waits at a collective before giving up", &timeout_text},
      {"--fail-rank", "this rank exits as a crashed process would, in the first way (each_gradient)", &fail_rank_text},
      {"--fail-step", "the step of that way at which it exits: from 0, warm-up included (default 1)", &fail_step_text}};
  const LessonOptions opt = parse_lesson_flags(argc, argv, defaults);
  Job job;
  job.dim = size_flag(defaults.program, "--dim", dim_text, 8192);
  job.hidden = size_flag(defaults.program, "--hidden", hidden_text, 32768);
  job.ranks = int(size_flag(defaults.program, "--ranks", ranks_text, 64));
  job.bucket_bytes = size_flag(defaults.program, "--bucket-kb", bucket_text, 1 << 20) * 1024;
  job.timeout = std::chrono::seconds(size_flag(defaults.program, "--timeout", timeout_text, 3600));
  if (!fail_rank_text.empty()) {
    job.fail_rank = count_flag(defaults.program, "--fail-rank", fail_rank_text, 63);
    job.fail_step = count_flag(defaults.program, "--fail-step", fail_step_text, 2 * kMaxRecordedSteps);
  }
  const auto env = rank_env_from_environment();
  const int ranks = env ? env->world_size : job.ranks;
  if (opt.size % ranks != 0)
    usage_error(defaults.program, fmt::format("--size {} does not split evenly over {} ranks", opt.size, ranks));
  if (job.fail_rank >= ranks)
    usage_error(defaults.program, fmt::format("--fail-rank {} is not a rank of {}", job.fail_rank, ranks));
  if (job.fail_rank >= 0 && job.fail_step >= opt.warmup + opt.steps)
    usage_error(defaults.program,
                fmt::format("--fail-step {} never comes: a way runs {} steps (from 0, warm-up included)", job.fail_step,
                            opt.warmup + opt.steps));
  // float32: each rank holds the model, its gradients and the whole batch.
  const double d = double(job.dim), h = double(job.hidden), rows = double(opt.size);
  require_memory(defaults.program,
                 fmt::format("--size {} --dim {} --hidden {} --ranks {}", opt.size, job.dim, job.hidden, ranks),
                 4 * double(ranks) * (9 * d * h + 4 * rows * h + 4 * rows * d));
  if (env) {
    const std::string program = fmt::format("lesson12 (rank {})", env->rank);
    return run_reporting_errors(program, [&] { return run_rank(opt, job, *env); });
  }
  return run_reporting_errors(defaults.program, [&] { return launch(opt, job, argv); });
}
