// Checks of exercise 08: a real training loop (Linear layers, MSE, SGD), phase by phase.
#include "workbook_doctest.h"

#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "08_training_step.h"
#include "region_observer.h"
#include "workbook/profiler/region.h"

namespace {

std::vector<torch::Tensor> parameters_of(torch::nn::Linear& a, torch::nn::Linear& b) {
  std::vector<torch::Tensor> params = a->parameters();
  for (auto& p : b->parameters()) params.push_back(p);
  return params;
}

struct Loop {
  torch::nn::Linear first{32, 128}, second{128, 32};
  torch::optim::SGD optimizer{parameters_of(first, second), torch::optim::SGDOptions(0.01)};
  torch::Tensor x = torch::randn({64, 32}), target = torch::randn({64, 32}), prediction, loss;
  exercises::TrainingStep step() {
    return {[this] { optimizer.zero_grad(); }, [this] { prediction = second->forward(torch::relu(first->forward(x))); },
            [this] { loss = torch::mse_loss(prediction, target); }, [this] { loss.backward(); },
            [this] { optimizer.step(); }};
  }
};

double mean_region_us(const workbook::Profile& p, const std::string& name) {
  const auto ids = p.find(name);
  double sum = 0;
  for (auto id : ids) sum += double(p.total_ns(id)) / 1e3;
  return ids.empty() ? -1 : sum / double(ids.size());
}

// The phase whose regions have the largest mean total time in `p`: the answer the profile gives.
std::string most_time_by_total(const workbook::Profile& p) {
  std::string dominant;
  double most = -1;
  for (const std::string phase : {"zero_grad", "forward", "loss", "backward", "optimizer"}) {
    const double us = mean_region_us(p, phase);
    if (us > most) most = us, dominant = phase;
  }
  return dominant;
}

}  // namespace

TEST_CASE("five phase regions per recorded step, each holding its own work") {
  Loop loop;
  // Each phase counts its calls: one warm-up step runs before the three recorded ones.
  std::map<std::string, int> calls;
  const exercises::TrainingStep given = loop.step();
  auto counted = [&calls](const std::string& phase, std::function<void()> f) {
    return [&calls, phase, f = std::move(f)] {
      ++calls[phase];
      f();
    };
  };
  const exercises::TrainingStep step{counted("zero_grad", given.zero_grad), counted("forward", given.forward),
                                     counted("loss", given.loss), counted("backward", given.backward),
                                     counted("optimizer", given.optimizer)};
  const auto report = exercises::profile_training(step, 3);
  for (const std::string phase : {"zero_grad", "forward", "loss", "backward", "optimizer"}) {
    CAPTURE(phase);
    CHECK(calls[phase] == 4);  // 1 warm-up + 3 recorded
  }
  const auto& p = report.profile;
  CHECK(p.find_prefix("ProfilerStep#").size() == 3);
  for (const std::string phase : {"zero_grad", "forward", "loss", "backward", "optimizer"}) {
    CAPTURE(phase);
    CHECK(p.find(phase).size() == 3);
  }
  // In each step the phases run in TrainingStep's order.
  const std::vector<std::string> phases{"zero_grad", "forward", "loss", "backward", "optimizer"};
  for (auto step : p.find_prefix("ProfilerStep#")) {
    std::vector<std::int64_t> starts;
    for (const std::string phase : {"zero_grad", "forward", "loss", "backward", "optimizer"}) {
      const auto ids = p.under(step, phase);
      if (ids.size() == 1) starts.push_back(p[ids[0]].start_ns);
    }
    REQUIRE(starts.size() == 5);
    CHECK(std::is_sorted(starts.begin(), starts.end()));
    // One after another, not nested: each phase's region ends before the next one starts.
    for (std::size_t k = 0; k + 1 < phases.size(); ++k) {
      const auto here = p.under(step, phases[k]), next = p.under(step, phases[k + 1]);
      REQUIRE((here.size() == 1 && next.size() == 1));
      CAPTURE(phases[k]);
      CHECK(p[here[0]].end_ns <= p[next[0]].start_ns);
    }
  }
  for (auto f : p.find("forward")) CHECK(p.count_under(f, "aten::addmm") == 2);
  for (auto l : p.find("loss")) CHECK(p.count_under(l, "aten::mse_loss") == 1);
  std::size_t backward_nodes = 0;
  for (auto b : p.find("backward"))
    for (auto d : p.descendants(b)) backward_nodes += p[d].name.find("AddmmBackward") != std::string::npos;
  CHECK(backward_nodes >= 6);  // two Linear layers, three steps
  std::size_t updates = 0;
  for (auto o : p.find("optimizer")) updates += p.count_under(o, "aten::add_");
  CHECK(updates >= 12);  // four parameter tensors, three steps
}

