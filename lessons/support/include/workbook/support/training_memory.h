#pragma once
/// \file
/// \brief The GeGLU MLP's training step with a region per phase (lessons 08 and 09), and lesson
/// 09's measurement: steps recorded with profile_memory and what each keeps alive above the
/// moment its forward began.

#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "workbook/profiler/memory_timeline.h"
#include "workbook/profiler/profile.h"
#include "workbook/support/geglu.h"

namespace workbook {

/// The phases of one training step, each recorded as a region of this name, in this order.
inline const char* const kTrainingPhases[] = {"zero_grad", "forward", "loss", "backward", "optimizer"};

/// One training step of `model` on (x, target), each phase inside a Region named as in
/// kTrainingPhases: zero_grad (setting to none or zeroing), forward, MSE loss, backward, the
/// optimizer's step. Its tensors die when it returns.
void training_step(Geglu& model, const torch::Tensor& x, const torch::Tensor& target,
                   torch::optim::Optimizer& optimizer, bool set_to_none);

/// Runs `warmup` + `steps` training steps of `model` on (x, target) — zero_grad setting the
/// gradients to none, forward, MSE loss, backward, SGD without momentum — under a session with
/// profile_memory and record_shapes, a region per phase, and returns the recorded steps' profile.
Profile record_training_steps(Geglu& model, const torch::Tensor& x, const torch::Tensor& target, int warmup, int steps,
                              double learning_rate = 1e-2);

/// What one recorded step did to live memory, measured from its "forward" region's start.
struct StepMemory {
  EventId step = 0;                     ///< the ProfilerStep#N region
  std::int64_t at_step_start = 0;       ///< live bytes when the step began
  std::int64_t at_forward_start = 0;    ///< live bytes when its forward began (old gradients freed)
  std::int64_t peak_above_forward = 0;  ///< the step's largest live bytes minus at_forward_start
  std::int64_t at_step_end = 0;         ///< live bytes when the step ended
};

/// StepMemory of every recorded step, in order. Throws std::runtime_error when a step has no
/// "forward" region.
std::vector<StepMemory> step_memory(const Profile& profile, const MemoryTimeline& timeline);

}  // namespace workbook
