// Built without the CUDA Toolkit.
#include "workbook/lesson/cuda_runtime_info.h"

namespace workbook {

std::string describe_cuda_runtime() { return "built without the CUDA Toolkit (WORKBOOK_CUDA=OFF or no nvcc)"; }

}  // namespace workbook
