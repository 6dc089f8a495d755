#pragma once
/// \file
/// \brief Functions that compile for both the CPU and the GPU, so CUDA code can be checked on a
/// machine without one.

#include "workbook/lesson/not_implemented.h"

#if defined(__CUDACC__)
/// Marks a function for both the host and the device under nvcc; empty for a C++ compiler.
#define WORKBOOK_HOST_DEVICE __host__ __device__
#else
#define WORKBOOK_HOST_DEVICE
#endif

namespace workbook {

/// What an unfinished `WORKBOOK_HOST_DEVICE` exercise returns. On the CPU it throws
/// NotImplemented ("not implemented yet: `what`"); GPU code cannot throw, so on the device it
/// returns NaN, which the GPU checks report as "not implemented yet".
template <class T>
WORKBOOK_HOST_DEVICE T not_implemented_yet(const char* what) {
#if defined(__CUDA_ARCH__)
  (void)what;
  return static_cast<T>(__int_as_float(0x7fc00000));  // a quiet NaN
#else
  throw NotImplemented(what);
#endif
}

}  // namespace workbook
