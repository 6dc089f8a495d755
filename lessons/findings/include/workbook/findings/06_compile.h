#pragma once
/// \file
/// \brief Lesson 06's findings: what the hand-made compile, AOTInductor and our specialisation
/// cache showed in this run.
///
/// The profile findings read the lesson's regions ("eager_linear", "compiled_linear",
/// "compiled_mlp", "aoti", "aoti_mlp"), one per recorded call, and throw std::invalid_argument
/// when a region is missing. The cache findings are about the workbook's own SpecialisationCache,
/// and say so: they are evidence about our emulation, never about Dynamo.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "workbook/findings/finding.h"

namespace workbook::findings06 {

/// The cpu_op events beneath the first region named `region`, counted per name: one call's ops.
std::map<std::string, std::size_t> ops_of_first_call(const Profile& profile, std::string_view region);

/// Every eager Linear call runs one aten::t; every compiled call runs one aten::addmm and no aten::t.
Finding transpose_eliminated(const Profile& eager, const Profile& compiled);

/// Every compiled MLP call runs 3 aten::mm and one workbook::fused_gelu_mul, no aten::gelu or aten::mul.
Finding mlp_fused(const Profile& compiled);

/// What removing aten::t did to the host time per call in this run, said either way, from
/// interleaved rounds (µs per call, eager's and compiled's of the same round side by side): faster
/// only when the compiled call was faster in every round (with 9 rounds, a sign test's 1 in 256
/// chance if the two were equal), by the median of the per-round differences. Printed as
/// narration: timing is never a claim's verdict.
std::string host_time_saved(const std::vector<double>& eager_rounds_us, const std::vector<double>& compiled_rounds_us);

/// AOTInductor's Linear and MLP calls run no aten::t.
Finding aoti_runs_no_transpose(const Profile& linear, const Profile& mlp);

/// AOTInductor's outputs equal eager's: largest differences within 1e-4 (the MLP's relative to its
/// largest output when that exceeds 1).
Finding aoti_equals_eager(double linear_difference, double mlp_difference, double mlp_largest_output);

/// Every AOTInductor MLP call runs one generated kernel (an op named cpp_fused_*) and no aten::gelu
/// or aten::mul.
Finding aoti_fused_gelu_mul(const Profile& mlp);

/// The generated MLP code calls the C shim aoti_torch_cpu_mm_out three times and the profile of
/// its calls has no aten::mm: the GEMMs run below the dispatcher, where the profiler's hooks sit.
Finding aoti_gemms_below_the_dispatcher(std::string_view generated_code, const Profile& mlp);

/// Our SpecialisationCache's entries after each call of lesson 06's sequence of inputs.
struct CacheWalk {
  bool all_equal_eager = false;  ///< every call returned what eager returned
  int after_repeat = 0;          ///< after the first call and the same input again
  int after_batch = 0;           ///< after the first new batch size
  int after_second_batch = 0;    ///< after another batch size
  int after_transposed = 0;      ///< after a transposed (non-contiguous) input
  int after_update = 0;          ///< after an in-place update of the weight
  int after_replace = 0;         ///< after the weight was replaced by a new tensor
};

/// Every call through our cache returned what eager returned.
Finding cache_equals_eager(const CacheWalk& walk);

/// Our cache: a batch change adds one entry; a second batch size reuses it (the dimension is dynamic).
Finding batch_becomes_dynamic(const CacheWalk& walk);

/// Our cache: a transposed input adds an entry of its own (layout is guarded).
Finding layout_is_guarded(const CacheWalk& walk);

/// Our cache: an in-place update of the weight adds no entry; replacing the weight adds one.
Finding in_place_update_keeps_entry(const CacheWalk& walk);

}  // namespace workbook::findings06
