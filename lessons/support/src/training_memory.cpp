#include "workbook/support/training_memory.h"

#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include <stdexcept>

#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"

namespace workbook {

void training_step(Geglu& model, const torch::Tensor& x, const torch::Tensor& target,
                   torch::optim::Optimizer& optimizer, bool set_to_none) {
  torch::Tensor prediction, loss;
  {
    Region r("zero_grad");
    zero_grad(*model, set_to_none);
  }
  {
    Region r("forward");
    prediction = model->forward(x);
  }
  {
    Region r("loss");
    loss = torch::mse_loss(prediction, target);
  }
  {
    Region r("backward");
    loss.backward();
  }
  {
    Region r("optimizer");
    optimizer.step();
  }
}

Profile record_training_steps(Geglu& model, const torch::Tensor& x, const torch::Tensor& target, int warmup, int steps,
                              double learning_rate) {
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(learning_rate));
  SessionOptions recording;
  recording.profile_memory = true;
  recording.record_shapes = true;
  const Schedule schedule(0, warmup, steps);
  Session session(schedule, recording);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    // The step's tensors die inside it: each step then ends holding only the new gradients, and
    // the next step's zero_grad frees them.
    training_step(model, x, target, optimizer, /*set_to_none=*/true);
    session.step();
  }
  return session.finish();
}

std::vector<StepMemory> step_memory(const Profile& profile, const MemoryTimeline& timeline) {
  std::vector<StepMemory> result;
  for (EventId step : profile.find_prefix("ProfilerStep#")) {
    const auto forwards = profile.under(step, "forward");
    if (forwards.empty())
      throw std::runtime_error("step_memory: " + std::string(profile[step].name) + " has no \"forward\" region");
    const Event& s = profile[step];
    StepMemory m;
    m.step = step;
    m.at_step_start = timeline.live_at(s.start_ns - 1);
    m.at_forward_start = timeline.live_at(profile[forwards.front()].start_ns - 1);
    m.peak_above_forward = timeline.peak_between(profile[forwards.front()].start_ns, s.end_ns) - m.at_forward_start;
    m.at_step_end = timeline.live_at(s.end_ns);
    result.push_back(m);
  }
  return result;
}

}  // namespace workbook
