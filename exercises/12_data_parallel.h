#pragma once
/// \file
/// \brief Exercise 12: DDP's gradient synchronisation — buckets all-reduced while backward still runs.

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "workbook/support/data_parallel.h"

namespace exercises {

//! [contract]
/// Averages the gradients of `parameters` over the ranks of `group` the way DistributedDataParallel
/// does, overlapping the communication with backward:
/// - the parameters are grouped into buckets with workbook::reverse_order_buckets(parameters,
///   bucket_bytes): backward usually produces gradients in reverse order of registration, so
///   bucket 0 is usually complete first (it need not be);
/// - a hook on each parameter (Tensor::register_hook) sees its gradient as backward computes it;
///   once every gradient of a bucket is in, and every earlier bucket has been started, the bucket's
///   all-reduce is started with group.start_allreduce — asynchronously, without waiting, so that
///   backward goes on computing the remaining gradients meanwhile (every rank must start the same
///   buckets in the same order, hence bucket order, not readiness order);
/// - finish(), called after backward, waits for every bucket (Work::wait() on each bucket's Work:
///   a later bucket may finish before an earlier one) and leaves in each parameter's grad()
///   the sum over the ranks divided by the world size (the gradient of the whole batch's mean loss
///   when each rank holds an equal shard), in the parameters' dtype (all parameters share one dtype
///   and device: make each bucket's buffer with their options). A parameter may be any strided
///   tensor, a transposed one too: autograd lays its grad() out like the parameter. What counts
///   is grad()'s values: finish() may write them in place or set a new tensor of any layout.
/// One backward per step, each step's finish() before the next backward; gradients set to none or
/// zeroed between steps. The hooks are removed when the object is destroyed. Objects over other
/// parameters may be alive at once (two models trained side by side): each keeps its own. The
/// parameters hold fewer than 2^31 elements in all (8 GiB of float gradients): a bucket's offsets
/// fit an int.
class OverlappedAllreduce {
 public:
  /// Plans the buckets and registers one hook per parameter. Throws std::invalid_argument when
  /// there are no parameters (as DDP refuses a module with none to train), bucket_bytes < 1 or a
  /// parameter does not require a gradient.
  OverlappedAllreduce(std::vector<torch::Tensor> parameters, workbook::Collectives& group, std::int64_t bucket_bytes);
  ~OverlappedAllreduce();
  OverlappedAllreduce(const OverlappedAllreduce&) = delete;
  OverlappedAllreduce& operator=(const OverlappedAllreduce&) = delete;

  /// How many buckets (and so all-reduces per step) the plan has.
  std::size_t bucket_count() const;
  /// Waits for this step's all-reduces and writes the averaged gradients. Throws std::logic_error
  /// when backward has not produced every parameter's gradient since the last finish().
  void finish();

 private:
  struct State;
  std::unique_ptr<State> state_;  // yours to define in 12_data_parallel.cpp
};
//! [contract]

}  // namespace exercises
