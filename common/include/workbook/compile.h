#pragma once
/// \file
/// \brief What torch.compile does for a Linear, by hand: specialise once, check guards on every
/// call, and run a fused elementwise kernel.

#include <torch/types.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace workbook {

/// What to do when a call's input no longer matches what the code was specialised for.
enum class GuardPolicy {
  raise,      ///< throw GuardFailure naming the guard (the articles' Part 2)
  recompile,  ///< specialise again for the new input and count it (Dynamo's behaviour, Part 1)
};

/// A guard that failed: `guard()` is its name ("dtype", "device", "rank", "trailing size",
/// "strides", "weight version"), `what()` says what was expected and what came.
class GuardFailure : public std::runtime_error {
 public:
  /// A failure of `guard`; `detail` says what was expected and what came.
  GuardFailure(std::string guard, const std::string& detail);
  /// The name of the guard that failed.
  const std::string& guard() const { return guard_; }

 private:
  std::string guard_;
};

/// The facts a specialisation depends on, taken from an example input and the weights, and
/// checked on every call.
class Guards {
 public:
  Guards() = default;
  /// Records dtype, device, rank, trailing size and strides of `example`, and each weight's
  /// storage and version counter.
  Guards(const torch::Tensor& example, c10::ArrayRef<torch::Tensor> weights);

  /// Throws GuardFailure for the first guard that `x` or `weights` break.
  void check(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const;
  /// The name of the first guard broken, or "" when all hold.
  std::string first_failure(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const;

 private:
  // Checked on every call, so it stays cheap: no allocation unless a guard fails.
  const char* failed_guard(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const;
  std::string describe(const char* guard, const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const;
  c10::ScalarType dtype_ = c10::ScalarType::Float;
  c10::Device device_ = c10::Device(c10::DeviceType::CPU);
  std::int64_t rank_ = 0;
  std::int64_t trailing_ = 0;
  bool contiguous_ = true;
  std::vector<const void*> weight_storage_;
  std::vector<std::int64_t> weight_version_;
};

/// gelu_tanh(a) * b in one pass over memory: one op in the profile ("workbook::fused_gelu_mul"),
/// split across threads with at::parallel_for and vectorised by the compiler, for contiguous
/// float32 CPU tensors of one shape; anything else falls back to the two separate ops.
torch::Tensor fused_gelu_mul(const torch::Tensor& a, const torch::Tensor& b);

}  // namespace workbook
