// Kernel names from the articles and the stored traces, decoded; a name of an unknown family is
// "unknown", never a guess.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/kernel_names.h"

using workbook::decode_kernel_name;

namespace {

std::string field(const workbook::KernelName& k, const std::string& key) {
  for (const auto& [name, value] : k.fields)
    if (name == key) return value;
  return "(none)";
}

}  // namespace

TEST_CASE("cuBLAS's tensor-core GEMM from Part 1: architecture, dtypes, MMA shape, tile, stages, layout") {
  const auto k = decode_kernel_name("ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nn");
  CHECK(k.family == "cuBLAS GEMM (tensor cores)");
  CHECK(field(k, "architecture") == "ampere");
  CHECK(field(k, "inputs") == "bf16");
  CHECK(field(k, "accumulator") == "FP32");
  CHECK(field(k, "MMA") == "16x8x16");
  CHECK(field(k, "output") == "bf16");
  CHECK(field(k, "tile") == "128x256");
  CHECK(field(k, "stages") == "64x3");
  CHECK(field(k, "layout") == "nn");
  const auto volta = decode_kernel_name("volta_h884gemm_64x128_ldg8_nn");
  CHECK(volta.family == "cuBLAS GEMM (tensor cores)");
  CHECK(field(volta, "accumulator") == "FP16");
  CHECK(field(volta, "MMA") == "8x8x4");
  CHECK(field(volta, "inputs") == "(none)");
}

TEST_CASE("SGEMM on CUDA cores (Part 3's math path) and the stored AlexNet trace's GEMMs") {
  const auto k = decode_kernel_name("ampere_sgemm_32x32_sliced1x4_tn");
  CHECK(k.family == "cuBLAS SGEMM (CUDA cores, FP32)");
  CHECK(field(k, "tile") == "32x32");
  CHECK(field(k, "layout") == "tn");
  const auto x = decode_kernel_name(
      "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_"
      "warpsize2x2x1_g1_tensor16x8x8_alignc4_execute_kernel");
  CHECK(x.family == "XMMA kernel (cuBLASLt / cuDNN)");
  CHECK(field(x, "operation") == "fprop");
  CHECK(field(x, "tile") == "128x128x16");
  CHECK(field(x, "MMA") == "16x8x8");
}

TEST_CASE("CUTLASS GEMMs, from the stored backward trace and Part 2") {
  const auto k = decode_kernel_name("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>");
  CHECK(k.family == "CUTLASS GEMM (tensor cores)");
  CHECK(field(k, "architecture") == "sm_80");
  CHECK(field(k, "MMA") == "16x8x8");
  CHECK(field(k, "tile") == "128x128");
  CHECK(field(k, "k tile x stages") == "32x3");
  CHECK(field(k, "layout") == "nn");
  CHECK(field(k, "alignment") == "4");
  const auto relu = decode_kernel_name("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8");
  CHECK(field(relu, "inputs") == "bf16");
  CHECK(field(relu, "tile") == "64x64");
  CHECK(field(relu, "layout") == "tn");
}

TEST_CASE("Part 3's attention kernels: efficient, flash and cuDNN") {
  const auto efficient = decode_kernel_name("fmha_cutlassF_bf16_aligned_64x64_rf_sm80");
  CHECK(efficient.family == "memory-efficient attention (xformers FMHA on CUTLASS)");
  CHECK(efficient.describe_fields() ==
        "pass forward · dtype bf16 · alignment aligned · tile 64x64 · accumulator in registers (rf) · architecture "
        "sm_80");
  const auto flash = decode_kernel_name(
      "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
      "cutlass::bfloat16_t>, "
      "false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)");
  CHECK(flash.family == "FlashAttention-2 (PyTorch's vendored copy)");
  CHECK(field(flash, "pass") == "forward");
  const auto cudnn =
      decode_kernel_name("cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_6_64x64x64_4x1x1_kernel0_0");
  CHECK(cudnn.family == "cuDNN flash attention (generated per problem)");
  CHECK(field(cudnn, "engine knob") == "6");
  CHECK(field(cudnn, "tile") == "64x64x64");
}

