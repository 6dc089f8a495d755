// Exercise 12 — reference solution.
#include "12_data_parallel.h"

#include <stdexcept>

namespace exercises {

// A bucket's gradients live in one flat buffer, so that one all-reduce moves them all.
struct Bucket {
  std::vector<std::size_t> members;   // indices into the parameters
  std::vector<std::int64_t> offsets;  // where each member starts in `flat`
  torch::Tensor flat;
  std::size_t arrived = 0;
  c10::intrusive_ptr<c10d::Work> work;
};

struct OverlappedAllreduce::State {
  std::vector<torch::Tensor> parameters;
  workbook::Collectives* group = nullptr;
  std::vector<Bucket> buckets;
  std::vector<std::size_t> bucket_of, slot_of;  // per parameter: its bucket and its place there
  std::vector<unsigned> hooks;
  std::size_t next_to_start = 0;

  void gradient_arrived(std::size_t parameter, const torch::Tensor& gradient) {
    Bucket& b = buckets[bucket_of[parameter]];
    const std::size_t slot = slot_of[parameter];
    b.flat.narrow(0, b.offsets[slot], gradient.numel()).copy_(gradient.reshape(-1));
    ++b.arrived;
    // Start every complete bucket in bucket order: the ranks must issue the same collectives in
    // the same order.
    while (next_to_start < buckets.size() && buckets[next_to_start].arrived == buckets[next_to_start].members.size()) {
      buckets[next_to_start].work = group->start_allreduce(buckets[next_to_start].flat);
      ++next_to_start;
    }
  }
};

OverlappedAllreduce::OverlappedAllreduce(std::vector<torch::Tensor> parameters, workbook::Collectives& group,
                                         std::int64_t bucket_bytes)
    : state_(std::make_unique<State>()) {
  // As DDP refuses a module without a parameter to train: nothing to average is a mistake.
  if (parameters.empty()) throw std::invalid_argument("no parameters to average");
  if (bucket_bytes < 1) throw std::invalid_argument("bucket_bytes must be at least 1");
  for (const auto& p : parameters)
    if (!p.requires_grad()) throw std::invalid_argument("a parameter does not require a gradient");
  State& s = *state_;
  s.parameters = std::move(parameters);
  s.group = &group;
  s.bucket_of.resize(s.parameters.size());
  s.slot_of.resize(s.parameters.size());
  for (const auto& members : workbook::reverse_order_buckets(s.parameters, bucket_bytes)) {
    Bucket b;
    b.members = members;
    std::int64_t size = 0;
    for (std::size_t slot = 0; slot < members.size(); ++slot) {
      s.bucket_of[members[slot]] = s.buckets.size();
      s.slot_of[members[slot]] = slot;
      b.offsets.push_back(size);
      size += s.parameters[members[slot]].numel();
    }
    b.flat = torch::zeros({size}, s.parameters[members.front()].options().requires_grad(false));
    s.buckets.push_back(std::move(b));
  }
  for (std::size_t k = 0; k < s.parameters.size(); ++k)
    s.hooks.push_back(s.parameters[k].register_hook(
        [state = &s, k](const torch::Tensor& gradient) { state->gradient_arrived(k, gradient); }));
}

OverlappedAllreduce::~OverlappedAllreduce() {
  for (std::size_t k = 0; k < state_->hooks.size(); ++k) state_->parameters[k].remove_hook(state_->hooks[k]);
}

std::size_t OverlappedAllreduce::bucket_count() const { return state_->buckets.size(); }

void OverlappedAllreduce::finish() {
  State& s = *state_;
  if (s.next_to_start != s.buckets.size()) throw std::logic_error("finish() before backward produced every gradient");
  const double world = s.group->world_size();
  for (Bucket& b : s.buckets) {
    b.work->wait();
    for (std::size_t slot = 0; slot < b.members.size(); ++slot) {
      const torch::Tensor& p = s.parameters[b.members[slot]];
      p.mutable_grad().copy_(b.flat.narrow(0, b.offsets[slot], p.numel()).view_as(p) / world);
    }
    b.arrived = 0;
    b.work.reset();
  }
  s.next_to_start = 0;
}

}  // namespace exercises
