#include "workbook/findings/01_matmul_add.h"

#include <fmt/format.h>

#include <algorithm>

namespace workbook::findings01 {
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::string matmul_self_against_total(const Profile& p) {
  const auto matmuls = p.find("aten::matmul");
  if (matmuls.empty()) throw std::invalid_argument("no event named 'aten::matmul' in this profile");
  // Per call, not pooled: one slow step (a page fault, a descheduled thread) would otherwise
  // decide the sentence for every step.
  std::vector<double> shares;
  for (EventId m : matmuls) {
    double in_mm = 0;
    for (EventId mm : p.under(m, "aten::mm")) in_mm += double(p.total_ns(mm));
    shares.push_back(p.total_ns(m) > 0 ? in_mm / double(p.total_ns(m)) : 0);
  }
  const auto [low, high] = std::minmax_element(shares.begin(), shares.end());
  const double share = median_of(shares);
  const std::string split =
      shares.size() == 1
          ? fmt::format("here aten::mm holds {:.0f}% of aten::matmul's total", 100 * share)
          : fmt::format("here aten::mm holds {:.0f}% of aten::matmul's total (the median of {} calls, {:.0f}-{:.0f}%)",
                        100 * share, shares.size(), 100 * *low, 100 * *high);
  if (share >= 0.8)
    return split +
           ": aten::matmul has a large total but little self time, because almost all of it is spent in "
           "aten::mm, which calls the BLAS GEMM";
  return split +
         ", and the rest is aten::matmul's self time: its own dispatch, the profiler's cost of recording the "
         "nested op and, in the first recorded step, the cold start. At this size none of it is arithmetic";
}

Finding first_step_was_cold(const std::vector<double>& gaps_us) {
  if (gaps_us.size() < 2) return {false, "the first recorded step paid for a cold start", "fewer than two steps"};
  const double first = gaps_us[0], later = median_of(std::vector<double>(gaps_us.begin() + 1, gaps_us.end()));
  // The floor keeps a microsecond of noise (2.1 us against 0.6 us) from reading as a cold start.
  return {first > 2 * later && first - later >= kColdGapMinUs, "the first recorded step paid for a cold start",
          fmt::format("gap before aten::matmul: first recorded step {:.1f} us, median of the later ones {:.1f} us",
                      first, later)};
}

std::size_t ops_directly_inside(const Profile& profile, std::string_view region) {
  const auto regions = profile.find(region);
  if (regions.empty()) throw std::invalid_argument("no region named '" + std::string(region) + "' in this profile");
  const auto& children = profile.children(regions.front());
  return std::size_t(std::count_if(children.begin(), children.end(),
                                   [&](EventId c) { return profile[c].category == Category::cpu_op; }));
}

}  // namespace workbook::findings01
