#pragma once
/// \file
/// \brief Exercise 08: instrument a training loop and say where its time goes.

#include <functional>
#include <map>
#include <string>

#include "workbook/profiler/profile.h"

namespace exercises {

//! [contract]
/// The five calls of one training step, handed over by the loop's owner.
struct TrainingStep {
  std::function<void()> zero_grad;  ///< clear the gradients
  std::function<void()> forward;    ///< compute the prediction
  std::function<void()> loss;       ///< compute the loss from it
  std::function<void()> backward;   ///< loss.backward()
  std::function<void()> optimizer;  ///< optimizer.step()
};

/// Where a training loop's time went, per recorded step.
struct PhaseReport {
  std::map<std::string, double>
      phase_us;          ///< mean total µs per step of "zero_grad", "forward", "loss", "backward", "optimizer"
  std::string dominant;  ///< the phase with the most mean time (measured means do not tie; either wins a tie)
  double backward_over_forward = 0;  ///< phase_us["backward"] / phase_us["forward"]
  workbook::Profile profile;         ///< what was recorded
};

/// Runs `steps` recorded training steps under the profiler, after one step that is not recorded
/// (the schedule's warm-up, as lesson 08 does: the Session records it and cuts it from the
/// recording, so what the profiler's start costs falls there, though with Kineto the second
/// recorded step still pays part of it; a wait step instead records the
/// same steps and is accepted too; a step run before the session starts is not: the recorded steps
/// must be ProfilerStep#1 to ProfilerStep#steps), each phase
/// inside a workbook::Region named after it, in the order of TrainingStep, and reports from the
/// profile. Lesson 08 wrote such a loop for its own model; here the loop is given to you in pieces:
/// run the caller's own five calls, never copies of them (a call may keep state, as a loader's
/// iterator does, and the caller's next call goes on from where the steps left it).
PhaseReport profile_training(const TrainingStep& step, int steps);
//! [contract]

}  // namespace exercises