TEST_CASE("the report is what the profile says") {
  Loop loop;
  const auto report = exercises::profile_training(loop.step(), 4);
  CHECK(report.profile.find_prefix("ProfilerStep#").size() == 4);  // the steps asked for, recorded
  REQUIRE(report.phase_us.size() == 5);
  for (const std::string phase : {"zero_grad", "forward", "loss", "backward", "optimizer"}) {
    CAPTURE(phase);
    CHECK(report.phase_us.at(phase) == doctest::Approx(mean_region_us(report.profile, phase)));
  }
  CHECK(report.dominant == most_time_by_total(report.profile));
  CHECK(report.backward_over_forward ==
        doctest::Approx(mean_region_us(report.profile, "backward") / mean_region_us(report.profile, "forward")));
  CHECK(report.backward_over_forward > 0);
}

TEST_CASE("a label that only starts with a phase's name is not that phase: forward_hook, loss_scale") {
  // The loop's own code labels part of a phase (trial 31: regions found by prefix passed): a hook
  // inside the forward and a scaler inside the loss, each a tenth of its phase. Their regions nest
  // in the phase's; counted as regions of the phase, they pull its mean down by almost half.
  auto labelled_wait = [](const char* label) {
    return [label] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      workbook::Region part(label);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    };
  };
  const exercises::TrainingStep labelled{[] {}, labelled_wait("forward_hook"), labelled_wait("loss_scale"), [] {},
                                         [] {}};
  const auto report = exercises::profile_training(labelled, 2);
  REQUIRE(report.profile.count("forward_hook") == 2);
  for (const std::string phase : {"forward", "loss"}) {
    CAPTURE(phase);
    CHECK(report.phase_us.at(phase) == doctest::Approx(mean_region_us(report.profile, phase)));
  }
}

TEST_CASE("the dominant phase is whichever this run spent most in, not the usual suspect") {
  // Phases that only wait, for times set by the test. The verdict compares the report with the
  // profile it came from (the phase whose regions have the largest mean total), so a late wake-up
  // on a loaded machine cannot fail a right answer; the waits, 10x apart, make that phase a
  // different one in each loop, so no fixed answer fits them all, and a self-time answer misses
  // the nested one.
  auto wait_us = [](int us) { return [us] { std::this_thread::sleep_for(std::chrono::microseconds(us)); }; };
  const exercises::TrainingStep optimizer_heavy{wait_us(0), wait_us(2000), wait_us(0), wait_us(200), wait_us(20000)};
  const auto a = exercises::profile_training(optimizer_heavy, 2);
  CHECK(a.dominant == most_time_by_total(a.profile));
  CHECK(a.phase_us.at("optimizer") >= 19900);  // a sleep lasts at least its time (1% for the clocks)
  const exercises::TrainingStep forward_heavy{wait_us(0), wait_us(20000), wait_us(2000), wait_us(200), wait_us(0)};
  const auto b = exercises::profile_training(forward_heavy, 2);
  CHECK(b.dominant == most_time_by_total(b.profile));
  CHECK(b.phase_us.at("forward") >= 19900);
  // Time spent beneath a phase counts: its total, not its self time, decides (here the forward's
  // wait is inside a nested region, so its own self time is nearly zero).
  auto nested_wait_us = [](int us) {
    return [us] {
      workbook::Region inner("inner");
      std::this_thread::sleep_for(std::chrono::microseconds(us));
    };
  };
  const exercises::TrainingStep nested{wait_us(0), nested_wait_us(20000), wait_us(2000), wait_us(200), wait_us(0)};
  const auto c = exercises::profile_training(nested, 2);
  CHECK(c.dominant == most_time_by_total(c.profile));
  // Every phase can be the answer, zero_grad and the loss too.
  const exercises::TrainingStep loss_heavy{wait_us(0), wait_us(200), wait_us(20000), wait_us(2000), wait_us(0)};
  const auto d = exercises::profile_training(loss_heavy, 2);
  CHECK(d.dominant == most_time_by_total(d.profile));
  const exercises::TrainingStep zero_grad_heavy{wait_us(20000), wait_us(200), wait_us(0), wait_us(2000), wait_us(0)};
  const auto e = exercises::profile_training(zero_grad_heavy, 2);
  CHECK(e.dominant == most_time_by_total(e.profile));
}

