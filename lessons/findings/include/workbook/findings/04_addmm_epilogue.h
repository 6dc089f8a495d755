#pragma once
/// \file
/// \brief Lesson 04's findings: where the bias goes in unfused mm + add, fused addmm and nn::Linear.
///
/// Each takes the lesson's profile, with one region per forward named "unfused", "fused" and
/// "nn_linear" (their first occurrence is read), and throws std::invalid_argument when one is missing.

#include <cstdint>

#include "workbook/findings/finding.h"

namespace workbook::findings04 {

/// Only the unfused forward runs an aten::add; addmm and nn::Linear add the bias inside the op.
Finding bias_inside_the_op(const Profile& profile);

/// The unfused forward allocates one more [M, N] buffer (allocations of at least `output_bytes`)
/// than the fused one.
Finding one_more_output_buffer(const Profile& profile, std::int64_t output_bytes);

/// On the CPU, addmm copies the broadcast bias into its output first: an aten::copy_ beneath the
/// fused forward's aten::addmm.
Finding bias_copied_into_output(const Profile& profile);

}  // namespace workbook::findings04
