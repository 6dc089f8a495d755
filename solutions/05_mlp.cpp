// Reference solution of exercise 05.
//
// What to notice: the FLOPs come from the shapes, not from the profiler's estimate, and each GEMM's rate is
// measured on its own op's time: the stage's total also holds aten::t and the dispatch around it.
#include "05_mlp.h"

#include <stdexcept>

namespace exercises {

std::vector<StageTime> stage_breakdown(const workbook::Profile& profile, std::int64_t tokens, std::int64_t dim,
                                       std::int64_t hidden) {
  // Host regions only: a GPU trace mirrors each region on the device lane (gpu_user_annotation).
  std::vector<workbook::EventId> forwards;
  for (auto id : profile.find("mlp_forward"))
    if (profile[id].on_host()) forwards.push_back(id);
  if (forwards.empty()) throw std::invalid_argument("stage_breakdown: the profile has no mlp_forward region");
  const std::int64_t projection = 2 * tokens * dim * hidden;  // [T, D] x [D, H], or [T, H] x [H, D]
  std::vector<StageTime> stages{{"gate_proj"}, {"up_proj"}, {"act_mul"}, {"down_proj"}};
  for (auto& s : stages) {
    for (auto forward : forwards)
      for (auto region : profile.under(forward, s.stage)) {
        s.total_us += double(profile.total_ns(region)) / 1e3;
        s.self_us += double(profile.self_ns(region)) / 1e3;
        for (const char* gemm : {"aten::mm", "aten::addmm"})
          for (auto g : profile.under(region, gemm)) s.gemm_us += double(profile.total_ns(g)) / 1e3;
      }
    const double n = double(forwards.size());
    s.total_us /= n;
    s.self_us /= n;
    s.gemm_us /= n;
    s.gemm_share = s.total_us > 0 ? s.gemm_us / s.total_us : 0.0;
    s.flops = s.stage == "act_mul" ? 0 : projection;
    s.gemm_gflops = s.gemm_us > 0 ? double(s.flops) / (s.gemm_us * 1e3) : 0.0;
  }
  return stages;
}

}  // namespace exercises
