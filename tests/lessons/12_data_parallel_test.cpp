// Checks of exercise 12: two ranks (this process and a second copy of it) train the GeGLU MLP with your
// OverlappedAllreduce; the weights must equal one process training on the whole batch, and the
// profile of rank 0 must show one all-reduce per bucket per step, started while backward still runs.
#include "workbook_doctest.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <thread>

#include "12_data_parallel.h"
#include "workbook/profiler/communication.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"
#include "workbook/support/geglu.h"  // zero_grad

using testing::all_close;

namespace {

constexpr std::int64_t kDim = 32, kHidden = 64, kOut = 16, kRows = 16;
constexpr int kSteps = 2;
constexpr double kLearningRate = 0.5;
// How long rank 1 lags before each backward: rank 0's first bucket cannot finish its all-reduce
// before rank 1 joins it, so an overlapping rank 0 computes the rest of backward meanwhile.
constexpr auto kRankOneLag = std::chrono::milliseconds(30);

struct Batch {
  torch::Tensor x, target;
};

// Two layers with biases, parameters of four sizes: fc1.weight [64, 32], fc1.bias [64],
// fc2.weight [16, 64], fc2.bias [16]. Backward produces fc2's gradients first, fc1's weight last.
struct TwoLayersImpl : torch::nn::Module {
  TwoLayersImpl()
      : fc1(register_module("fc1", torch::nn::Linear(kDim, kHidden))),
        fc2(register_module("fc2", torch::nn::Linear(kHidden, kOut))) {}
  torch::Tensor forward(const torch::Tensor& x) { return fc2->forward(torch::relu(fc1->forward(x))); }
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(TwoLayers);

// Parameters registered against their use: backward produces `second`'s gradients first, while
// reverse registration order lists `first`'s first.
struct AgainstUseImpl : torch::nn::Module {
  AgainstUseImpl()
      : second(register_module("second", torch::nn::Linear(kHidden, kOut))),
        first(register_module("first", torch::nn::Linear(kDim, kHidden))) {}
  torch::Tensor forward(const torch::Tensor& x) { return second->forward(torch::relu(first->forward(x))); }
  torch::nn::Linear second, first;
};
TORCH_MODULE(AgainstUse);

TwoLayers fresh_model() {
  torch::manual_seed(1);
  return TwoLayers();
}

// The batch both ranks split. With `rank0_fits`, rank 0's targets are the fresh model's own
// outputs: its first step's loss and every gradient it makes are exactly zero.
Batch whole_batch(bool rank0_fits = false) {
  torch::manual_seed(12);
  Batch b{torch::randn({kRows, kDim}), {}};
  b.target = torch::randn({kRows, kOut});
  if (rank0_fits) {
    torch::NoGradGuard no_grad;
    // The shard's own rows through the model, as rank 0 computes them (same shape: same bits).
    workbook::shard_rows(b.target, 0, 2).copy_(fresh_model()->forward(workbook::shard_rows(b.x, 0, 2)));
  }
  return b;
}

// What one process training on the whole batch ends with.
std::vector<torch::Tensor> single_process_weights(bool rank0_fits = false) {
  TwoLayers model = fresh_model();
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(kLearningRate));
  const Batch b = whole_batch(rank0_fits);
  for (int step = 0; step < kSteps; ++step) {
    workbook::zero_grad(*model, /*set_to_none=*/true);
    torch::mse_loss(model->forward(b.x), b.target).backward();
    optimizer.step();
  }
  std::vector<torch::Tensor> weights;
  for (const auto& p : model->parameters()) weights.push_back(p.detach().clone());
  return weights;
}

// One rank's run: kSteps steps on its shard with the learner's OverlappedAllreduce, each step a
// ProfilerStep when `session` is given. Returns the final weights and the bucket count.
struct RankResult {
  std::vector<torch::Tensor> weights;
  std::size_t buckets = 0;
};

RankResult train_on_shard(workbook::Collectives& group, std::int64_t bucket_bytes, workbook::Session* session,
                          bool rank0_fits = false) {
  TwoLayers model = fresh_model();
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(kLearningRate));
  const Batch b = whole_batch(rank0_fits);
  const torch::Tensor x = workbook::shard_rows(b.x, group.rank(), group.world_size());
  const torch::Tensor target = workbook::shard_rows(b.target, group.rank(), group.world_size());
  exercises::OverlappedAllreduce sync(model->parameters(), group, bucket_bytes);
  for (int step = 0; step < kSteps; ++step) {
    workbook::zero_grad(*model, /*set_to_none=*/true);
    const torch::Tensor loss = torch::mse_loss(model->forward(x), target);
    if (group.rank() == 1) std::this_thread::sleep_for(kRankOneLag);
    {
      workbook::Region r("backward");
      loss.backward();
    }
    {
      workbook::Region r("finish");
      sync.finish();
    }
    optimizer.step();
    if (session != nullptr) session->step();
  }
  RankResult result{{}, sync.bucket_count()};
  for (const auto& p : model->parameters()) result.weights.push_back(p.detach().clone());
  return result;
}

