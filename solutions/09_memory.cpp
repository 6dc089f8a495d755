// Reference solution of exercise 09.
//
// What to notice: the peak is never the end of the forward, and which backward node reaches it
// depends on the shapes. Each node allocates its gradients before it frees what it saved, and the
// three weight gradients are never freed inside the step. Mul's node peaks at 6·TH + 2·TD + DH
// (both factors' gradients while the saved buffers are alive), the last node, gate's, at TH + 2·TD
// + 3·DH (all three weight gradients exist): the last one wins only when 2·DH > 5·TH, that is when
// D > 2.5·T. Weights larger than the activations are not enough: at T 64, D 128, H 512 each weight
// [H, D] is twice a [T, H] activation, and mul's node still reaches the peak (down's node, at 5·TH + 3·TD + DH, passes mul's when TD > TH: dim larger than hidden).
#include "09_memory.h"

#include <algorithm>
#include <vector>

namespace exercises {

std::int64_t predict_training_peak_bytes(const StepShapes& s) {
  const std::int64_t th = s.tokens * s.hidden, td = s.tokens * s.dim, dh = s.dim * s.hidden;
  // Once MseLossBackward0 has made the output's gradient: the gate's output, gelu's, up's and the product (saved), the output,
  // the [T, dim] buffer the loss keeps, and the output's gradient.
  std::int64_t live = 4 * th + 3 * td, peak = live;
  // Each backward node, what it allocates, then what it frees. (1.13's engine runs gelu's node
  // before up's; either order gives the same peak: neither node's sum passes both mul's and gate's.)
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
  return 4 * peak;
}

}  // namespace exercises
