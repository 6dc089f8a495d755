#pragma once
/// \file
/// \brief Exercise 03: view or copy? Decide it for any tensor operation, from the tensors and
/// from the profile.

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace exercises {

//! [contract]
/// What running one operation showed.
struct ViewOrCopy {
  bool is_view = false;                   ///< the verdict
  bool shares_storage = false;            ///< the output lives in the input's storage
  bool same_data_ptr = false;             ///< and starts at the same address (so never true for a copy,
                                          ///< not even of an empty tensor, where both addresses are null)
  std::vector<std::int64_t> out_strides;  ///< the output's strides, in elements
  std::int64_t copying_ops = 0;           ///< aten::copy_, aten::clone or aten::_to_copy beneath the call
  std::int64_t bytes_allocated = 0;       ///< bytes allocated beneath the call (profile_memory)
};

/// Runs `op(input)` once inside a workbook::Region named "op" in a profiling session that records
/// memory, and decides whether the result is a view of the input or a copy. Lesson 03 showed it
/// for aten::t; here it must hold for any op: t, permute, narrow, expand, reshape (on a
/// contiguous and on a transposed input), contiguous, clone. Careful: a view need not start at
/// the input's first element, and an op named "contiguous" need not copy anything.
///
/// The verdict must agree with both kinds of evidence: a view shares storage and nothing
/// beneath it copies or allocates; a copy does not share storage, and the profile shows the
/// copying op and the allocation.
ViewOrCopy view_or_copy(const std::function<torch::Tensor(const torch::Tensor&)>& op, const torch::Tensor& input);
//! [contract]

}  // namespace exercises
