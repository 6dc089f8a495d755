#pragma once
/// \file
/// \brief Lesson 03's findings: what nn::Linear runs in C++, and aten::t as a view.
///
/// The profile functions read the lesson's profile: regions named "linear_forward" around each
/// forward, and aten::t and aten::contiguous calls recorded with memory.

#include <cstdint>
#include <vector>

#include "workbook/findings/finding.h"

namespace workbook::findings03 {

/// C++'s nn::Linear forward (2-D input, bias) has no aten::linear and one aten::addmm per forward.
Finding linear_is_one_addmm(const Profile& profile);

/// No aten::add or aten::add_ beneath the forwards: the bias goes into addmm.
Finding bias_inside_addmm(const Profile& profile);

/// What inspecting W and W.t() showed, as plain values.
struct Transpose {
  bool same_storage = false;                                    ///< W.t() lives in W's storage
  const void* weight_data = nullptr;                            ///< W's first element
  const void* transpose_data = nullptr;                         ///< W.t()'s first element
  std::vector<std::int64_t> weight_strides, transpose_strides;  ///< in elements
};

/// W.t() is a view: the same storage, the same data pointer, the two strides swapped.
Finding transpose_is_view(const Transpose& seen);

/// Beneath every aten::t there are only views (aten::transpose, aten::as_strided) and no
/// allocation; at least one aten::t was recorded.
Finding t_runs_only_views(const Profile& profile);

/// Each aten::contiguous allocates at least `weight_bytes` and runs an aten::copy_.
Finding contiguous_copies_the_weight(const Profile& profile, std::int64_t weight_bytes);

}  // namespace workbook::findings03
