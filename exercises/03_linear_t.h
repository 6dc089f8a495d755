#pragma once
/// \file
/// \brief Exercise 03: aten::t is a metadata operation — prove it from the tensor and the profile.

#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "workbook/profile.h"

namespace exercises {

//! [contract]
/// The view facts of a tensor: how its elements are laid out over its storage.
struct ViewFacts {
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> strides;  ///< in elements
  std::int64_t storage_offset = 0;    ///< in elements
  const void* data = nullptr;         ///< address of the first element
  bool contiguous = false;
};

/// Reads the view facts of `tensor` (sizes(), strides(), storage_offset(), data_ptr(),
/// is_contiguous()).
ViewFacts view_facts(const torch::Tensor& tensor);

/// True when `a` and `b` are views over the same storage: nothing was copied between them.
bool same_storage(const torch::Tensor& a, const torch::Tensor& b);

/// True when the op `op` of `profile` moved no data: no event beneath it is a copying op
/// (aten::copy_, aten::clone, aten::contiguous, aten::_to_copy) and no allocation beneath it is
/// of `tensor_bytes` or more (memory events, recorded with profile_memory).
bool is_metadata_only(const workbook::Profile& profile, workbook::EventId op, std::int64_t tensor_bytes);
//! [contract]

}  // namespace exercises