bool same_weights(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!all_close(a[k], b[k], 1e-4, 1e-5)) return false;
  return true;
}

// Rank 0's view of a two-rank job.
struct JobResult {
  RankResult rank0;
  workbook::Profile profile;  // rank 0's steps
  int rank1_status = -1;      // 0: rank 1 trained and ended with the single process's weights
  std::string rank1_report;   // what rank 1's run of this program printed
};

// The test case rank 1 runs (see the end of this file).
constexpr const char* kRankOneCase = "rank 1 of the two-rank job the checks above start";

// Runs the job with rank 1 in a second copy of this check program, started as a launcher starts a
// rank (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) to run only the skipped test case at the end
// of this file. (Not fork(): LibTorch 2.x refuses autograd in a forked child once the parent has
// run a backward.) Its report goes to a file, shown when it fails.
JobResult two_rank_job(std::int64_t bucket_bytes, bool rank0_fits = false) {
  torch::set_num_threads(1);  // each rank one thread, as torchrun's OMP_NUM_THREADS=1
  const std::vector<torch::Tensor> expected = single_process_weights(rank0_fits);
  workbook::RankEnv env;
  env.world_size = 2;
  env.master_port = workbook::free_local_port();
  const std::string report =
      (std::filesystem::temp_directory_path() / ("workbook-rank1-" + std::to_string(::getpid()) + ".txt")).string();
  workbook::RankEnv rank1 = env;
  rank1.rank = 1;
  std::vector<std::string> settings =
      workbook::rank_environment(rank1, {"WORKBOOK_CHECK_BUCKET_BYTES=" + std::to_string(bucket_bytes),
                                         std::string("WORKBOOK_CHECK_RANK0_FITS=") + (rank0_fits ? "1" : "0")});
  std::vector<char*> environment;
  for (auto& setting : settings) environment.push_back(setting.data());
  environment.push_back(nullptr);
  std::string program = "/proc/self/exe", only = "--test-case=" + std::string(kRankOneCase), no_skip = "--no-skip";
  std::vector<char*> arguments = {program.data(), only.data(), no_skip.data(), nullptr};
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 1, report.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  pid_t child = 0;
  const int error = ::posix_spawn(&child, program.c_str(), &files, nullptr, arguments.data(), environment.data());
  posix_spawn_file_actions_destroy(&files);
  REQUIRE(error == 0);
  JobResult job;
  try {
    workbook::Collectives group(env, std::chrono::seconds(30));
    workbook::Session session(workbook::Schedule(0, 0, kSteps));
    job.rank0 = train_on_shard(group, bucket_bytes, &session, rank0_fits);
    job.profile = session.finish();
  } catch (...) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    throw;
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  job.rank1_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(report);
  job.rank1_report.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::filesystem::remove(report);
  CHECK(same_weights(job.rank0.weights, expected));
  return job;
}

// Three buckets, in reverse order: {fc2.bias, fc2.weight} (1 040 floats), {fc1.bias}, {fc1.weight}.
constexpr std::int64_t kOneWeightPerBucket = (kOut + kOut * kHidden) * 4;

std::vector<workbook::EventId> allreduces_in(const workbook::Profile& p, workbook::EventId step) {
  return p.under(step, "c10d::allreduce_");
}

}  // namespace

TEST_CASE("two ranks end with the weights of one process training on the whole batch") {
  const JobResult job = two_rank_job(kOneWeightPerBucket);
  INFO("rank 1 (exit status " << job.rank1_status << ") reported:\n" << job.rank1_report);
  CHECK(job.rank1_status == 0);
}

TEST_CASE("a rank whose gradients are all zero still all-reduces every bucket: the other ranks wait for it") {
  // Rank 0's first gradients are exactly zero (its targets are the model's outputs); the average
  // is still rank 1's half, and a rank that skips a collective leaves the others waiting.
  const JobResult job = two_rank_job(kOneWeightPerBucket, /*rank0_fits=*/true);
  INFO("rank 1 (exit status " << job.rank1_status << ") reported:\n" << job.rank1_report);
  CHECK(job.rank1_status == 0);
}

TEST_CASE("one bucket holding every gradient gives the same weights") {
  const JobResult job = two_rank_job(std::int64_t(1) << 40);
  CHECK(job.rank0.buckets == 1);
  INFO("rank 1 (exit status " << job.rank1_status << ") reported:\n" << job.rank1_report);
  CHECK(job.rank1_status == 0);
}

