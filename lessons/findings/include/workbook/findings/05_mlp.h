#pragma once
/// \file
/// \brief Lesson 05's finding: the ops of one GeGLU forward.

#include <cstddef>

#include "workbook/findings/finding.h"

namespace workbook::findings05 {

/// One GeGLU forward (the subtree of `forward`) runs the articles' 5 compute ops: 3 aten::mm,
/// one aten::gelu, one aten::mul — each exactly.
Finding geglu_runs_five_compute_ops(const Profile& profile, EventId forward);

/// The GEMMs one forward (the subtree of `forward`) runs: its aten::mm and aten::addmm.
std::size_t gemms_in_forward(const Profile& profile, EventId forward);

}  // namespace workbook::findings05
