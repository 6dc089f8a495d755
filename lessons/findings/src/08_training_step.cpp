#include "workbook/findings/08_training_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace workbook::findings08 {
namespace {

int recorded_steps(const Profile& p) { return int(p.find_prefix("ProfilerStep#").size()); }

}  // namespace

Finding one_mm_backward_per_gemm(const Profile& p, int gemms_per_step) {
  int nodes = 0;
  for (EventId r : p.find("backward"))
    for (EventId d : p.descendants(r)) nodes += p[d].name.rfind("MmBackward", 0) == 0;
  const int steps = recorded_steps(p);
  return {steps > 0 && nodes == gemms_per_step * steps,
          fmt::format("backward runs one MmBackward0 node per forward GEMM ({} per step)", gemms_per_step),
          fmt::format("{} MmBackward nodes over {} steps", nodes, steps)};
}

Finding backward_on_callers_thread(const Profile& p) {
  // The autograd nodes that ran while a backward region was open, on any thread: a node on another
  // thread is in no region's subtree (the tree is per thread), so looking only beneath the region
  // could never see it.
  std::set<std::uint64_t> forward, backward;
  for (EventId r : p.find("forward")) forward.insert(p[r].thread);
  std::size_t nodes = 0;
  const auto& events = p.events();
  for (EventId r : p.find("backward")) {
    auto from = std::lower_bound(events.begin(), events.end(), p[r].start_ns,
                                 [](const EventView& e, std::int64_t t) { return e.start_ns < t; });
    for (auto it = from; it != events.end() && (*it).start_ns <= p[r].end_ns; ++it) {
      const EventView e = *it;
      if (!e.on_host() || e.end_ns > p[r].end_ns || !is_autograd_node(e.name)) continue;
      ++nodes;
      backward.insert(e.thread);
    }
  }
  return {
      nodes > 0 && backward == forward,
      "for CPU tensors the autograd engine runs backward on the thread that called backward(), so the session "
      "records it with the rest",
      fmt::format("threads of the forward: {}; autograd nodes during backward: {}, on {} thread(s), {}", forward.size(),
                  nodes, backward.size(), backward == forward ? "the forward's" : "not the forward's")};
}

bool is_autograd_node(std::string_view name) {
  return name.rfind("autograd::engine", 0) != 0 &&
         (name.find("Backward") != std::string::npos || name.find("AccumulateGrad") != std::string::npos);
}

Finding zero_grad_forms(const Profile& p) {
  std::size_t zeroing = 0, none = 0;
  for (EventId step : p.find_prefix("ProfilerStep#")) {
    const std::string number(p[step].name.substr(std::string("ProfilerStep#").size()));
    const bool even = !number.empty() && (number.back() - '0') % 2 == 0;
    for (EventId z : p.under(step, "zero_grad")) (even ? none : zeroing) += p.count_under(z, "aten::zero_");
  }
  return {none == 0 && zeroing > 0,
          "zero_grad(set_to_none) runs no op; zeroing in place runs an aten::zero_ per gradient",
          fmt::format("aten::zero_ in set-to-none steps: {}, in zeroing steps: {}", none, zeroing)};
}

Finding optimizer_per_parameter(const Profile& p, const std::vector<std::vector<std::int64_t>>& parameter_shapes) {
  std::map<std::vector<std::int64_t>, std::size_t> ops_per_shape, parameters_per_shape;
  for (const auto& shape : parameter_shapes) {
    ops_per_shape[shape] += 0;
    ++parameters_per_shape[shape];
  }
  std::size_t ops = 0, on_one_parameter = 0;
  for (EventId o : p.find("optimizer"))
    for (EventId c : p.children(o)) {
      if (p[c].category != Category::cpu_op) continue;
      ++ops;
      const auto& shapes = p[c].input_shapes;
      const auto hit = shapes.empty() ? ops_per_shape.end() : ops_per_shape.find(shapes.front());
      if (hit == ops_per_shape.end()) continue;
      ++hit->second;
      ++on_one_parameter;
    }
  // Parameters that share a shape share its count: per parameter, divide by how many share it.
  std::size_t fewest = ops, most = 0;
  for (const auto& [shape, n] : ops_per_shape) {
    fewest = std::min(fewest, n / parameters_per_shape[shape]);
    most = std::max(most, n / parameters_per_shape[shape]);
  }
  return {
      ops > 0 && on_one_parameter == ops && fewest == most,
      "the optimizer updates parameter by parameter: each of its ops takes one parameter-shaped tensor first, and "
      "every parameter gets the same number of ops",
      fmt::format("{} top-level ops in the optimizer regions ({} steps, {} parameter tensors): {} on one "
                  "parameter-shaped tensor; ops per parameter over the {} steps from {} to {}",
                  ops, recorded_steps(p), parameter_shapes.size(), on_one_parameter, recorded_steps(p), fewest, most)};
}

}  // namespace workbook::findings08
