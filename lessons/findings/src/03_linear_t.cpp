#include "workbook/findings/03_linear_t.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <string>

namespace workbook::findings03 {

Finding linear_is_one_addmm(const Profile& p) {
  const auto forwards = p.find("linear_forward");
  std::size_t linear = 0, addmm = 0;
  for (EventId f : forwards) {
    linear += p.count_under(f, "aten::linear");
    addmm += p.count_under(f, "aten::addmm");
  }
  return {!forwards.empty() && linear == 0 && addmm == forwards.size(),
          "C++'s nn::Linear forward has no aten::linear, one aten::addmm",
          fmt::format("{} recorded forwards: {} aten::linear, {} aten::addmm", forwards.size(), linear, addmm)};
}

Finding bias_inside_addmm(const Profile& p) {
  const auto forwards = p.find("linear_forward");
  std::size_t adds = 0;
  for (EventId f : forwards) adds += p.count_under(f, "aten::add") + p.count_under(f, "aten::add_");
  return {!forwards.empty() && adds == 0, "there is no separate add: the bias goes into addmm",
          fmt::format("{} aten::add / aten::add_ under {} forwards", adds, forwards.size())};
}

Finding transpose_is_view(const Transpose& t) {
  const auto& w = t.weight_strides;
  const bool swapped = w.size() == 2 && t.transpose_strides == std::vector<std::int64_t>{w[1], w[0]};
  return {t.same_storage && t.weight_data == t.transpose_data && swapped,
          "W.t() is a view: same storage, same data pointer, strides swapped",
          fmt::format("W strides [{}], W.t() strides [{}], data {} vs {}, {} storage", fmt::join(w, ", "),
                      fmt::join(t.transpose_strides, ", "), t.weight_data, t.transpose_data,
                      t.same_storage ? "the same" : "another")};
}

Finding t_runs_only_views(const Profile& p) {
  const auto calls = p.find("aten::t");
  std::set<std::string> beneath;
  std::size_t allocations = 0;
  for (EventId t : calls)
    for (EventId d : p.descendants(t)) {
      if (p[d].category == Category::memory) {
        allocations += p[d].bytes > 0;
        continue;
      }
      beneath.insert(std::string(p[d].name));
    }
  const bool only_views = std::all_of(beneath.begin(), beneath.end(), [](const std::string& name) {
    return name == "aten::transpose" || name == "aten::as_strided";
  });
  return {!calls.empty() && only_views && allocations == 0,
          "beneath aten::t there are only views (aten::transpose, aten::as_strided), no allocation",
          fmt::format("{} aten::t calls; ops beneath them: [{}]; allocations beneath them: {}", calls.size(),
                      fmt::join(beneath, ", "), allocations)};
}

Finding contiguous_copies_the_weight(const Profile& p, std::int64_t weight_bytes) {
  const auto calls = p.find("aten::contiguous");
  std::size_t copies = 0, full_buffers = 0;
  for (EventId c : calls) {
    copies += p.count_under(c, "aten::copy_") > 0;
    std::int64_t allocated = 0;
    for (EventId d : p.descendants(c))
      if (p[d].category == Category::memory && p[d].bytes > 0) allocated += p[d].bytes;
    full_buffers += allocated >= weight_bytes;
  }
  return {
      !calls.empty() && copies == calls.size() && full_buffers == calls.size(),
      "each aten::contiguous allocates a buffer of the weight's size and aten::copy_ fills it",
      fmt::format("{} aten::contiguous calls: {} with an aten::copy_ beneath, {} allocated >= {} bytes (the weight)",
                  calls.size(), copies, full_buffers, weight_bytes)};
}

}  // namespace workbook::findings03
