#pragma once
// A test's own RecordFunction observer that notes every op whose result is a floating-point tensor
// of another dtype than the one expected: a check can then say "every intermediate is float32",
// which a profile of allocations in bytes shows only when the odd tensor is the largest one.
#include <ATen/record_function.h>

#include <mutex>
#include <set>
#include <string>

namespace testing {

/// While alive, collects "op (dtype)" for each op, on any thread, that returns a floating-point
/// tensor whose dtype is not `expected` (indices and masks, integer and bool, are not floating).
class FloatingOutputsObserver {
 public:
  explicit FloatingOutputsObserver(c10::ScalarType expected) : expected_(expected) {
    current() = this;
    handle_ = at::addGlobalCallback(
        at::RecordFunctionCallback(&FloatingOutputsObserver::on_start, &FloatingOutputsObserver::on_end)
            .needsOutputs(true)
            .scopes({at::RecordScope::FUNCTION}));
  }
  ~FloatingOutputsObserver() {
    at::removeCallback(handle_);
    current() = nullptr;
  }
  FloatingOutputsObserver(const FloatingOutputsObserver&) = delete;
  FloatingOutputsObserver& operator=(const FloatingOutputsObserver&) = delete;

  /// The ops that returned another floating dtype, as "aten::full (Double)"; empty when none did.
  std::set<std::string> others() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return others_;
  }

 private:
  static FloatingOutputsObserver*& current() {
    static FloatingOutputsObserver* observer = nullptr;
    return observer;
  }
  static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction&) { return nullptr; }
  static void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
    FloatingOutputsObserver* self = current();
    if (!self) return;
    for (const c10::IValue& output : fn.outputs()) {
      if (!output.isTensor()) continue;
      const at::Tensor& t = output.toTensor();
      if (!t.defined() || !t.is_floating_point() || t.scalar_type() == self->expected_) continue;
      std::lock_guard<std::mutex> lock(self->mutex_);
      self->others_.insert(std::string(fn.name()) + " (" + c10::toString(t.scalar_type()) + ")");
    }
  }

  c10::ScalarType expected_;
  mutable std::mutex mutex_;
  std::set<std::string> others_;
  at::CallbackHandle handle_ = 0;
};

}  // namespace testing
