#pragma once
/// \file
/// \brief What this machine runs the lessons with: what `./workbook doctor` prints.

#include <string>

namespace workbook {

/// The facts that go next to every measurement.
struct MachineInfo {
  std::string cpu_model;      ///< from /proc/cpuinfo
  int cores = 0;              ///< logical CPUs available to this process
  std::string torch_version;  ///< "1.13.1"
  std::string torch_library;  ///< path of the loaded libtorch_cpu
  bool kineto = false;        ///< LibTorch can save its own (Kineto) traces
  bool cuda = false;          ///< a CUDA device is usable
  std::string cuda_device;    ///< its name when known, "" otherwise
  std::string blas_library;   ///< path of the BLAS that provides sgemm_
  std::string blas_name;      ///< "OpenBLAS 0.3.21 ...", "reference BLAS", ...
  std::string blas_core;      ///< OpenBLAS's kernel ("Zen", "Haswell", "Prescott"), "" if unknown
  int blas_threads = 0;       ///< OpenBLAS threads, 0 when not OpenBLAS
  int torch_threads = 0;      ///< LibTorch intra-op threads
  std::string compiler;       ///< compiler that built the workbook
};

/// Collects the machine facts (runs a tiny profile once to learn whether Kineto is there).
MachineInfo machine_info();

/// One line for lesson output: "AMD EPYC, 2 cores · OpenBLAS (Zen) · 2 threads · LibTorch 1.13.1 · Kineto: no · CUDA: no".
std::string machine_line(const MachineInfo& info);

}  // namespace workbook
