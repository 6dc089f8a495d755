#pragma once
/// \file
/// \brief Exercise 09: predict a training step's memory peak from the shapes alone.

#include <cstdint>

namespace exercises {

//! [contract]
/// One training step of lesson 09's GeGLU MLP, float32, no biases: `tokens` rows of width `dim`,
/// hidden width `hidden` (gate and up are dim -> hidden, down is hidden -> dim).
struct StepShapes {
  std::int64_t tokens = 0;  ///< T: rows of x and of the target (0 too: an empty batch still trains)
  std::int64_t dim = 0;     ///< model width, at least 1 (nn::Linear cannot initialise a layer of no width)
  std::int64_t hidden = 0;  ///< hidden width, at least 1
};

/// Predicts, without running anything, the most bytes live at once during one training step —
/// zero_grad (set to none), forward, MSE loss against a [T, dim] target, backward, SGD without
/// momentum — above the bytes live when the step's forward began. The checks record real steps at
/// shapes lesson 09 never ran (some with dim > hidden) and want your number within 1 %: an exact
/// count of the buffers lands within a few bytes. At shapes too large to run (peaks up to 2^62 bytes)
/// they want it within 16 bytes of the count that the recorded shapes confirm.
std::int64_t predict_training_peak_bytes(const StepShapes& shapes);
//! [contract]

}  // namespace exercises
