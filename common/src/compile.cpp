#include "workbook/compile.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace workbook {

GuardFailure::GuardFailure(std::string guard, const std::string& detail)
    : std::runtime_error("guard '" + guard + "' failed: " + detail), guard_(std::move(guard)) {}

Guards::Guards(const torch::Tensor& example, c10::ArrayRef<torch::Tensor> weights)
    : dtype_(example.scalar_type()),
      device_(example.device()),
      rank_(example.dim()),
      trailing_(example.dim() > 0 ? example.size(-1) : 0),
      contiguous_(example.is_contiguous()) {
  for (const auto& w : weights) {
    weight_storage_.push_back(w.storage().data());
    weight_version_.push_back(w._version());
  }
}

const char* Guards::failed_guard(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const {
  if (x.scalar_type() != dtype_) return "dtype";
  if (x.device() != device_) return "device";
  if (x.dim() != rank_) return "rank";
  if (x.size(-1) != trailing_) return "trailing size";
  if (x.is_contiguous() != contiguous_) return "strides";
  for (std::size_t i = 0; i < weights.size() && i < weight_version_.size(); ++i)
    if (weights[i].storage().data() != weight_storage_[i] || weights[i]._version() != weight_version_[i])
      return "weight version";
  return nullptr;
}

std::string Guards::describe(const char* guard, const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const {
  const std::string g = guard;
  if (g == "dtype") return fmt::format("specialised for {}, called with {}", c10::toString(dtype_), c10::toString(x.scalar_type()));
  if (g == "device") return fmt::format("specialised for {}, called with {}", device_.str(), x.device().str());
  if (g == "rank") return fmt::format("specialised for {} dimensions, called with {}", rank_, x.dim());
  if (g == "trailing size")
    return fmt::format("specialised for a trailing size of {}, called with {}", trailing_, x.size(-1));
  if (g == "strides")
    return fmt::format("specialised for a {} input, called with strides [{}]", contiguous_ ? "contiguous" : "non-contiguous",
                       fmt::join(x.strides(), ", "));
  for (std::size_t i = 0; i < weights.size() && i < weight_version_.size(); ++i)
    if (weights[i].storage().data() != weight_storage_[i] || weights[i]._version() != weight_version_[i])
      return fmt::format("weight {} was replaced or updated in place (version {} -> {})", i, weight_version_[i],
                         weights[i]._version());
  return "";
}

std::string Guards::first_failure(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const {
  const char* guard = failed_guard(x, weights);
  return guard ? guard : "";
}

void Guards::check(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const {
  if (const char* guard = failed_guard(x, weights)) throw GuardFailure(guard, describe(guard, x, weights));
}

namespace {

// gelu_tanh(a) * b for one element. tanh is a clamped rational function (the [13/6]
// approximation Eigen uses, ~1e-7 relative error): multiply-adds and one division, which the
// compiler vectorises across the loop, where std::tanh would be a scalar library call.
inline float gelu_tanh_mul(float x, float y) {
  const float u = std::clamp(0.7978845608028654f * (x + 0.044715f * x * x * x), -7.90531110763549805f,
                             7.90531110763549805f);  // sqrt(2/pi) (x + 0.044715 x^3)
  const float u2 = u * u;
  float p = -2.76076847742355e-16f;
  p = p * u2 + 2.00018790482477e-13f;
  p = p * u2 - 8.60467152213735e-11f;
  p = p * u2 + 5.12229709037114e-08f;
  p = p * u2 + 1.48572235717979e-05f;
  p = p * u2 + 6.37261928875436e-04f;
  p = p * u2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * u2 + 1.18534705686654e-04f;
  q = q * u2 + 2.26843463243900e-03f;
  q = q * u2 + 4.89352518554385e-03f;
  return 0.5f * x * (1.0f + u * p / q) * y;
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
  at::parallel_for(0, a.numel(), 32768, [&](std::int64_t begin, std::int64_t end) {
    const float* __restrict x = pa;
    const float* __restrict y = pb;
    float* __restrict z = po;
    for (std::int64_t i = begin; i < end; ++i) z[i] = gelu_tanh_mul(x[i], y[i]);
  });
  return out;
}

}  // namespace workbook
