#include "workbook/findings/06_compile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace workbook::findings06 {
namespace {

// Every region named `region`: throws when there is none, so a missing call is never "zero ops".
std::vector<EventId> calls(const Profile& p, std::string_view region) {
  const auto ids = p.find(region);
  if (ids.empty()) throw std::invalid_argument("no event named '" + std::string(region) + "' in this profile");
  return ids;
}

// How many calls named `region` ran exactly `per_call` ops named `op` beneath them.
std::size_t calls_with(const Profile& p, std::string_view region, std::string_view op, std::size_t per_call) {
  const auto ids = calls(p, region);
  return std::size_t(
      std::count_if(ids.begin(), ids.end(), [&](EventId r) { return p.count_under(r, op) == per_call; }));
}

// The ops named `op` beneath all calls named `region`.
std::size_t total_under(const Profile& p, std::string_view region, std::string_view op) {
  std::size_t n = 0;
  for (EventId r : calls(p, region)) n += p.count_under(r, op);
  return n;
}

// Generated kernels (ops whose name holds "cpp_fused") beneath one call.
std::size_t generated_kernels_under(const Profile& p, EventId call) {
  std::size_t n = 0;
  for (EventId d : p.descendants(call)) n += p[d].name.find("cpp_fused") != std::string::npos;
  return n;
}

}  // namespace

std::map<std::string, std::size_t> ops_of_first_call(const Profile& p, std::string_view region) {
  std::map<std::string, std::size_t> counts;
  for (EventId d : p.descendants(first_named(p, region)))
    if (p[d].category == Category::cpu_op) ++counts[std::string(p[d].name)];
  return counts;
}

Finding transpose_eliminated(const Profile& eager, const Profile& compiled) {
  const std::size_t eager_calls = calls(eager, "eager_linear").size(),
                    compiled_calls = calls(compiled, "compiled_linear").size();
  const std::size_t eager_one_t = calls_with(eager, "eager_linear", "aten::t", 1),
                    compiled_no_t = calls_with(compiled, "compiled_linear", "aten::t", 0),
                    compiled_one_addmm = calls_with(compiled, "compiled_linear", "aten::addmm", 1);
  return {eager_one_t == eager_calls && compiled_no_t == compiled_calls && compiled_one_addmm == compiled_calls,
          "our compiled forward runs the same aten::addmm with no aten::t; eager runs one aten::t per call",
          fmt::format("calls with one aten::t: eager {} of {}; compiled calls with no aten::t {} and one aten::addmm "
                      "{}, of {}",
                      eager_one_t, eager_calls, compiled_no_t, compiled_one_addmm, compiled_calls)};
}

Finding mlp_fused(const Profile& compiled) {
  const std::size_t n = calls(compiled, "compiled_mlp").size();
  const std::size_t mm = calls_with(compiled, "compiled_mlp", "aten::mm", 3),
                    fused = calls_with(compiled, "compiled_mlp", "workbook::fused_gelu_mul", 1),
                    gelu = total_under(compiled, "compiled_mlp", "aten::gelu"),
                    mul = total_under(compiled, "compiled_mlp", "aten::mul");
  return {mm == n && fused == n && gelu == 0 && mul == 0,
          "our compiled MLP runs 3 aten::mm and one fused gelu * mul, no separate aten::gelu or aten::mul",
          fmt::format("of {} compiled forwards: {} with 3 aten::mm, {} with one fused gelu * mul; aten::gelu {}, "
                      "aten::mul {} in all",
                      n, mm, fused, gelu, mul)};
}

std::string host_time_saved(const std::vector<double>& eager_rounds_us, const std::vector<double>& compiled_rounds_us) {
  if (eager_rounds_us.empty() || eager_rounds_us.size() != compiled_rounds_us.size())
    throw std::invalid_argument("host_time_saved needs the same number of eager and compiled rounds (at least one)");
  const std::size_t rounds = eager_rounds_us.size();
  std::vector<double> saved;
  for (std::size_t r = 0; r < rounds; ++r) saved.push_back(eager_rounds_us[r] - compiled_rounds_us[r]);
  const auto faster = std::size_t(std::count_if(saved.begin(), saved.end(), [](double d) { return d > 0; }));
  std::sort(saved.begin(), saved.end());
  const double median_saved = rounds % 2 ? saved[rounds / 2] : (saved[rounds / 2 - 1] + saved[rounds / 2]) / 2;
  if (faster == rounds)
    return fmt::format(
        "the compiled path, which skips aten::t, was faster in all {} rounds here, by {:.2f} us per call (the median "
        "of the per-round differences, which need not equal the difference of the two medians)",
        rounds, median_saved);
  return fmt::format(
      "this run does NOT show a saving from skipping aten::t: the compiled path was faster in {} of {} rounds, not "
      "in all (the median of the per-round differences: {:.2f} us per call {}, which need not equal the "
      "difference of the two medians)",
      faster, rounds, std::abs(median_saved), median_saved >= 0 ? "faster" : "slower");
}

