#include "workbook/support/compile.h"

#include "gelu_mul_kernel.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace workbook {

GuardFailure::GuardFailure(std::string guard, const std::string& detail)
    : std::runtime_error("guard '" + guard + "' failed: " + detail), guard_(std::move(guard)) {}

Guards::Guards(const torch::Tensor& example, c10::ArrayRef<torch::Tensor> weights, std::vector<bool> dynamic)
    : grad_mode_(c10::GradMode::is_enabled()),
      dtype_(example.scalar_type()),
      device_(example.device()),
      sizes_(example.sizes().vec()),
      dynamic_(std::move(dynamic)),
      contiguous_(example.is_contiguous()) {
  dynamic_.resize(sizes_.size(), false);
  requires_grad_.assign(1, example.requires_grad());
  for (const auto& w : weights) {
    requires_grad_.push_back(w.requires_grad());
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
  if (c10::GradMode::is_enabled() != grad_mode_) return "grad mode";
  if (x.scalar_type() != dtype_) return "dtype";
  if (x.device() != device_) return "device";
  if (x.dim() != std::int64_t(sizes_.size())) return "rank";
  if (failed_size_dim(x) >= 0) return "size";
  if (x.is_contiguous() != contiguous_) return "strides";
  if (weights.size() != weight_identity_.size()) return "weight identity";
  if (x.requires_grad() != requires_grad_[0]) return "requires_grad";
  for (std::size_t i = 0; i < weights.size(); ++i)  // as many as weight_identity_, checked above
    if (weights[i].requires_grad() != requires_grad_[i + 1]) return "requires_grad";
  for (std::size_t i = 0; i < weights.size(); ++i)
    if (weights[i].unsafeGetTensorImpl() != weight_identity_[i] || weights[i].sizes().vec() != weight_sizes_[i])
      return "weight identity";
  return nullptr;
}

std::string Guards::describe(const char* guard, const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const {
  const std::string g = guard;
  auto grad = [](bool on) { return on ? "grad mode on" : "grad mode off"; };
  if (g == "grad mode") return fmt::format("specialised with {}, called with {}", grad(grad_mode_), grad(!grad_mode_));
  if (g == "dtype")
    return fmt::format("specialised for {}, called with {}", c10::toString(dtype_), c10::toString(x.scalar_type()));
  if (g == "device") return fmt::format("specialised for {}, called with {}", device_.str(), x.device().str());
  if (g == "rank") return fmt::format("specialised for {} dimensions, called with {}", sizes_.size(), x.dim());
  if (g == "size") {
    const int d = failed_size_dim(x);
    return fmt::format("specialised for size {} in dimension {}, called with {}", sizes_[std::size_t(d)], d, x.size(d));
  }
  if (g == "strides")
    return fmt::format("specialised for a {} input, called with strides [{}]",
                       contiguous_ ? "contiguous" : "non-contiguous", fmt::join(x.strides(), ", "));
  if (g == "requires_grad") {
    std::vector<bool> now{x.requires_grad()};
    for (const auto& w : weights) now.push_back(w.requires_grad());
    std::vector<int> before(requires_grad_.begin(), requires_grad_.end()), after(now.begin(), now.end());
    return fmt::format("specialised for requires_grad [{}] (input, then each weight), called with [{}]",
                       fmt::join(before, ", "), fmt::join(after, ", "));
  }
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
  static const std::vector<std::string> order{"grad mode", "dtype",   "device",        "rank",
                                              "size",      "strides", "requires_grad", "weight identity"};
  auto rank_of = [&](const Guards& g) {
    return std::find(order.begin(), order.end(), g.first_failure(x, weights)) - order.begin();
  };
  const Guards& last = *std::max_element(entries_.begin(), entries_.end(),
                                         [&](const Guards& a, const Guards& b) { return rank_of(a) < rank_of(b); });
  if (options_.stance == RecompileStance::fail_on_recompile) last.check(x, weights);
  if (int(entries_.size()) >= options_.cache_size_limit) {
    if (fallbacks_++ == 0 && options_.warn_at_limit)
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

torch::Tensor fused_gelu_mul(const torch::Tensor& a, const torch::Tensor& b) {
  RECORD_FUNCTION("workbook::fused_gelu_mul", std::vector<c10::IValue>({a, b}));
  const bool records_autograd = c10::GradMode::is_enabled() && (a.requires_grad() || b.requires_grad());
  const bool fast = !records_autograd && a.device().is_cpu() && a.scalar_type() == c10::ScalarType::Float &&
                    b.scalar_type() == a.scalar_type() && a.sizes() == b.sizes() && a.is_contiguous() &&
                    b.is_contiguous();
  if (!fast) return torch::gelu(a, "tanh") * b;
  torch::Tensor out = torch::empty_like(a);
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* po = out.data_ptr<float>();
  // Chunks of 32768 elements (128 KiB per operand) across the intra-op threads.
  at::parallel_for(0, a.numel(), 32768, [&](std::int64_t begin, std::int64_t end) {
    detail::gelu_tanh_mul_range(pa + begin, pb + begin, po + begin, end - begin);
  });
  return out;
}

}  // namespace workbook
