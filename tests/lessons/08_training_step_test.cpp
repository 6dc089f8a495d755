// Checks of exercise 08: a real training loop (Linear layers, MSE, SGD), phase by phase.
#include "workbook_doctest.h"

#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include "08_training_step.h"

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

double mean_region_us(const workbook::Profile& p, const char* name) {
  const auto ids = p.find(name);
  double sum = 0;
  for (auto id : ids) sum += double(p.total_ns(id)) / 1e3;
  return ids.empty() ? -1 : sum / double(ids.size());
}

}  // namespace

TEST_CASE("five phase regions per recorded step, each holding its own work") {
  Loop loop;
  const auto report = exercises::profile_training(loop.step(), 3);
  const auto& p = report.profile;
  CHECK(p.find_prefix("ProfilerStep#").size() == 3);
  for (const char* phase : {"zero_grad", "forward", "loss", "backward", "optimizer"}) {
    CAPTURE(phase);
    CHECK(p.find(phase).size() == 3);
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
  REQUIRE(report.phase_us.size() == 5);
  double most = -1;
  std::string dominant;
  for (const char* phase : {"zero_grad", "forward", "loss", "backward", "optimizer"}) {
    CAPTURE(phase);
    CHECK(report.phase_us.at(phase) == doctest::Approx(mean_region_us(report.profile, phase)));
    if (report.phase_us.at(phase) > most) most = report.phase_us.at(phase), dominant = phase;
  }
  CHECK(report.dominant == dominant);
  CHECK(report.backward_over_forward ==
        doctest::Approx(mean_region_us(report.profile, "backward") / mean_region_us(report.profile, "forward")));
  CHECK(report.backward_over_forward > 0);
}
