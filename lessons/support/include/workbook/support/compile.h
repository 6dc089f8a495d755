#pragma once
/// \file
/// \brief What torch.compile does for a Linear, by hand: specialise once, check guards on every
/// call, and run a fused elementwise kernel.

#include <torch/types.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace workbook {

/// What a cache miss does once something is compiled (Dynamo's stances,
/// torch.compiler.set_stance).
enum class RecompileStance {
  recompile,          ///< compile another entry (Dynamo's default)
  fail_on_recompile,  ///< throw GuardFailure instead: an opt-in, e.g. to prove a loop never recompiles
};

/// A guard that failed: `guard()` is its name ("grad mode", "dtype", "device", "rank", "size",
/// "strides", "requires_grad", "weight identity"), `what()` says what was expected and what came.
class GuardFailure : public std::runtime_error {
 public:
  /// A failure of `guard`; `detail` says what was expected and what came.
  GuardFailure(std::string guard, const std::string& detail);
  /// The name of the guard that failed.
  const std::string& guard() const { return guard_; }

 private:
  std::string guard_;
};

/// What one compiled entry of our cache guards: whether autograd records (Dynamo's global-state
/// guard on grad mode: an entry prepared without grad holds weight views that no gradient reaches
/// through), whether the input and each weight require grad (Dynamo's tensor guards check it: a
/// w.t() prepared from a frozen weight stays a leaf that no gradient reaches through once the
/// weight is unfrozen), the input's metadata as Dynamo does (dtype,
/// device, rank, every size unless that dimension is dynamic, its layout), and the identity of
/// each parameter (the same tensor object) with its metadata, because the prepared w.t() views
/// point at that tensor. Dynamo >= 2.5 guards parameters by their properties only, and their
/// address only under freezing (builder.py: mark_static_input(value, guard=is_parameter_freezing())).
/// Never values or version counters: an optimizer's in-place update must not recompile, and a
/// prepared w.t() is a view that sees it anyway.
class Guards {
 public:
  Guards() = default;
  /// Guards for inputs like `example` and these very `weights`; `dynamic[d]` true lets dimension
  /// d take any size.
  Guards(const torch::Tensor& example, c10::ArrayRef<torch::Tensor> weights, std::vector<bool> dynamic = {});

  /// Throws GuardFailure for the first guard that `x` or `weights` break.
  void check(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const;
  /// The name of the first guard broken, or "" when all hold.
  std::string first_failure(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const;
  /// The dimension whose size broke the "size" guard, or -1.
  int failed_size_dim(const torch::Tensor& x) const;
  /// Which dimensions are dynamic.
  const std::vector<bool>& dynamic() const { return dynamic_; }

 private:
  // Checked on every call, so it stays cheap: no allocation unless a guard fails.
  const char* failed_guard(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const;
  std::string describe(const char* guard, const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights) const;
  bool grad_mode_ = true;
  c10::ScalarType dtype_ = c10::ScalarType::Float;
  c10::Device device_ = c10::Device(c10::DeviceType::CPU);
  std::vector<std::int64_t> sizes_;
  std::vector<bool> dynamic_;
  bool contiguous_ = true;
  std::vector<bool> requires_grad_{false};  ///< the input's, then each weight's
  std::vector<const c10::TensorImpl*> weight_identity_;
  std::vector<std::vector<std::int64_t>> weight_sizes_;
};

/// How the cache of compiled entries behaves, named like Dynamo's settings.
struct CacheOptions {
  int cache_size_limit = 8;  ///< torch._dynamo.config.cache_size_limit: then run eager, with a warning
  RecompileStance stance = RecompileStance::recompile;  ///< what a miss does once something is compiled
  bool automatic_dynamic_shapes = true;                 ///< a size change recompiles once with that dimension dynamic
  /// Dynamo warns once when the limit is reached; a caller that sets a small limit on purpose (a
  /// check, a demonstration) turns the warning off so that a passing run prints none.
  bool warn_at_limit = true;
};

/// Dynamo's cache of specialisations for one function: each entry has its guards; a call uses the
/// first entry whose guards hold. On a miss it compiles a new entry (for a size change, with that
/// dimension marked dynamic), or under fail_on_recompile throws, or past the size limit runs eager.
class SpecialisationCache {
 public:
  /// An empty cache: the first call compiles.
  explicit SpecialisationCache(CacheOptions options = {});
  /// The entry to run for this call, or nothing: run eager (the limit is reached). A new entry's
  /// index is size() - 1 after the call. Throws GuardFailure under fail_on_recompile.
  std::optional<std::size_t> lookup(const torch::Tensor& x, c10::ArrayRef<torch::Tensor> weights);
  /// Entries compiled so far.
  std::size_t size() const { return entries_.size(); }
  /// The guards of entry i.
  const Guards& entry(std::size_t i) const { return entries_.at(i); }
  /// Compilations after the first (Dynamo's recompiles).
  int recompilations() const { return entries_.empty() ? 0 : int(entries_.size()) - 1; }
  /// Calls that ran eager because the limit was reached.
  int eager_fallbacks() const { return fallbacks_; }
  /// Why the last entry was compiled ("first call", "size of dim 0: 64 -> 32, now dynamic", ...).
  const std::string& last_reason() const { return last_reason_; }

 private:
  CacheOptions options_;
  std::vector<Guards> entries_;
  int fallbacks_ = 0;
  std::string last_reason_;
};

/// gelu_tanh(a) * b reading a and b once and writing the result once (3 passes over memory where
/// torch::gelu then * make 5): one op in the profile ("workbook::fused_gelu_mul"),
/// split across threads with at::parallel_for and vectorised by the compiler, for contiguous
/// float32 CPU tensors of one shape; anything else falls back to the two separate ops. The kernel
/// has no backward, so while autograd records (grad mode on and a or b requires grad) it runs the
/// two differentiable ops too (beneath the same op name): gradients always flow.
torch::Tensor fused_gelu_mul(const torch::Tensor& a, const torch::Tensor& b);

}  // namespace workbook