TEST_CASE("Triton kernels are named after what Inductor fused") {
  const auto k = decode_kernel_name("triton_poi_fused_add_cos_sin_0");
  CHECK(k.family == "Triton pointwise (Inductor)");
  CHECK(field(k, "named after") == "add cos sin");
  CHECK(decode_kernel_name("triton_red_fused__softmax_1").family == "Triton reduction (Inductor)");
  CHECK(decode_kernel_name("triton_per_fused_sum_2").family == "Triton persistent reduction (Inductor)");
}

TEST_CASE("ATen's own kernels: elementwise with their op, reductions, the rest by function") {
  const auto add = decode_kernel_name(
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, "
      "3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)");
  CHECK(add.family == "ATen elementwise");
  CHECK(field(add, "op") == "add");
  CHECK(field(add, "elements per access") == "4");
  CHECK(field(decode_kernel_name("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<"
                                 "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}>"),
              "op") == "direct_copy");
  CHECK(decode_kernel_name("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
                           "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >")
            .describe_fields() == "op mean");
  const auto pool = decode_kernel_name(
      "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, long)");
  CHECK(pool.family == "ATen kernel");
  CHECK(field(pool, "function") == "max_pool_forward_nchw");
}

TEST_CASE("ROCm's Tensile GEMMs: layout, macro tile, matrix instruction, ISA") {
  const auto k = decode_kernel_name(
      "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_EPS0_"
      "GRVWA2_GRVWB2_GSUAMB_ISA90a_IU1_K1_LBSPPA1");
  CHECK(k.family == "ROCm Tensile GEMM (rocBLAS / hipBLASLt)");
  CHECK(field(k, "layout") == "tn");
  CHECK(field(k, "macro tile") == "64x16x32");
  CHECK(field(k, "matrix instruction") == "16x16x1");
  CHECK(field(k, "ISA") == "gfx90a");
  CHECK(field(decode_kernel_name("Cijk_Ailk_Bjlk_SB_MT64x16x16_MI16x16x1_SN"), "layout") == "nt");
}

TEST_CASE("an unknown name is unknown, with no fields: never a guess") {
  for (const char* name : {"my_custom_kernel", "gemm", "void foo<int>(int)", "", "ampere_", "triton_poi_"}) {
    CAPTURE(name);
    const auto k = decode_kernel_name(name);
    CHECK(k.family == "unknown");
    CHECK(k.fields.empty());
  }
}

TEST_CASE("a hostile name of 100 000 characters after each family's prefix is read, not a crash") {
  // The patterns read the first 512 bytes: std::regex recursed per character and overflowed the
  // stack at ~30 000 (a fresh attack's `trace --kernels` on one long name: SIGSEGV).
  for (const char* prefix : {"ampere_", "volta_", "sm90_xmma_gemm_", "fmha_cutlassF_", "cudnn_generated_",
                             "triton_poi_", "triton_poi_fused_", "Cijk_Aa_Bb_", "cutlass_80_tensorop_",
                             "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_"}) {
    CAPTURE(prefix);
    const std::string name = std::string(prefix) + std::string(100000, 'x');
    CHECK_FALSE(decode_kernel_name(name).family.empty());
  }
  // A Tensile-like name whose lazy runs backtracked for seconds at 16 KB (worse than quadratic).
  std::string repeated = "Cijk_Aa_Bb_1";
  for (int i = 0; i < 1000; ++i) repeated += "_MT1x1x1_MI1x1x1";
  CHECK_FALSE(decode_kernel_name(repeated + "\n").family.empty());
}

TEST_CASE("every kernel of the stored GPU traces gets a family, and the known ones are not 'unknown'") {
  std::set<std::string> unknown;
  std::size_t kernels = 0;
  for (const char* trace :
       {"alexnet_cuda.json", "backward_thread.json", "rocm_minitoy_train.json", "triton_example.json"}) {
    const auto p = workbook::load_chrome_trace(std::string(WORKBOOK_TEST_DATA) + "/traces/" + trace);
    for (const auto& e : p.events())
      if (e.category == workbook::Category::kernel && e.work == workbook::DeviceWork::kernel) {
        ++kernels;
        if (decode_kernel_name(e.name).family == "unknown") unknown.insert(std::string(e.name));
      }
  }
  CHECK(kernels > 0);
  // The AlexNet trace's cuDNN FFT convolution kernels carry only cuDNN types in their arguments.
  for (const auto& name : unknown) CHECK_MESSAGE(name.rfind("void fft2d_", 0) == 0, name);
}
