#pragma once
// A test's own RecordFunction observer that keeps the tensors and the alpha of every call of a
// binary op such as aten::add (self, other, alpha): a check can then ask what an op computed with,
// beside what the profile shows of it.
#include <ATen/record_function.h>

#include <mutex>
#include <string>
#include <vector>

namespace testing {

/// One call's operands: the two tensors and alpha (1 where the call had none).
struct BinaryOpCall {
  at::Tensor self, other;
  double alpha = 1;
};

/// While alive, keeps the operands of each call of the op `name` ("aten::add") whose first two
/// inputs are tensors (the Tensor overload), anywhere and on any thread.
class OpInputsObserver {
 public:
  explicit OpInputsObserver(std::string name) : name_(std::move(name)) {
    current() = this;
    handle_ = at::addGlobalCallback(
        at::RecordFunctionCallback(&OpInputsObserver::on_start).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
  }
  ~OpInputsObserver() {
    at::removeCallback(handle_);
    current() = nullptr;
  }
  OpInputsObserver(const OpInputsObserver&) = delete;
  OpInputsObserver& operator=(const OpInputsObserver&) = delete;

  /// Each call's operands, in call order.
  std::vector<BinaryOpCall> calls() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }

 private:
  static OpInputsObserver*& current() {
    static OpInputsObserver* observer = nullptr;
    return observer;
  }
  static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
    OpInputsObserver* self = current();
    if (!self || self->name_ != fn.name()) return nullptr;
    const auto inputs = fn.inputs();
    if (inputs.size() < 2 || !inputs[0].isTensor() || !inputs[1].isTensor()) return nullptr;
    BinaryOpCall call{inputs[0].toTensor(), inputs[1].toTensor()};
    if (inputs.size() > 2 && inputs[2].isScalar()) call.alpha = inputs[2].toScalar().toDouble();
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->calls_.push_back(std::move(call));
    return nullptr;
  }

  std::string name_;
  mutable std::mutex mutex_;
  std::vector<BinaryOpCall> calls_;
  at::CallbackHandle handle_ = 0;
};

}  // namespace testing
