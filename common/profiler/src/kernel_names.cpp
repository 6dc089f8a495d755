// Kernel names, read like a fingerprint. Each family is recognised by a pattern its generator is
// documented (or seen in the articles' and stored traces) to use; the fields are only those the
// pattern fixes. Anything else stays "unknown".
#include "workbook/profiler/kernel_names.h"

#include <fmt/format.h>

#include <map>
#include <regex>

namespace workbook {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// Tensor-core MMA shapes as cuBLAS and CUTLASS spell them ("16816" is m16 n8 k16).
std::string mma_shape(const std::string& digits) {
  static const std::map<std::string, std::string> shapes{{"884", "8x8x4"},     {"1688", "16x8x8"},
                                                         {"16816", "16x8x16"}, {"16832", "16x8x32"},
                                                         {"8816", "8x8x16"},   {"16864", "16x8x64"}};
  const auto it = shapes.find(digits);
  return it == shapes.end() ? digits : it->second;
}

// The accumulator letter before the MMA shape: s single, h half, d double, i integer.
std::string accumulator(char letter) {
  switch (letter) {
    case 's':
      return "FP32";
    case 'h':
      return "FP16";
    case 'd':
      return "FP64";
    case 'i':
      return "INT32";
    default:
      return std::string(1, letter);
  }
}

// The identifier a C++ kernel signature names: "void ns::f<...>(...)" -> "f".
std::string function_of(std::string_view name) {
  std::string text(name);
  for (std::size_t at; (at = text.find("(anonymous namespace)::")) != std::string::npos;)
    text.erase(at, std::string_view("(anonymous namespace)::").size());
  std::string_view s = text;
  if (s.rfind("void ", 0) == 0) s.remove_prefix(5);
  const auto cut = s.find_first_of("<(");
  if (cut != std::string_view::npos) s = s.substr(0, cut);
  const auto colon = s.rfind("::");
  if (colon != std::string_view::npos) s.remove_prefix(colon + 2);
  return std::string(s);
}

bool decode_cublas(const std::string& n, KernelName& k) {
  static const std::regex tensor_core(
      R"(^(ampere|volta|turing|hopper|sm\d+)_(?:([a-z]+\d*)_)?([shdi])(\d{3,5})gemm_(?:([a-z]+\d*)_)?(\d+x\d+)_.*?(?:stages_(\d+x\d+)_)?(nn|nt|tn|tt)$)");
  static const std::regex cuda_core(
      R"(^(ampere|volta|turing|hopper|maxwell|pascal|sm\d+)_([a-z]*gemm)_(\d+x\d+)_.*?(nn|nt|tn|tt)$)");
  std::smatch m;
  if (std::regex_match(n, m, tensor_core)) {
    k.family = "cuBLAS GEMM (tensor cores)";
    k.fields = {{"architecture", m[1]}};
    if (m[2].matched) k.fields.emplace_back("inputs", m[2]);
    k.fields.insert(k.fields.end(), {{"accumulator", accumulator(m.str(3)[0])}, {"MMA", mma_shape(m[4])}});
    if (m[5].matched) k.fields.emplace_back("output", m[5]);
    k.fields.emplace_back("tile", m[6]);
    if (m[7].matched) k.fields.emplace_back("stages", m[7]);
    k.fields.emplace_back("layout", m[8]);
    return true;
  }
  if (std::regex_match(n, m, cuda_core)) {
    k.family = m.str(2) == "sgemm" ? "cuBLAS SGEMM (CUDA cores, FP32)" : "cuBLAS " + m.str(2) + " (CUDA cores)";
    k.fields = {{"architecture", m[1]}, {"tile", m[3]}, {"layout", m[4]}};
    return true;
  }
  return false;
}

bool decode_xmma(const std::string& n, KernelName& k) {
  static const std::regex xmma(R"(^sm(\d+)_xmma_([a-z]+)_.*)");
  std::smatch m;
  if (!std::regex_match(n, m, xmma)) return false;
  k.family = "XMMA kernel (cuBLASLt / cuDNN)";
  k.fields = {{"architecture", "sm_" + m.str(1)}, {"operation", m[2]}};
  static const std::regex tile(R"(tilesize(\d+x\d+x\d+))"), stage(R"(stage(\d+))"), mma(R"(tensor(\d+x\d+x\d+))");
  if (std::regex_search(n, m, tile)) k.fields.emplace_back("tile", m[1]);
  if (std::regex_search(n, m, stage)) k.fields.emplace_back("stages", m[1]);
  if (std::regex_search(n, m, mma)) k.fields.emplace_back("MMA", m[1]);
  return true;
}

bool decode_cutlass(const std::string& n, KernelName& k) {
  static const std::regex gemm(
      R"(cutlass_(\d+)_(tensorop|simt|wmma)_(?:(\w+?)_)?([shdi])(\d{3,5})gemm_(?:\w+?_)?(\d+x\d+)_(\d+x\d+)_(nn|nt|tn|tt)(?:_align(\d+))?)");
  std::smatch m;
  if (std::regex_search(n, m, gemm)) {
    k.family = m.str(2) == "tensorop" ? "CUTLASS GEMM (tensor cores)" : "CUTLASS GEMM";
    k.fields = {{"architecture", "sm_" + m.str(1)}};
    if (m[3].matched) k.fields.emplace_back("inputs", m[3]);
    k.fields.insert(k.fields.end(), {{"accumulator", accumulator(m.str(4)[0])},
                                     {"MMA", mma_shape(m[5])},
                                     {"tile", m[6]},
                                     {"k tile x stages", m[7]},
                                     {"layout", m[8]}});
    if (m[9].matched) k.fields.emplace_back("alignment", m[9]);
    return true;
  }
  if (!contains(n, "cutlass")) return false;
  k.family = "CUTLASS kernel";
  return true;
}

bool decode_attention(const std::string& n, KernelName& k) {
  static const std::regex fmha(R"(fmha_cutlass([FB])_(\w+?)_(aligned_|notaligned_)?(\d+x\d+)(?:_(rf))?_sm(\d+))");
  static const std::regex cudnn_flash(R"(cudnn_generated_\w*?_flash_(fprop|bprop)\w*?_knob_(\d+)_(\d+x\d+x\d+))");
  std::smatch m;
  if (std::regex_search(n, m, fmha)) {
    k.family = "memory-efficient attention (xformers FMHA on CUTLASS)";
    k.fields = {{"pass", m.str(1) == "F" ? "forward" : "backward"}, {"dtype", m[2]}};
    if (m[3].matched) k.fields.emplace_back("alignment", m.str(3) == "aligned_" ? "aligned" : "not aligned");
    k.fields.emplace_back("tile", m[4]);
    if (m[5].matched) k.fields.emplace_back("accumulator in", "registers (rf)");
    k.fields.emplace_back("architecture", "sm_" + m.str(6));
    return true;
  }
  if (contains(n, "pytorch_flash::flash_fwd") || contains(n, "pytorch_flash::flash_bwd")) {
    k.family = "FlashAttention-2 (PyTorch's vendored copy)";
    k.fields = {{"pass", contains(n, "flash_fwd") ? "forward" : "backward"}};
    return true;
  }
  if (std::regex_search(n, m, cudnn_flash)) {
    k.family = "cuDNN flash attention (generated per problem)";
    k.fields = {{"pass", m.str(1) == "fprop" ? "forward" : "backward"}, {"engine knob", m[2]}, {"tile", m[3]}};
    return true;
  }
  return false;
}

bool decode_triton(const std::string& n, KernelName& k) {
  static const std::regex triton(R"(^triton_(poi|red|per|tem)_(?:fused_)?(.*?)_(\d+)$)");
  std::smatch m;
  if (!std::regex_match(n, m, triton)) return false;
  static const std::map<std::string, std::string> kinds{{"poi", "Triton pointwise (Inductor)"},
                                                        {"red", "Triton reduction (Inductor)"},
                                                        {"per", "Triton persistent reduction (Inductor)"},
                                                        {"tem", "Triton template (Inductor)"}};
  k.family = kinds.at(m[1]);
  std::string ops = m[2];
  for (auto& c : ops)
    if (c == '_') c = ' ';
  k.fields = {{"named after", ops}, {"kernel number", m[3]}};
  return true;
}

bool decode_aten(const std::string& n, KernelName& k) {
  if (!contains(n, "at::native::")) return false;
  std::smatch m;
  static const std::regex functor(R"(CUDAFunctor_(\w+?)<)");
  const std::string function = function_of(n);
  if (function == "vectorized_elementwise_kernel" || function == "elementwise_kernel" ||
      function == "unrolled_elementwise_kernel") {
    k.family = "ATen elementwise";
    if (std::regex_search(n, m, functor))
      k.fields.emplace_back("op", m[1]);
    else if (contains(n, "FillFunctor"))
      k.fields.emplace_back("op", "fill");
    else if (contains(n, "launch_clamp_scalar"))
      k.fields.emplace_back("op", "clamp");
    static const std::regex cuda_kernel(R"(::(\w+?)(?:_kernel_cuda|_cuda_kernel|_kernel_impl)\b)");
    if (k.fields.empty() && std::regex_search(n, m, cuda_kernel)) k.fields.emplace_back("op", m[1]);
    if (function == "vectorized_elementwise_kernel") {
      static const std::regex width(R"(vectorized_elementwise_kernel<(\d+),)");
      if (std::regex_search(n, m, width)) k.fields.emplace_back("elements per access", m[1]);
    }
    return true;
  }
  if (function == "reduce_kernel") {
    k.family = "ATen reduction";
    if (contains(n, "sum_functor")) k.fields.emplace_back("op", "sum");
    if (contains(n, "MeanOps")) k.fields.emplace_back("op", "mean");
    return true;
  }
  k.family = "ATen kernel";
  k.fields = {{"function", function}};
  return true;
}

bool decode_cudnn(const std::string& n, KernelName& k) {
  if (n.rfind("cudnn_", 0) == 0 || contains(n, "cudnn::") || contains(n, "cask_cudnn::")) {
    k.family = "cuDNN kernel";
    if (n.rfind("void ", 0) == 0) k.fields = {{"function", function_of(n)}};
    return true;
  }
  if (contains(n, "cublasLtEpilogue_t")) {
    k.family = "cuBLASLt epilogue (a separate pass over the output)";
    return true;
  }
  return false;
}

bool decode_tensile(const std::string& n, KernelName& k) {
  static const std::regex tensile(R"(^Cijk_A([a-z]+)_B([a-z]+)_.*?_MT(\d+x\d+x\d+)(?:_MI(\d+x\d+x\d+))?(?:_.*)?$)");
  std::smatch m;
  if (!std::regex_match(n, m, tensile)) return false;
  k.family = "ROCm Tensile GEMM (rocBLAS / hipBLASLt)";
  // Index names: i, j the output's, l the summation, k the batch. A "ilk" is A not transposed.
  const bool a_t = m.str(1) == "lik", b_t = m.str(2) == "jlk";
  k.fields = {{"layout", std::string(a_t ? "t" : "n") + (b_t ? "t" : "n")}, {"macro tile", m[3]}};
  if (m[4].matched) k.fields.emplace_back("matrix instruction", m[4]);
  static const std::regex isa(R"(_ISA(\w+?)_)");
  if (std::regex_search(n, m, isa)) k.fields.emplace_back("ISA", "gfx" + m.str(1));
  return true;
}

}  // namespace

std::string KernelName::describe_fields() const {
  std::string out;
  for (const auto& [key, value] : fields) out += fmt::format("{}{} {}", out.empty() ? "" : " · ", key, value);
  return out;
}

KernelName decode_kernel_name(std::string_view name) {
  // The patterns read a name's first 512 bytes: generated names are far shorter, and the fields an
  // ATen signature gives sit at its start. libstdc++'s std::regex recurses once per character and
  // backtracks over lazy runs, so an unbounded name (a hostile trace) would overflow the stack or
  // take minutes.
  constexpr std::size_t decoded_prefix = 512;
  const std::string n(name.substr(0, decoded_prefix));
  KernelName k;
  // Attention before CUTLASS (FMHA names hold "cutlass"), cuBLAS before cuDNN.
  for (auto decode : {decode_attention, decode_triton, decode_cublas, decode_xmma, decode_cutlass, decode_tensile,
                      decode_aten, decode_cudnn})
    if (decode(n, k)) return k;
  k.family = "unknown";
  k.fields.clear();
  return k;
}

}  // namespace workbook
