#include "workbook/findings/12_data_parallel.h"

#include <fmt/format.h>

namespace workbook::findings12 {
namespace {

// Over all the rank's steps: overlapped time / communication time (as trace --ranks reports it).
double overlap_fraction(const RankSteps& rank) {
  std::int64_t communication = 0, overlapped = 0;
  for (const auto& s : rank.steps) communication += s.communication_ns, overlapped += s.overlapped_ns;
  return communication > 0 ? double(overlapped) / double(communication) : 0;
}

}  // namespace

Finding collectives_per_step(const WayOnRanks& way, std::size_t expected, const std::string& what) {
  std::size_t steps = 0, matching = 0;
  std::string seen;
  for (std::size_t r = 0; r < way.ranks.size(); ++r)
    for (std::size_t calls : way.ranks[r].collective_calls) {
      ++steps;
      matching += calls == expected;
      if (calls != expected && seen.empty()) seen = fmt::format("; rank {} ran {} in one step", r, calls);
    }
  return {steps > 0 && matching == steps,
          fmt::format("{}: every step of every rank runs {} c10d::allreduce_", what, expected),
          fmt::format("{} of {} recorded steps on {} ranks{}", matching, steps, way.ranks.size(), seen)};
}

// Over every rank's steps together: overlapped time / communication time.
double pooled_overlap(const WayOnRanks& way) {
  RankSteps all;
  for (const auto& rank : way.ranks) all.steps.insert(all.steps.end(), rank.steps.begin(), rank.steps.end());
  return overlap_fraction(all);
}

Finding overlap_only_from_hooks(const std::vector<WayOnRanks>& after_backward, const WayOnRanks& from_hooks) {
  constexpr double kMargin = 0.05;
  const double hooked = pooled_overlap(from_hooks);
  bool holds = !from_hooks.ranks.empty() && !after_backward.empty();
  std::string evidence = fmt::format("all ranks: {:.0f}% from hooks", 100 * hooked);
  for (const WayOnRanks& after : after_backward) {
    const double other = pooled_overlap(after);
    holds = holds && after.ranks.size() == from_hooks.ranks.size() && hooked >= other + kMargin;
    evidence += fmt::format(", {:.0f}% {}", 100 * other, after.way);
  }
  for (std::size_t r = 0; r < from_hooks.ranks.size(); ++r)
    evidence += fmt::format("; rank {}: {:.0f}% from hooks", r, 100 * overlap_fraction(from_hooks.ranks[r]));
  return {holds,
          "all-reduces started from gradient hooks fly while the ranks still compute (backward's remaining ops), "
          "those started after backward do not: over all ranks, at least 5 points more of their time overlaps an op",
          evidence};
}

}  // namespace workbook::findings12
