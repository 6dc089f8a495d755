#pragma once
// Stand-in for libkineto's ActivityType.h, used only when the LibTorch installation lacks it
// (Debian 12's libtorch-dev is built without Kineto but its profiler headers still include
// this file). It declares the enum those headers name; nothing in the workbook relies on the
// numeric values, only on the names.
namespace libkineto {
enum class ActivityType {
  CPU_OP = 0,
  USER_ANNOTATION,
  GPU_USER_ANNOTATION,
  GPU_MEMCPY,
  GPU_MEMSET,
  CONCURRENT_KERNEL,
  EXTERNAL_CORRELATION,
  CUDA_RUNTIME,
  CUDA_PROFILER_RANGE,
  GLOW_RUNTIME,
  CPU_INSTANT_EVENT,
  PYTHON_FUNCTION,
  OVERHEAD,
  ENUM_COUNT
};
}  // namespace libkineto
