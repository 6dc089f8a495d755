#include "workbook/compile.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace workbook {

GuardFailure::GuardFailure(std::string guard, const std::string& detail)
    : std::runtime_error("guard '" + guard + "' failed: " + detail), guard_(std::move(guard)) {}

Guards::Guards(const torch::Tensor& example, c10::ArrayRef<torch::Tensor> weights, std::vector<bool> dynamic)
    : dtype_(example.scalar_type()),
      device_(example.device()),
      sizes_(example.sizes().vec()),
      dynamic_(std::move(dynamic)),
      contiguous_(example.is_contiguous()) {
  dynamic_.resize(sizes_.size(), false);
  for (const auto& w : weights) {
    weight_identity_.push_back(w.unsafeGetTensorImpl());
    weight_sizes_.push_back(w.sizes().vec());
  }
}

int Guards::failed_size_dim(const torch::Tensor& x) const {
  if (x.dim() != std::int64_t(sizes_.size())) return -1;
  for (std::size_t d = 0; d < sizes_.size(); ++d)
    if (!dynamic_[d] && x.size(std::int64_t(d)) != sizes_[d]) return int(d);
  return -1;
}

const char* Guards::failed_guard(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const {
  if (x.scalar_type() != dtype_) return "dtype";
  if (x.device() != device_) return "device";
  if (x.dim() != std::int64_t(sizes_.size())) return "rank";
  if (failed_size_dim(x) >= 0) return "size";
  if (x.is_contiguous() != contiguous_) return "strides";
  if (weights.size() != weight_identity_.size()) return "weight identity";
  for (std::size_t i = 0; i < weights.size(); ++i)
    if (weights[i].unsafeGetTensorImpl() != weight_identity_[i] || weights[i].sizes().vec() != weight_sizes_[i])
      return "weight identity";
  return nullptr;
}

std::string Guards::describe(const char* guard, const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const {
  const std::string g = guard;
  if (g == "dtype") return fmt::format("specialised for {}, called with {}", c10::toString(dtype_), c10::toString(x.scalar_type()));
  if (g == "device") return fmt::format("specialised for {}, called with {}", device_.str(), x.device().str());
  if (g == "rank") return fmt::format("specialised for {} dimensions, called with {}", sizes_.size(), x.dim());
  if (g == "size") {
    const int d = failed_size_dim(x);
    return fmt::format("specialised for size {} in dimension {}, called with {}", sizes_[std::size_t(d)], d, x.size(d));
  }
  if (g == "strides")
    return fmt::format("specialised for a {} input, called with strides [{}]", contiguous_ ? "contiguous" : "non-contiguous",
                       fmt::join(x.strides(), ", "));
  (void)weights;
  return "a parameter is not the tensor the code was specialised for (it was replaced)";
}

std::string Guards::first_failure(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const {
  const char* guard = failed_guard(x, weights);
  return guard ? guard : "";
}

void Guards::check(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const {
  if (const char* guard = failed_guard(x, weights)) throw GuardFailure(guard, describe(guard, x, weights));
}

SpecialisationCache::SpecialisationCache(CacheOptions options) : options_(options) {}

std::optional<std::size_t> SpecialisationCache::lookup(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) {
  for (std::size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].first_failure(x, weights).empty()) return i;
  if (entries_.empty()) {
    entries_.emplace_back(x, weights);
    last_reason_ = "first call";
    return 0;
  }
  // The closest entry: the one whose first broken guard comes latest in checking order (a new
  // batch breaks "size" on an entry whose dtype, device and rank all hold). Its failure is the
  // reason for the new entry, and its dynamic dimensions carry over.
  static const std::vector<std::string> order{"dtype", "device", "rank", "size", "strides", "weight identity"};
  auto rank_of = [&](const Guards& g) {
    return std::find(order.begin(), order.end(), g.first_failure(x, weights)) - order.begin();
  };
  const Guards& last = *std::max_element(entries_.begin(), entries_.end(),
                                         [&](const Guards& a, const Guards& b) { return rank_of(a) < rank_of(b); });
  if (options_.stance == RecompileStance::fail_on_recompile) last.check(x, weights);
  if (int(entries_.size()) >= options_.cache_size_limit) {
    if (fallbacks_++ == 0)
      fmt::print(stderr, "warning: cache_size_limit ({}) reached: running eager from now on for new inputs\n",
                 options_.cache_size_limit);
    return std::nullopt;
  }
  std::vector<bool> dynamic = last.dynamic();
  const std::string failed = last.first_failure(x, weights);
  last_reason_ = failed;
  // Dynamo's automatic dynamic shapes: a dimension whose size changed is compiled dynamic.
  if (failed == "size" && options_.automatic_dynamic_shapes) {
    const int d = last.failed_size_dim(x);
    last_reason_ = fmt::format("size of dim {} changed, now dynamic", d);
    dynamic[std::size_t(d)] = true;
  }
  if (dynamic.size() != std::size_t(x.dim())) dynamic.assign(std::size_t(x.dim()), false);
  entries_.emplace_back(x, weights, dynamic);
  return entries_.size() - 1;
}

namespace {

// exp(t) without a library call, so the loop around it vectorises: t = n ln 2 + r with |r| <= ln 2 / 2
// (Cody-Waite, two constants), e^r by Cephes' expf polynomial (about 1 ulp), 2^n put straight
// into the exponent bits. Only the exponent is clamped (to the normal range, NaN to the low end):
// clamping t itself lets GCC constant-fold the clamped branch and compute every division twice.
inline float exp_branch_free(float t) {
  // Round t / ln 2 to the nearest integer with the 1.5 * 2^23 trick (no rounding call needed).
  const float n = (t * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (t - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.0f;
  float k = n >= -126.0f ? n : -126.0f;  // plain selects: min/max instructions, no branches
  k = k <= 127.0f ? k : 127.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(k) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return er * scale;
}

// gelu_tanh(a) * b for one element, as x * sigmoid(2u) = x / (1 + e^(-2u)) with
// u = sqrt(2/pi) (x + 0.044715 x^3): the same function as 0.5 x (1 + tanh(u)), but without the
// cancellation of 1 + tanh(u) for negative x, so it stays within a few ulp of the exact value
// everywhere (eager's float formula loses digits below x = -2).
inline float gelu_tanh_mul(float x, float y) {
  const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return x * y / (1.0f + exp_branch_free(-2.0f * u));
}

// The loop over a range, compiled twice where GCC or Clang targets x86-64: for AVX2 + FMA (8
// floats per instruction) and for the baseline (SSE2, 4); the loader picks the clone the CPU runs.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
void gelu_tanh_mul_range(const float* __restrict x, const float* __restrict y, float* __restrict z, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) z[i] = gelu_tanh_mul(x[i], y[i]);
}

}  // namespace

torch::Tensor fused_gelu_mul(const torch::Tensor& a, const torch::Tensor& b) {
  RECORD_FUNCTION("workbook::fused_gelu_mul", std::vector<c10::IValue>({a, b}));
  const bool fast = a.device().is_cpu() && a.scalar_type() == c10::ScalarType::Float && b.scalar_type() == a.scalar_type() &&
                    a.sizes() == b.sizes() && a.is_contiguous() && b.is_contiguous();
  if (!fast) return torch::gelu(a, "tanh") * b;
  torch::Tensor out = torch::empty_like(a);
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* po = out.data_ptr<float>();
  // Chunks of 32768 elements (128 KiB per operand) across the intra-op threads.
  at::parallel_for(0, a.numel(), 32768, [&](std::int64_t begin, std::int64_t end) {
    gelu_tanh_mul_range(pa + begin, pb + begin, po + begin, end - begin);
  });
  return out;
}

}  // namespace workbook
