// Exercise 12 — see 12_data_parallel.h for the contract, `./workbook hint 12` for a hint.
// Until you write it, the functions below throw "not implemented yet" and the checks fail.
#include "12_data_parallel.h"

#include "workbook/lesson/not_implemented.h"

namespace exercises {

// TODO: what one step needs to remember: the buckets, a flat buffer per bucket, which gradients
// have arrived, the next bucket to start, the work of each started bucket, the hooks' handles.
struct OverlappedAllreduce::State {};

OverlappedAllreduce::OverlappedAllreduce(std::vector<torch::Tensor> parameters, workbook::Collectives& group,
                                         std::int64_t bucket_bytes) {
  // TODO: plan the buckets, then register a hook on each parameter that copies its gradient into
  // its bucket and starts every bucket that is complete, in bucket order.
  (void)parameters, (void)group, (void)bucket_bytes;
  throw workbook::NotImplemented("exercise 12: OverlappedAllreduce (exercises/12_data_parallel.cpp)");
}

OverlappedAllreduce::~OverlappedAllreduce() = default;

std::size_t OverlappedAllreduce::bucket_count() const {
  throw workbook::NotImplemented("exercise 12: OverlappedAllreduce::bucket_count (exercises/12_data_parallel.cpp)");
}

void OverlappedAllreduce::finish() {
  // TODO: wait for every started bucket, then write each parameter's averaged gradient.
  throw workbook::NotImplemented("exercise 12: OverlappedAllreduce::finish (exercises/12_data_parallel.cpp)");
}

}  // namespace exercises