TEST_CASE("each step runs one all-reduce per bucket") {
  const JobResult job = two_rank_job(kOneWeightPerBucket);
  CHECK(job.rank0.buckets == 3);
  const auto steps = job.profile.find_prefix("ProfilerStep#");
  REQUIRE(steps.size() == std::size_t(kSteps));
  for (auto step : steps) {
    CAPTURE(job.profile[step].name);
    CHECK(allreduces_in(job.profile, step).size() == job.rank0.buckets);
  }
}

TEST_CASE("the first bucket's all-reduce starts before backward's last GEMM") {
  const JobResult job = two_rank_job(kOneWeightPerBucket);
  for (auto step : job.profile.find_prefix("ProfilerStep#")) {
    const auto backward = job.profile.under(step, "backward");
    const auto allreduces = allreduces_in(job.profile, step);
    REQUIRE(backward.size() == 1);
    REQUIRE_FALSE(allreduces.empty());
    const auto gemms = job.profile.under(backward.front(), "aten::mm");
    REQUIRE_FALSE(gemms.empty());
    CAPTURE(job.profile[step].name);
    // fc2's gradients come first; fc1's weight GEMM is still to run when their bucket starts.
    CHECK(job.profile[allreduces.front()].start_ns < job.profile[gemms.back()].start_ns);
  }
}

TEST_CASE("backward keeps computing while the first bucket is in flight") {
  const JobResult job = two_rank_job(kOneWeightPerBucket);
  for (auto step : job.profile.find_prefix("ProfilerStep#")) {
    const workbook::Event& s = job.profile[step];
    const auto backward = job.profile.under(step, "backward");
    const auto allreduces = allreduces_in(job.profile, step);
    REQUIRE(backward.size() == 1);
    REQUIRE_FALSE(allreduces.empty());
    // Rank 1 joins each step ~30 ms late, so no transfer of this step can end before it does: the
    // first to end bounds the time in which bucket 0 was surely in flight.
    std::int64_t first_end = s.end_ns;
    for (std::size_t id = 0; id < job.profile.size(); ++id) {
      const workbook::Event& t = job.profile[id];
      if (workbook::is_communication(t) && t.start_ns >= s.start_ns && t.start_ns <= s.end_ns)
        first_end = std::min(first_end, t.end_ns);
    }
    // An op of backward that starts after bucket 0's call returned and before that end shows the
    // hook went back to backward instead of waiting.
    const std::int64_t returned = job.profile[allreduces.front()].end_ns;
    std::size_t ops_in_flight = 0;
    for (auto op : job.profile.descendants(backward.front())) {
      const workbook::Event& e = job.profile[op];
      ops_in_flight += e.category == workbook::Category::cpu_op && e.start_ns > returned && e.start_ns < first_end &&
                       !workbook::is_collective_call(e.name);
    }
    CAPTURE(s.name);
    CAPTURE((first_end - returned) / 1000);  // µs between the call's return and the first transfer's end
    CHECK(ops_in_flight > 0);
  }
}

// A job of one rank in this process: what the contract asks besides averaging (the bucket order,
// the errors, the hooks, the gradients' type) shows without a second rank.
struct OneRank {
  OneRank() {
    torch::set_num_threads(1);
    env.master_port = workbook::free_local_port();
    group = std::make_unique<workbook::Collectives>(env, std::chrono::seconds(10));
  }
  workbook::RankEnv env;
  std::unique_ptr<workbook::Collectives> group;
};

TEST_CASE("the constructor rejects no parameters, a bucket limit below one byte and a parameter without a gradient") {
  OneRank one;
  TwoLayers model = fresh_model();
  CHECK_THROWS_AS(exercises::OverlappedAllreduce({}, *one.group, kOneWeightPerBucket), std::invalid_argument);
  CHECK_THROWS_AS(exercises::OverlappedAllreduce(model->parameters(), *one.group, 0), std::invalid_argument);
  CHECK_THROWS_AS(exercises::OverlappedAllreduce(model->parameters(), *one.group, -1), std::invalid_argument);
  // One byte is a limit: every parameter in a bucket of its own.
  CHECK(exercises::OverlappedAllreduce(model->parameters(), *one.group, 1).bucket_count() == 4);
  std::vector<torch::Tensor> parameters = model->parameters();
  parameters.push_back(torch::zeros({3}));  // requires no gradient: backward never produces one
  CHECK_THROWS_AS(exercises::OverlappedAllreduce(parameters, *one.group, kOneWeightPerBucket), std::invalid_argument);
  // Refused before anything was set up: no hook of the refused object is left on the model's
  // parameters (it would call into an object that no longer exists).
  const Batch b = whole_batch();
  workbook::Session session;
  torch::mse_loss(model->forward(b.x), b.target).backward();
  CHECK(session.finish().find("c10d::allreduce_").empty());
}