TEST_CASE("the dominant phase is the mean over the recorded steps, not the first step's") {
  // Only the first recorded forward is slow (call 0 is the warm-up): 40 ms once against a 15 ms
  // backward every step. The first step alone says forward; the mean over four says backward.
  int forward_calls = 0;
  auto slow_first_forward = [&forward_calls] {
    if (forward_calls++ == 1) std::this_thread::sleep_for(std::chrono::milliseconds(40));
  };
  auto wait_ms = [](int ms) { return [ms] { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }; };
  const exercises::TrainingStep first_step_slow{[] {}, slow_first_forward, [] {}, wait_ms(15), [] {}};
  const auto report = exercises::profile_training(first_step_slow, 4);
  CHECK(report.dominant == most_time_by_total(report.profile));
}

TEST_CASE("the dominant phase is the mean over the recorded steps, not the median step's") {
  // The forward takes 30 ms in two of four recorded steps and nothing in the others (mean 15 ms,
  // the upper median 30 ms); the backward takes 20 ms every step. The verdict is compared with the
  // profile it came from (no fixed answer): the mean says backward, the median would say forward.
  int forward_calls = 0;
  auto slow_half_the_time = [&forward_calls] {
    const int call = forward_calls++;
    if (call == 1 || call == 2) std::this_thread::sleep_for(std::chrono::milliseconds(30));
  };
  auto wait_ms = [](int ms) { return [ms] { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }; };
  const exercises::TrainingStep half_slow{[] {}, slow_half_the_time, [] {}, wait_ms(20), [] {}};
  const auto report = exercises::profile_training(half_slow, 4);
  CHECK(report.dominant == most_time_by_total(report.profile));
}

TEST_CASE("the warm-up step is the first call, and every recorded step holds a whole call of each phase") {
  // Each forward call labels itself with its number: the warm-up is call 0, the recorded steps
  // calls 1 and 2, each inside its own step's forward region. The warm-up is a step like the
  // others, in the session (its warm-up or wait step): its forward runs inside its own forward
  // region too, the first one (phases called bare before the session open none).
  int call = 0, forward_regions_at_warm_up = -1;
  const testing::RegionObserver forward_regions("forward", "call#0", {});
  const exercises::TrainingStep numbered{[] {},
                                         [&] {
                                           if (call == 0) forward_regions_at_warm_up = forward_regions.steps();
                                           workbook::Region label("call#" + std::to_string(call++));
                                         },
                                         [] {}, [] {}, [] {}};
  const auto report = exercises::profile_training(numbered, 2);
  const auto& p = report.profile;
  CHECK(p.find_prefix("ProfilerStep#").size() == 2);
  // The warm-up is the session's own step 0 (the schedule's warmup: the profiler records it and
  // throws it away), so the recorded steps are ProfilerStep#1 and #2; a warm-up run before the
  // session leaves the profiler cold and records #0 and #1.
  CHECK(p.count("ProfilerStep#1") == 1);
  CHECK(p.count("ProfilerStep#2") == 1);
  CHECK(p.count("call#0") == 0);  // the warm-up call is not recorded
  CHECK(forward_regions_at_warm_up == 1);
  CHECK(forward_regions.steps() == 3);
  for (const char* name : {"call#1", "call#2"}) {
    CAPTURE(name);
    REQUIRE(p.count(name) == 1);
    const auto parent = p.parent(p.find(name).at(0));
    CHECK((parent && p[*parent].name == "forward"));
  }
}

TEST_CASE("the caller's own calls run, never copies of them: a call that keeps its own state moves on") {
  // A forward that walks through batches in its own (mutable) state, as a data loader's iterator
  // does: the warm-up and the recorded steps take batches 0, 1, 2, and the caller's next forward
  // takes batch 3. Copies of the call would each start again at 0, and leave the caller's at 0.
  std::vector<int> batches;
  exercises::TrainingStep walking{[] {}, [&batches, batch = 0]() mutable { batches.push_back(batch++); }, [] {}, [] {},
                                  [] {}};
  exercises::profile_training(walking, 2);
  CHECK(batches == std::vector<int>{0, 1, 2});
  walking.forward();
  CHECK(batches.back() == 3);
}

TEST_CASE("the dominant phase is the mean over the recorded steps, not the last step's") {
  // Only the last recorded forward is slow (call 0 is the warm-up, calls 1 to 4 are recorded):
  // 40 ms once against a 15 ms backward every step. The last step alone says forward; the mean
  // over four says backward.
  int forward_calls = 0;
  auto slow_last_forward = [&forward_calls] {
    if (forward_calls++ == 4) std::this_thread::sleep_for(std::chrono::milliseconds(40));
  };
  auto wait_ms = [](int ms) { return [ms] { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }; };
  const exercises::TrainingStep last_step_slow{[] {}, slow_last_forward, [] {}, wait_ms(15), [] {}};
  const auto report = exercises::profile_training(last_step_slow, 4);
  CHECK(report.dominant == most_time_by_total(report.profile));
}