Finding aoti_runs_no_transpose(const Profile& linear, const Profile& mlp) {
  const std::size_t in_linear = total_under(linear, "aoti", "aten::t"),
                    in_mlp = total_under(mlp, "aoti_mlp", "aten::t");
  return {in_linear == 0 && in_mlp == 0,
          "AOTInductor's compiled models run no aten::t: the transposed weights are strided views whose sizes and "
          "strides are fixed in the generated code (our hand-made version prepares its views once)",
          fmt::format("aten::t in all recorded calls: Linear {}, MLP {}", in_linear, in_mlp)};
}

Finding aoti_equals_eager(double linear_difference, double mlp_difference, double mlp_largest_output) {
  const bool equal = linear_difference <= 1e-4 && mlp_difference <= 1e-4 * std::max(1.0, mlp_largest_output);
  return {equal, "AOTInductor's outputs equal eager's (same weights: the lesson handed its own to the compile step)",
          fmt::format("largest difference: Linear {:.2e}, MLP {:.2e} (MLP outputs up to {:.2f})", linear_difference,
                      mlp_difference, mlp_largest_output)};
}

Finding aoti_fused_gelu_mul(const Profile& mlp) {
  const auto ids = calls(mlp, "aoti_mlp");
  const std::size_t one_kernel = std::size_t(
      std::count_if(ids.begin(), ids.end(), [&](EventId r) { return generated_kernels_under(mlp, r) == 1; }));
  const std::size_t gelu = total_under(mlp, "aoti_mlp", "aten::gelu"), mul = total_under(mlp, "aoti_mlp", "aten::mul");
  return {one_kernel == ids.size() && gelu == 0 && mul == 0,
          "AOTInductor fused gelu and mul into one generated kernel (cpp_fused_*), as our hand-fused kernel does",
          fmt::format("of {} MLP calls, {} ran one generated kernel; aten::gelu {}, aten::mul {} in all", ids.size(),
                      one_kernel, gelu, mul)};
}

Finding aoti_gemms_below_the_dispatcher(std::string_view code, const Profile& mlp) {
  constexpr std::string_view shim = "aoti_torch_cpu_mm_out(";
  std::size_t shim_gemms = 0;
  for (auto at = code.find(shim); at != std::string_view::npos; at = code.find(shim, at + 1)) ++shim_gemms;
  const std::size_t mm = total_under(mlp, "aoti_mlp", "aten::mm");
  return {shim_gemms == 3 && mm == 0,
          "the compiled MLP's three GEMMs leave no aten::mm in the profile: the generated code calls the C shim "
          "aoti_torch_cpu_mm_out, which calls the CPU kernel at::cpu::mm_out directly, past the dispatcher where "
          "the profiler's hooks sit (torchgen/gen_aoti_c_shim.py, gen_static_dispatch_backend_call)",
          fmt::format("aoti_torch_cpu_mm_out calls in the generated code: {}; aten::mm in the recorded calls: {}",
                      shim_gemms, mm)};
}

Finding cache_equals_eager(const CacheWalk& walk) {
  return {walk.all_equal_eager, "every call returns what eager returns",
          "torch::allclose against linear->forward for each call above"};
}

Finding batch_becomes_dynamic(const CacheWalk& walk) {
  return {walk.after_batch == walk.after_repeat + 1 && walk.after_second_batch == walk.after_batch,
          "our cache: a batch change recompiles once; then the batch dimension is dynamic",
          fmt::format("entries before the first new batch: {}, after it: {}, after another batch: {}",
                      walk.after_repeat, walk.after_batch, walk.after_second_batch)};
}

Finding layout_is_guarded(const CacheWalk& walk) {
  return {walk.after_transposed == walk.after_second_batch + 1,
          "our cache: a transposed input needs an entry of its own (layout is guarded)",
          fmt::format("entries before it {}, after it {}", walk.after_second_batch, walk.after_transposed)};
}

Finding in_place_update_keeps_entry(const CacheWalk& walk) {
  return {walk.after_update == walk.after_transposed && walk.after_replace == walk.after_update + 1,
          "our cache: an in-place update of the weight recompiles nothing; replacing the weight does",
          fmt::format("entries before the update {}, after it {}, after the replacement {}", walk.after_transposed,
                      walk.after_update, walk.after_replace)};
}

}  // namespace workbook::findings06
