// Lesson 07 in a build without the CUDA Toolkit (WORKBOOK_CUDA=OFF, or no nvcc): every entry
// point says so in one line, and the lesson prints it instead of running.
#include "07_bias_epilogue_gpu.h"

namespace lesson07 {

namespace {
[[noreturn]] void no_cuda() {
  throw NoGpu(
      "this build has no CUDA Toolkit (WORKBOOK_CUDA=OFF or no nvcc found): lesson 07 needs both nvcc and a CUDA GPU");
}
}  // namespace

GpuInfo require_gpu() { no_cuda(); }
const char* way_name(Way) { return "unavailable"; }
struct BiasGemm::State {};
BiasGemm::BiasGemm(int, int, int, unsigned) { no_cuda(); }
BiasGemm::~BiasGemm() = default;
void BiasGemm::run(Way) { no_cuda(); }
void BiasGemm::synchronize() { no_cuda(); }
double BiasGemm::sampled_relative_error(Way, int) { no_cuda(); }
std::vector<float> BiasGemm::times_us(Way, int, int) { no_cuda(); }

}  // namespace lesson07
