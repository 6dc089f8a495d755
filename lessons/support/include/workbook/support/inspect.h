#pragma once
/// \file
/// \brief Looking inside a tensor: sizes, strides, offset, storage — what a view shares.

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace workbook {

/// What a tensor is, as a view over memory.
struct TensorView {
  std::vector<std::int64_t> sizes;    ///< elements along each dimension
  std::vector<std::int64_t> strides;  ///< in elements
  std::int64_t storage_offset = 0;    ///< in elements
  const void* data = nullptr;         ///< address of the first element
  const void* storage = nullptr;      ///< address of the storage's start
  std::int64_t storage_bytes = 0;     ///< size of the whole storage the view looks into
  bool contiguous = false;            ///< row-major without gaps
};

/// Reads the view facts of a tensor.
TensorView inspect(const torch::Tensor& tensor);

/// True when both tensors are views over the same storage (nothing was copied between them).
bool shares_storage(const torch::Tensor& a, const torch::Tensor& b);

/// "sizes [64, 32]  strides [32, 1]  offset 0  data 0x55d0...  contiguous", for printing.
std::string describe(const TensorView& view);

}  // namespace workbook
