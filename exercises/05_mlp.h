#pragma once
/// \file
/// \brief Exercise 05: where one MLP forward's time goes, stage by stage.

#include <cstdint>
#include <string>
#include <vector>

#include "workbook/profiler/profile.h"

namespace exercises {

//! [contract]
/// One stage of the GeGLU forward, averaged over the recorded forwards.
struct StageTime {
  std::string stage;       ///< "gate_proj", "up_proj", "act_mul", "down_proj", in that order
  double total_us = 0;     ///< total time of the stage's regions in a forward (summed, one nested in another
                           ///< of its name too, as Python's key_averages sums every event of a name), mean
                           ///< over forwards
  double self_us = 0;      ///< self time of those regions (their total minus every direct host child's total:
                           ///< ops, regions, a Python module span, a runtime call alike, as Python's self time;
                           ///< memory records and device events are not children), mean over forwards
  double gemm_us = 0;      ///< total time of all GEMMs beneath them (exactly aten::mm, aten::addmm; each such
                           ///< event, one beneath another too; summed per region, as total_us: a GEMM beneath
                           ///< two nested regions of the stage counts for each), mean over forwards
  double gemm_share = 0;   ///< gemm_us / total_us (0 when total_us is 0: a stage no forward ran)
  std::int64_t flops = 0;  ///< FLOPs of the stage's GEMM, counted by hand from the shapes (0 for act_mul)
  double gemm_gflops = 0;  ///< flops over gemm_us: the GEMM's achieved rate (0 for act_mul, 0 when gemm_us is 0)
};

/// Lesson 05 gave one split for the whole forward; here it is per stage. `profile` holds
/// recorded GeGLU forwards, each an "mlp_forward" region on the host (one nested in another is a
/// forward too, and its stages count in both; a GPU trace also mirrors every region on the device
/// lane, a gpu_user_annotation: not a forward) around the stage regions above, named exactly so (at
/// any depth beneath it, inside another stage's region too; a stage region outside every forward
/// belongs to none and is not counted; a stage a forward lacks counts as zero time in it), with
/// `tokens` rows (batch x sequence), model width `dim` and hidden width `hidden`, each 0 too (an
/// empty batch or layer: no FLOPs, and the stages' times still as recorded). The FLOPs are yours to
/// count (a [T, D] x [D, H] GEMM is 2·T·D·H, exactly: every count below 2^63 fits an int64, while a
/// double rounds past 2^53), not the profiler's estimate.
/// Throws std::invalid_argument when the profile has no host "mlp_forward" region (a device mirror
/// alone is no forward).
std::vector<StageTime> stage_breakdown(const workbook::Profile& profile, std::int64_t tokens, std::int64_t dim,
                                       std::int64_t hidden);
//! [contract]

}  // namespace exercises