TEST_CASE("finish() without a new backward is refused") {
  OneRank one;
  TwoLayers model = fresh_model();
  exercises::OverlappedAllreduce sync(model->parameters(), *one.group, kOneWeightPerBucket);
  CHECK_THROWS_AS(sync.finish(), std::logic_error);  // before any backward
  const Batch b = whole_batch();
  torch::mse_loss(model->forward(b.x), b.target).backward();
  sync.finish();
  CHECK_THROWS_AS(sync.finish(), std::logic_error);  // the same step twice
}

TEST_CASE("finish() after a backward that reached only some parameters is refused") {
  // Four buckets (one byte each: a parameter apiece), a backward through fc2 alone: buckets 0 and 1
  // (fc2's bias and weight) start, fc1's never do.
  OneRank one;
  TwoLayers model = fresh_model();
  exercises::OverlappedAllreduce sync(model->parameters(), *one.group, 1);
  const torch::Tensor h = torch::randn({kRows, kHidden}), target = torch::randn({kRows, kOut});
  torch::mse_loss(model->fc2->forward(h), target).backward();
  CHECK_THROWS_AS(sync.finish(), std::logic_error);
}

TEST_CASE("finish() after a partial backward is refused when the gradients were zeroed in place (trial 34)") {
  // A whole step first, then the gradients zeroed in place, as optimizer.zero_grad(false) does:
  // every grad() stays defined, yet the next backward reaches fc2 alone, and fc1's buckets never start.
  OneRank one;
  TwoLayers model = fresh_model();
  exercises::OverlappedAllreduce sync(model->parameters(), *one.group, 1);
  const Batch b = whole_batch();
  torch::mse_loss(model->forward(b.x), b.target).backward();
  REQUIRE_NOTHROW(sync.finish());
  for (auto& p : model->parameters()) p.mutable_grad().zero_();
  const torch::Tensor h = torch::randn({kRows, kHidden}), target = torch::randn({kRows, kOut});
  torch::mse_loss(model->fc2->forward(h), target).backward();
  CHECK_THROWS_AS(sync.finish(), std::logic_error);
}

TEST_CASE("finish() after a backward through fc1 alone is refused: its last buckets complete, the first never") {
  // The same four buckets, a loss on the hidden layer: buckets 2 and 3 (fc1's) complete, 0 and 1
  // never do (trial 30: "the last bucket complete means all are" passed the check above).
  OneRank one;
  TwoLayers model = fresh_model();
  exercises::OverlappedAllreduce sync(model->parameters(), *one.group, 1);
  const torch::Tensor x = torch::randn({kRows, kDim}), hidden_target = torch::randn({kRows, kHidden});
  torch::mse_loss(model->fc1->forward(x), hidden_target).backward();
  CHECK_THROWS_AS(sync.finish(), std::logic_error);
}

TEST_CASE("a parameter with no elements is a gradient too: its bucket starts, and finish() accepts the step") {
  // An empty gradient still arrives (trial 31: skipping numel() == 0 left its bucket waiting).
  OneRank one;
  const torch::Tensor weight = torch::randn({3}, torch::requires_grad()),
                      nothing = torch::zeros({0}, torch::requires_grad());
  exercises::OverlappedAllreduce sync({weight, nothing}, *one.group, 1);
  const torch::Tensor x = torch::randn({3});
  ((weight * x).sum() + nothing.sum()).backward();
  REQUIRE_NOTHROW(sync.finish());
  CHECK(torch::allclose(weight.grad(), x));  // one rank: the gradient as backward made it
  CHECK(nothing.grad().numel() == 0);
}

TEST_CASE("a gradient that arrives non-contiguous is averaged too") {
  // p is used transposed, so backward hands its hook the gradient y^T: strides (1, 3), which
  // view(-1) cannot flatten.
  OneRank one;
  const torch::Tensor p = torch::randn({3, 4}).requires_grad_(true), y = torch::randn({4, 3});
  exercises::OverlappedAllreduce sync({p}, *one.group, kOneWeightPerBucket);
  (p.t() * y).sum().backward();
  sync.finish();
  CHECK(torch::equal(p.grad(), y.t()));
}

TEST_CASE("a parameter stored transposed gets its gradient in its own layout, averaged too") {
  // Autograd gives a leaf's grad() the leaf's strides, here (1, 3): view(-1) cannot flatten it.
  OneRank one;
  const torch::Tensor p = torch::randn({4, 3}).t().detach().requires_grad_(true), y = torch::randn({3, 4});
  exercises::OverlappedAllreduce sync({p}, *one.group, kOneWeightPerBucket);
  (p * y).sum().backward();
  REQUIRE_NOTHROW(sync.finish());
  CHECK(torch::equal(p.grad(), y));
}

