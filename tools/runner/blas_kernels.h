#pragma once
// The OpenBLAS kernels worth trying on this CPU, from its instruction-set flags: what the probe
// times (tools/blas_probe.cpp) and the only choices the runner accepts from its cache (a kernel the
// CPU cannot run dies with SIGILL).
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace runner {

/// "Cooperlake", "SkylakeX", "Haswell": those whose instructions /proc/cpuinfo's flags list.
inline std::vector<std::string> blas_kernel_candidates() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0) {
      flags = line + " ";
      break;
    }
  std::vector<std::string> out;
  if (flags.find(" avx512_bf16 ") != std::string::npos) out.push_back("Cooperlake");
  if (flags.find(" avx512f ") != std::string::npos) out.push_back("SkylakeX");
  if (flags.find(" avx2 ") != std::string::npos) out.push_back("Haswell");
  return out;
}

/// True when `kernel` is one of this CPU's candidates.
inline bool blas_kernel_runs_here(const std::string& kernel) {
  const auto allowed = blas_kernel_candidates();
  return std::find(allowed.begin(), allowed.end(), kernel) != allowed.end();
}

}  // namespace runner
