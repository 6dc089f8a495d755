#pragma once
/// \file
/// \brief Lesson 08's findings: a training step's autograd nodes, threads, zero_grad and optimizer.
///
/// Each takes the lesson's profile: ProfilerStep#N steps, each holding regions named "zero_grad",
/// "forward", "loss", "backward" and "optimizer".

#include <cstdint>
#include <vector>

#include "workbook/findings/finding.h"

namespace workbook::findings08 {

/// Backward runs one MmBackward node per forward GEMM: `gemms_per_step` per recorded step.
Finding one_mm_backward_per_gemm(const Profile& profile, int gemms_per_step);

/// Whether a host event is an autograd node: "MmBackward0", "torch::autograd::AccumulateGrad"...,
/// not the engine's "autograd::engine::evaluate_function: MmBackward0" wrapped around one (counting
/// both would count every node twice).
bool is_autograd_node(std::string_view name);

/// For CPU tensors backward runs on the thread that called backward(): the autograd nodes that
/// ran while a "backward" region was open, on any thread, ran on exactly the forward regions' threads.
Finding backward_on_callers_thread(const Profile& profile);

/// zero_grad(set_to_none) runs no op, zeroing in place runs aten::zero_: the lesson's loop sets
/// the gradients to none in even-numbered steps and zeroes them in odd ones.
Finding zero_grad_forms(const Profile& profile);

/// The optimizer updates parameter by parameter: every top-level op of the "optimizer" regions
/// takes one tensor of a parameter's shape first, and every parameter gets as many ops.
/// `parameter_shapes`: one entry per parameter tensor (shapes may repeat).
Finding optimizer_per_parameter(const Profile& profile, const std::vector<std::vector<std::int64_t>>& parameter_shapes);

}  // namespace workbook::findings08