TEST_CASE("buckets start in bucket order, even when backward completes a later one first") {
  // Parameters listed against their use: backward produces `second`'s gradients first, but bucket 0
  // (reverse order) is first.bias. Until it is complete, nothing may start.
  OneRank one;
  torch::manual_seed(1);
  AgainstUse model;
  exercises::OverlappedAllreduce sync(model->parameters(), *one.group, 1);
  REQUIRE(sync.bucket_count() == 4);
  const Batch b = whole_batch();
  workbook::Session session;
  const torch::Tensor loss = torch::mse_loss(model->forward(b.x), b.target);
  {
    workbook::Region r("backward");
    loss.backward();
  }
  sync.finish();
  const workbook::Profile p = session.finish();
  REQUIRE(p.find("backward").size() == 1);
  const auto gemms = p.under(p.find("backward").front(), "aten::mm");
  REQUIRE_FALSE(gemms.empty());
  std::size_t started_early = 0;
  for (auto id : p.find("c10d::allreduce_")) started_early += p[id].start_ns < p[gemms.back()].start_ns;
  CHECK(p.find("c10d::allreduce_").size() == 4);
  CHECK(started_early == 0);
}

// An all-reduce over `world_size` ranks that all hold this rank's gradients, whose sum is in only
// once it is waited for, as when a peer is slow with that bucket: Gloo runs two all-reduces at
// once, so a later bucket can finish first and an earlier one still be in flight.
struct SumWhenWaited : c10d::Work {
  SumWhenWaited(torch::Tensor tensor, int world_size) : tensor(std::move(tensor)), world_size(world_size) {}
  bool isCompleted() override { return summed; }
  bool wait(std::chrono::milliseconds) override {
    if (!summed) tensor.mul_(world_size);
    summed = true;
    return true;
  }
  torch::Tensor tensor;
  int world_size;
  bool summed = false;
};

namespace {

// The hooks a tensor still holds: remove_hook empties a hook's place in LibTorch's list
// (AutogradMeta::cpp_hooks_list_, in 1.13 and 2.6 alike), which never shortens.
std::size_t live_hooks(const torch::Tensor& t) {
  const auto* meta = torch::autograd::impl::get_autograd_meta(t);
  if (meta == nullptr || !meta->cpp_hooks_list_) return 0;
  std::size_t live = 0;
  for (const auto& hook : *meta->cpp_hooks_list_) live += bool(hook);
  return live;
}

// Rank 0 of `world_size` whose gradients are equal, each all-reduce summed when it is waited for:
// averaged, the gradients come back as backward made them. `seen`, when given, sees each bucket's
// buffer as its all-reduce starts.
workbook::Collectives same_gradients_on_ranks(int world_size,
                                              std::function<void(const torch::Tensor&)> seen = nullptr) {
  return workbook::Collectives(0, world_size,
                               [seen, world_size](const torch::Tensor& flat) -> c10::intrusive_ptr<c10d::Work> {
                                 if (seen) seen(flat);
                                 return c10::make_intrusive<SumWhenWaited>(flat, world_size);
                               });
}

// The element counts of reverse_order_buckets' buckets, in bucket order: what each all-reduce sends.
std::vector<std::int64_t> planned_bucket_sizes(const std::vector<torch::Tensor>& parameters,
                                               std::int64_t bucket_bytes) {
  std::vector<std::int64_t> plan;
  for (const auto& members : workbook::reverse_order_buckets(parameters, bucket_bytes)) {
    std::int64_t numel = 0;
    for (std::size_t member : members) numel += parameters[member].numel();
    plan.push_back(numel);
  }
  return plan;
}

}  // namespace

// An all-reduce over `world_size` ranks that all hold this rank's gradients, reading the bucket
// when it starts, as Gloo does: what the bucket held then is what comes back, times world_size.
struct SumOfWhatWasThere : c10d::Work {
  SumOfWhatWasThere(torch::Tensor tensor, int world_size)
      : tensor(std::move(tensor)), sum(this->tensor.clone().mul_(world_size)) {}
  bool isCompleted() override { return done; }
  bool wait(std::chrono::milliseconds) override {
    if (!done) tensor.copy_(sum);
    done = true;
    return true;
  }
  torch::Tensor tensor, sum;
  bool done = false;
};

TEST_CASE(
    "one bucket whose gradients arrive against its order: each lands in its own slice, the bucket starts complete") {
  // One bucket holds all four parameters, listed first.bias, first.weight, second.bias,
  // second.weight; backward delivers second's first. Each gradient goes to its member's slice,
  // and the all-reduce (which reads the bucket when it starts) starts only once all four are in.
  workbook::Collectives group(0, 2, [](const torch::Tensor& flat) -> c10::intrusive_ptr<c10d::Work> {
    return c10::make_intrusive<SumOfWhatWasThere>(flat, 2);
  });
  torch::manual_seed(5);
  AgainstUse model;
  torch::manual_seed(5);
  AgainstUse twin;
  exercises::OverlappedAllreduce sync(model->parameters(), group, std::int64_t(1) << 30);
  REQUIRE(sync.bucket_count() == 1);
  const Batch b = whole_batch();
  torch::mse_loss(model->forward(b.x), b.target).backward();
  sync.finish();
  torch::mse_loss(twin->forward(b.x), b.target).backward();
  const auto mine = model->parameters(), theirs = twin->parameters();
  for (std::size_t k = 0; k < mine.size(); ++k) {
    CAPTURE(k);
    CHECK(all_close(mine[k].grad(), theirs[k].grad()));
  }
}

