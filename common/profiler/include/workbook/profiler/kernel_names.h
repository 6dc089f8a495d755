#pragma once
/// \file
/// \brief What a GPU kernel's name says: its library or generator and, where the naming scheme is
/// known, the fields it encodes (architecture, data types, tensor-core instruction, tile, stages,
/// layout). A name of an unknown family is "unknown", never a guess.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace workbook {

/// A kernel name, decoded.
struct KernelName {
  std::string family;  ///< "cuBLAS GEMM (tensor cores)", "Triton pointwise", ... or "unknown"
  std::vector<std::pair<std::string, std::string>> fields;  ///< in the order the name gives them

  /// The fields as "key value · key value", or "" when there are none.
  std::string describe_fields() const;
};

/// Decodes the families the articles and the stored traces show: cuBLAS and cuBLASLt GEMMs
/// (tensor-core `<arch>_<in>_<acc><mma>gemm_<out>_<tile>_..._<layout>` and CUDA-core `sgemm`),
/// XMMA kernels, CUTLASS, memory-efficient attention (`fmha_cutlass*`), FlashAttention-2
/// (`pytorch_flash::flash_*`), cuDNN (including its generated flash attention), Triton kernels
/// from Inductor (`triton_poi_`, `triton_red_`, `triton_per_`, `triton_tem_`), ATen's elementwise,
/// reduction and other native kernels, and ROCm's Tensile GEMMs (`Cijk_*`).
KernelName decode_kernel_name(std::string_view name);

}  // namespace workbook
