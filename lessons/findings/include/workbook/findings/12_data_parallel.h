#pragma once
/// \file
/// \brief Lesson 12's findings: collectives per step and where communication overlaps backward,
/// from every rank's recorded steps.

#include <cstddef>
#include <string>
#include <vector>

#include "workbook/findings/finding.h"
#include "workbook/profiler/communication.h"

namespace workbook::findings12 {

/// One rank's recorded steps of one way.
struct RankSteps {
  std::vector<StepCommunication> steps;       ///< step_communication of the rank's profile
  std::vector<std::size_t> collective_calls;  ///< c10d::allreduce_ calls in each step
};

/// One way of averaging gradients, on every rank.
struct WayOnRanks {
  std::string way;               ///< "each_gradient", "flat_bucket", "overlapped"
  std::vector<RankSteps> ranks;  ///< index = rank
};

/// Every recorded step of every rank ran `expected` all-reduce calls (one per parameter, one for a
/// flat bucket...). `what` names the way in the sentence.
Finding collectives_per_step(const WayOnRanks& way, std::size_t expected, const std::string& what);

/// All-reduces started from hooks fly while the rank still computes, and those started after
/// backward do not: over every rank's steps together, the hooked way's overlap fraction (time a
/// transfer flew while an op ran outside the collective calls / time a transfer flew) is at least
/// 5 points above each after-backward way's. (Pooled: the rank that joins last waits little, so
/// its own share depends on the other ranks' timing.)
Finding overlap_only_from_hooks(const std::vector<WayOnRanks>& after_backward, const WayOnRanks& from_hooks);

}  // namespace workbook::findings12