TEST_CASE(
    "a gradient autograd hands to two consumers is only read: tied weights a + b, a bias shaped like the output") {
  // z = x (a + b) + c: AddBackward hands one tensor to a's hook and to b's, and one to c's hook and
  // to the GEMM that computes a's and b's. Dividing it in place, zeroing it, or all-reducing it
  // where it lies changes what the other consumer reads. Rank 0 of two that hold the same
  // gradients: averaged, they come back as backward made them. Each bucket's buffer is float32,
  // as the parameters are (a float64 buffer sends twice the bytes).
  std::vector<std::string> buffer_dtypes;
  workbook::Collectives group = same_gradients_on_ranks(
      2, [&](const torch::Tensor& flat) { buffer_dtypes.emplace_back(c10::toString(flat.scalar_type())); });
  torch::manual_seed(7);
  const torch::Tensor x = torch::randn({4, 3}), y = torch::randn({4, 5});
  const std::vector<torch::Tensor> start{torch::randn({3, 5}), torch::randn({3, 5}), torch::randn({4, 5})};
  std::vector<torch::Tensor> mine, theirs;
  for (const auto& t : start) {
    mine.push_back(t.clone().requires_grad_(true));
    theirs.push_back(t.clone().requires_grad_(true));
  }
  const auto loss = [&](const std::vector<torch::Tensor>& w) { return ((torch::mm(x, w[0] + w[1]) + w[2]) * y).sum(); };
  exercises::OverlappedAllreduce sync(mine, group, 1);  // one parameter per bucket
  REQUIRE(sync.bucket_count() == 3);
  loss(mine).backward();
  sync.finish();
  loss(theirs).backward();
  for (std::size_t k = 0; k < mine.size(); ++k) {
    CAPTURE(k);
    REQUIRE(mine[k].grad().defined());
    CHECK(all_close(mine[k].grad(), theirs[k].grad()));
  }
  CHECK(buffer_dtypes == std::vector<std::string>(3, "Float"));
}

TEST_CASE("a gradient that arrives expanded, one value behind every element (stride 0), is averaged too") {
  // sum()'s backward hands p's hook the loss's gradient expanded to p's shape: strides (0, 0).
  // Written to in place, it refuses (one memory location behind many elements).
  workbook::Collectives group = same_gradients_on_ranks(2);
  const torch::Tensor p = torch::randn({3, 4}).requires_grad_(true), x = torch::randn({3, 4});
  exercises::OverlappedAllreduce sync({p}, group, 1);
  REQUIRE_NOTHROW((x + p).sum().backward());
  REQUIRE_NOTHROW(sync.finish());
  CHECK(torch::equal(p.grad(), torch::ones({3, 4})));
}

TEST_CASE("finish() waits for every bucket: the last all-reduce done is not all of them done") {
  // Rank 0 of two whose gradients are equal: averaged, they come back as backward made them. Each
  // bucket's sum is in only when finish() waits for it (the last one is in at once).
  int started = 0;
  const int expected_buckets = 3;
  workbook::Collectives group(0, 2, [&](const torch::Tensor& flat) -> c10::intrusive_ptr<c10d::Work> {
    auto work = c10::make_intrusive<SumWhenWaited>(flat, 2);
    if (++started % expected_buckets == 0) work->wait(std::chrono::milliseconds(0));  // a step's last: done first
    return work;
  });
  TwoLayers model = fresh_model(), twin = fresh_model();
  exercises::OverlappedAllreduce sync(model->parameters(), group, kOneWeightPerBucket);
  REQUIRE(sync.bucket_count() == std::size_t(expected_buckets));
  const Batch b = whole_batch();
  for (int step = 0; step < 2; ++step) {
    workbook::zero_grad(*model, /*set_to_none=*/true);
    workbook::zero_grad(*twin, /*set_to_none=*/true);
    torch::mse_loss(model->forward(b.x), b.target).backward();
    sync.finish();
    torch::mse_loss(twin->forward(b.x), b.target).backward();
    const auto mine = model->parameters(), theirs = twin->parameters();
    for (std::size_t k = 0; k < mine.size(); ++k) {
      CAPTURE(step);
      CAPTURE(k);
      CHECK(all_close(mine[k].grad(), theirs[k].grad()));
    }
  }
}

