#pragma once
/// \file
/// \brief Lesson 01's run-dependent sentences: what self and total time, and the first recorded
/// step's gap, showed in this run. Timings vary from run to run, so these are printed as
/// narration whose words follow the numbers, never as a claim that could fail the run.

#include <string>
#include <vector>

#include "workbook/findings/finding.h"

namespace workbook::findings01 {

/// How aten::matmul's total splits into aten::mm beneath it and its own self time, summed over
/// the profile's aten::matmul events, said as this run shows it (a small n can leave matmul's own
/// dispatch a large part). Throws std::invalid_argument when the profile has no aten::matmul.
std::string matmul_self_against_total(const Profile& profile);

/// How much longer (us) the first gap must be to count as a cold start.
inline constexpr double kColdGapMinUs = 10;

/// The first recorded step paid for a cold start: its gap before aten::matmul is more than twice
/// the median of the later steps' gaps and at least kColdGapMinUs longer (`gaps_us` in step order;
/// at least two needed).
Finding first_step_was_cold(const std::vector<double>& gaps_us);

/// How many ops run directly inside the first region named `region` (its children that are
/// operators, not their children, not memory records): for matmul_add, aten::matmul and aten::add.
/// Throws std::invalid_argument when there is no such region.
std::size_t ops_directly_inside(const Profile& profile, std::string_view region);

}  // namespace workbook::findings01
