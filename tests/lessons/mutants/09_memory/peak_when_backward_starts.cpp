// Mutant of exercise 09 — takes the bytes live when backward starts as the peak.
// must fail: the prediction holds where hidden is wider than the model
#include "09_memory.h"

#include <algorithm>
#include <vector>

namespace exercises {

std::int64_t predict_training_peak_bytes(const StepShapes& s) {
  const std::int64_t th = s.tokens * s.hidden, td = s.tokens * s.dim, dh = s.dim * s.hidden;
  // When backward starts: the gate's output, gelu's, up's and the product (saved), the output,
  // the [T, dim] buffer the loss keeps, and the output's gradient.
  std::int64_t live = 4 * th + 3 * td, peak = live;
  // Each backward node in the order the engine runs them: what it allocates, then what it frees.
  const std::vector<std::pair<std::int64_t, std::int64_t>> nodes{
      {th + dh, td + th},  // down: grad of the product, down's weight gradient; frees the output's grad, the product
      {2 * th, 3 * th},    // mul: grads of both factors; frees the product's grad and the two factors
      {dh, th},            // up: up's weight gradient (x needs none); frees up's output grad
      {th, 2 * th},        // gelu: grad of the gate's output; frees gelu's grad and the gate's output
      {dh, th}};           // gate: the gate's weight gradient; frees the gate's output grad
  for (const auto& [allocated, freed] : nodes) {
    peak = std::max(peak, live += allocated);
    live -= freed;
  }
  (void)peak;
  return 4 * (4 * th + 3 * td);
}

}  // namespace exercises