// A collective that ended with an error, as one does when a peer dies: complete, and its wait()
// raises the error (c10d's Work keeps it for wait()).
struct FailedWork : c10d::Work {
  bool isCompleted() override { return true; }
  bool wait(std::chrono::milliseconds) override { throw std::runtime_error("a peer of this all-reduce died"); }
};

TEST_CASE("finish() waits for a complete bucket too: an all-reduce that failed is raised, never kept half summed") {
  // With one rank as with two: the average over one rank is the gradient itself, but the all-reduce
  // still ran and its Work still holds its outcome.
  for (const int world_size : {2, 1}) {
    CAPTURE(world_size);
    workbook::Collectives group(0, world_size, [](const torch::Tensor&) -> c10::intrusive_ptr<c10d::Work> {
      return c10::make_intrusive<FailedWork>();
    });
    TwoLayers model = fresh_model();
    exercises::OverlappedAllreduce sync(model->parameters(), group, kOneWeightPerBucket);
    const Batch b = whole_batch();
    torch::mse_loss(model->forward(b.x), b.target).backward();
    CHECK_THROWS_WITH(sync.finish(), doctest::Contains("died"));
  }
}

TEST_CASE("every step all-reduces the same plan: reverse_order_buckets' buckets, in bucket order, step after step") {
  // Parameters listed against their use (backward completes a later bucket first). The plan is
  // fixed: DDP's rebuild of the buckets in arrival order after the first step is not this
  // contract's, and every rank must issue the same all-reduces in the same order on every step.
  std::vector<std::int64_t> sizes;
  workbook::Collectives group =
      same_gradients_on_ranks(2, [&](const torch::Tensor& flat) { sizes.push_back(flat.numel()); });
  torch::manual_seed(1);
  AgainstUse model;
  const std::int64_t bucket_bytes = 1;
  exercises::OverlappedAllreduce sync(model->parameters(), group, bucket_bytes);
  const std::vector<std::int64_t> plan = planned_bucket_sizes(model->parameters(), bucket_bytes);
  const Batch b = whole_batch();
  for (int step = 0; step < 3; ++step) {
    CAPTURE(step);
    sizes.clear();
    workbook::zero_grad(*model, /*set_to_none=*/true);
    torch::mse_loss(model->forward(b.x), b.target).backward();
    sync.finish();
    CHECK(sizes == plan);
  }
}

TEST_CASE("three ranks of float64 parameters: buckets of 8-byte elements, the sum divided by 3 in float64") {
  // TwoLayers in float64, reversed: fc2.bias 128 bytes, fc2.weight 8192, fc1.bias 512, fc1.weight
  // 16384. A limit of 8320 bytes packs fc2's two, then fc1.bias alone, then fc1.weight: three
  // buckets (counted in 4-byte elements, fc1.bias would join fc2's). With three ranks the mean is
  // a division by 3, not exact as a float32 reciprocal: within a float64 rounding of the truth.
  std::vector<std::int64_t> sizes;
  workbook::Collectives group =
      same_gradients_on_ranks(3, [&](const torch::Tensor& flat) { sizes.push_back(flat.numel()); });
  TwoLayers model = fresh_model(), twin = fresh_model();
  model->to(torch::kDouble);
  twin->to(torch::kDouble);
  const std::int64_t bucket_bytes = 8320;
  exercises::OverlappedAllreduce sync(model->parameters(), group, bucket_bytes);
  const std::vector<std::int64_t> plan = planned_bucket_sizes(model->parameters(), bucket_bytes);
  REQUIRE(plan == std::vector<std::int64_t>{16 + 1024, 64, 2048});
  CHECK(sync.bucket_count() == plan.size());
  const Batch b = whole_batch();
  const torch::Tensor x = b.x.to(torch::kDouble), target = b.target.to(torch::kDouble);
  torch::mse_loss(model->forward(x), target).backward();
  sync.finish();
  torch::mse_loss(twin->forward(x), target).backward();
  CHECK(sizes == plan);
  const auto mine = model->parameters(), theirs = twin->parameters();
  for (std::size_t k = 0; k < mine.size(); ++k) {
    CAPTURE(k);
    CHECK(mine[k].grad().element_size() == 8);  // float64, as the parameters
    CHECK(all_close(mine[k].grad(), theirs[k].grad(), 1e-12, 0));
  }
}

