#pragma once
// A test's own RecordFunction observer, beside whatever the code under test records: it sees a
// region's start (and the ops inside it) as they happen, so a check can ask what was already on
// disk when step k began, and can slow chosen steps down by a known amount. Checks built on it
// decide by structure and by margins of milliseconds, never by a machine's speed.
#include <ATen/record_function.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace testing {

/// While alive, counts the starts of the region `name` (step k = the k-th start, from 0) and of
/// `op`; at each start of the region records which of `watched` files exist; on the start of step
/// k's region and of the first `op` inside it, sleeps `delay_us[k]` (whichever of the two the
/// profiler times inside the gap between them, the delay lands there: the profiler's own callback
/// runs either before or after this one, the same way for both).
class RegionObserver {
 public:
  RegionObserver(std::string name, std::string op, std::vector<std::filesystem::path> watched,
                 std::map<int, int> delay_us = {})
      : name_(std::move(name)), op_(std::move(op)), watched_(std::move(watched)), delay_us_(std::move(delay_us)) {
    current() = this;
    handle_ = at::addGlobalCallback(at::RecordFunctionCallback(&RegionObserver::on_start)
                                        .scopes({at::RecordScope::USER_SCOPE, at::RecordScope::FUNCTION}));
  }
  ~RegionObserver() {
    at::removeCallback(handle_);
    current() = nullptr;
  }
  RegionObserver(const RegionObserver&) = delete;
  RegionObserver& operator=(const RegionObserver&) = delete;

  /// Region starts seen so far.
  int steps() const { return int(existed_.size()); }
  /// Starts of `op` anywhere, inside the region or not.
  int op_starts() const { return op_starts_; }
  /// Whether watched file `i` existed when step `k`'s region started.
  bool existed_at(int k, std::size_t i) const { return existed_.at(std::size_t(k)).at(i); }

 private:
  static RegionObserver*& current() {
    static RegionObserver* observer = nullptr;
    return observer;
  }
  static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
    RegionObserver* self = current();
    if (!self) return nullptr;
    if (self->op_ == fn.name()) ++self->op_starts_;
    if (self->name_ == fn.name()) {
      std::vector<bool> existed;
      for (const auto& f : self->watched_) existed.push_back(std::filesystem::exists(f));
      self->existed_.push_back(existed);
      self->op_delayed_ = false;
      self->delay(int(self->existed_.size()) - 1);
    } else if (!self->op_delayed_ && self->op_ == fn.name() && !self->existed_.empty()) {
      self->op_delayed_ = true;
      self->delay(int(self->existed_.size()) - 1);
    }
    return nullptr;
  }
  void delay(int step) const {
    const auto it = delay_us_.find(step);
    if (it != delay_us_.end()) std::this_thread::sleep_for(std::chrono::microseconds(it->second));
  }

  std::string name_, op_;
  std::vector<std::filesystem::path> watched_;
  std::map<int, int> delay_us_;
  std::vector<std::vector<bool>> existed_;
  bool op_delayed_ = false;
  int op_starts_ = 0;
  at::CallbackHandle handle_ = 0;
};

}  // namespace testing
