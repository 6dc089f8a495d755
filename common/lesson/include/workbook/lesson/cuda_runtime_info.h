#pragma once
/// \file
/// \brief What the CUDA runtime itself reports (for `./workbook doctor`), independent of
/// whether LibTorch was built with CUDA.

#include <string>

namespace workbook {

/// One line: the GPU (name, compute capability, memory), the driver's and the runtime's CUDA
/// versions; or why there is none ("no CUDA device found", "built without the CUDA Toolkit").
std::string describe_cuda_runtime();

}  // namespace workbook