TEST_CASE("two objects alive at once, over two models: each averages its own model's gradients") {
  // Two models trained side by side (a generator and a discriminator, say), each with its own
  // object: the hooks of each reach their own object's buckets, whichever was made last.
  workbook::Collectives group = same_gradients_on_ranks(2);
  TwoLayers first = fresh_model(), first_twin = fresh_model();
  torch::manual_seed(2);
  TwoLayers second;
  torch::manual_seed(2);
  TwoLayers second_twin;
  exercises::OverlappedAllreduce first_sync(first->parameters(), group, kOneWeightPerBucket);
  exercises::OverlappedAllreduce second_sync(second->parameters(), group, kOneWeightPerBucket);
  const Batch b = whole_batch();
  torch::mse_loss(first->forward(b.x), b.target).backward();
  REQUIRE_NOTHROW(first_sync.finish());
  torch::mse_loss(second->forward(b.x), b.target).backward();
  REQUIRE_NOTHROW(second_sync.finish());
  torch::mse_loss(first_twin->forward(b.x), b.target).backward();
  torch::mse_loss(second_twin->forward(b.x), b.target).backward();
  const auto check_gradients = [](TwoLayers& model, TwoLayers& twin) {
    const auto mine = model->parameters(), theirs = twin->parameters();
    for (std::size_t k = 0; k < mine.size(); ++k) {
      CAPTURE(k);
      REQUIRE(mine[k].grad().defined());
      CHECK(all_close(mine[k].grad(), theirs[k].grad()));
    }
  };
  check_gradients(first, first_twin);
  check_gradients(second, second_twin);
}

TEST_CASE("the hooks go with the object: a later backward starts no all-reduce, and other hooks stay") {
  OneRank one;
  TwoLayers model = fresh_model();
  // Hooks the parameters had already (the user's own), and an object made and destroyed before
  // ours: a hook's handle is its place in its tensor's list, which removing never shortens.
  int user_hook_calls = 0;
  for (auto& p : model->parameters()) p.register_hook([&](const torch::Tensor&) { ++user_hook_calls; });
  { exercises::OverlappedAllreduce earlier(model->parameters(), *one.group, kOneWeightPerBucket); }
  { exercises::OverlappedAllreduce sync(model->parameters(), *one.group, kOneWeightPerBucket); }
  const Batch b = whole_batch();
  workbook::Session session;
  torch::mse_loss(model->forward(b.x), b.target).backward();
  CHECK(session.finish().find("c10d::allreduce_").empty());
  CHECK(user_hook_calls == int(model->parameters().size()));
  // Removed, not merely disarmed: a hook left doing nothing still runs in every later backward,
  // one more per object a loop builds (trial 44). Only the user's hook is left on each parameter.
  for (const auto& p : model->parameters()) CHECK(live_hooks(p) == 1);
}

TEST_CASE("with one rank the gradients come back as backward made them: float64, zeroed in place") {
  // Averaging over one rank changes nothing, exactly: not the dtype (a float32 buffer rounds a
  // float64 gradient), not the next step (a gradient that aliases its bucket is added to twice when
  // it is zeroed in place instead of set to none).
  OneRank one;
  TwoLayers model = fresh_model(), twin = fresh_model();
  model->to(torch::kDouble);
  twin->to(torch::kDouble);
  exercises::OverlappedAllreduce sync(model->parameters(), *one.group, kOneWeightPerBucket);
  torch::optim::SGD step_model(model->parameters(), torch::optim::SGDOptions(kLearningRate));
  torch::optim::SGD step_twin(twin->parameters(), torch::optim::SGDOptions(kLearningRate));
  const Batch b = whole_batch();
  const torch::Tensor x = b.x.to(torch::kDouble), target = b.target.to(torch::kDouble);
  for (int step = 0; step < 3; ++step) {
    workbook::zero_grad(*model, /*set_to_none=*/false);
    workbook::zero_grad(*twin, /*set_to_none=*/false);
    torch::mse_loss(model->forward(x), target).backward();
    sync.finish();
    torch::mse_loss(twin->forward(x), target).backward();
    const auto mine = model->parameters(), theirs = twin->parameters();
    for (std::size_t k = 0; k < mine.size(); ++k) {
      CAPTURE(step);
      CAPTURE(k);
      CHECK(mine[k].grad().element_size() == 8);  // float64, as the parameter
      CHECK(torch::equal(mine[k].grad(), theirs[k].grad()));
    }
    step_model.step();
    step_twin.step();
  }
}

// Rank 1 of two_rank_job's job, run only by it (a launcher's variables, --no-skip): the same steps
// on the other shard, ending with one process's weights.
TEST_CASE(kRankOneCase* doctest::skip()) {
  const auto env = workbook::rank_env_from_environment();
  const char* bucket_bytes = std::getenv("WORKBOOK_CHECK_BUCKET_BYTES");
  const char* rank0_fits = std::getenv("WORKBOOK_CHECK_RANK0_FITS");
  REQUIRE(env);
  REQUIRE(bucket_bytes != nullptr);
  REQUIRE(rank0_fits != nullptr);
  const bool fits = std::string(rank0_fits) == "1";
  torch::set_num_threads(1);
  workbook::Collectives group(*env, std::chrono::seconds(30));
  CHECK(same_weights(train_on_shard(group, std::stoll(bucket_bytes), nullptr, fits).weights,
                     single_process_weights(fits)));
}
