#pragma once
/// \file
/// \brief Exercise 01: profile matmul + bias through the workbook's toolkit.

#include <torch/types.h>

#include "workbook/profile.h"
#include "workbook/session.h"

namespace exercises {

//! [contract]
/// Profiles `y = add(matmul(x, w), b)`, one computation per step, under `schedule`.
///
/// Write it the way the article does with torch.profiler:
///  1. open a `workbook::Session` with `schedule`;
///  2. run `schedule.total_steps()` steps; in each, compute y inside a `workbook::Region`
///     named "matmul_add";
///  3. call `session.step()` at the end of every step;
///  4. return `session.finish()`.
///
/// The checks count what the profiler saw: one `matmul_add` region per recorded step, each with
/// `aten::matmul -> aten::mm` and `aten::add` beneath it, inside a `ProfilerStep#N` region.
workbook::Profile profile_matmul_add(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                     const workbook::Schedule& schedule);
//! [contract]

}  // namespace exercises
