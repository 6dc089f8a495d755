#pragma once
/// \file
/// \brief Exercise 02: model a step's time from a few sizes and predict the crossover before
/// measuring it.

#include <cstdint>
#include <utility>
#include <vector>

namespace exercises {

//! [contract]
/// step(n) = fixed + per_n2·n² + per_n3·n³ microseconds: a cost that does not grow with n, one
/// that grows with the output (n² elements: memory traffic, the bias add) and one that grows
/// with the GEMM's arithmetic (2n³ flops).
struct StepModel {
  double fixed_us = 0;   ///< a
  double per_n2_us = 0;  ///< c
  double per_n3_us = 0;  ///< b
  /// The model's step time at size n.
  double predict_us(std::int64_t n) const;
  /// The share of the step that grows with n at size n: (c·n² + b·n³) / step(n), and 0 where
  /// step(n) <= 0 (a fit's negative terms can make the model's step non-positive at small n: no
  /// share of it is meaningful there).
  double busy_fraction(std::int64_t n) const;
};

/// Fit of the model to measured (n, step_us) points by relative least squares: minimise the sum
/// of ((model(n) - step) / step)², so that a 6 µs step weighs as much as a 1 ms one. Sizes n with
/// 0 <= n < 2^53 (exact as a double; n = 0 is an empty matrix, whose step is the fixed cost), at
/// least three distinct ones, and positive steps; std::invalid_argument otherwise. Lesson 02 only
/// subtracted the smallest step: here every term is estimated, and the model then answers for
/// sizes that were never measured. Sizes a few per mille apart (3000, 3001, 3003) leave the terms
/// nearly indistinguishable and the normal equations ill-conditioned; so do sizes spread too far
/// (beside 2^50, size 1000's n³ term is 2^-120 of the largest: 1000, 2^33, 2^50 fit a fixed cost of
/// -391 µs where the truth is 12), and steps far from any real one (1e-130 µs) take the weights
/// 1/step² out of a double's range. The checks keep consecutive sizes at least 10 % apart, every
/// positive size within a factor of 2^40 of the largest, and steps from 1 µs to 1e32 µs.
StepModel fit_step_model(const std::vector<std::pair<std::int64_t, double>>& points);

/// The smallest power of two n in [lo, hi] at which the model says the step is compute-bound
/// (busy_fraction(n) >= 0.5), or 0 when none is. 1 <= lo <= hi < 2^62.
std::int64_t predicted_crossover(const StepModel& model, std::int64_t lo, std::int64_t hi);
//! [contract]

}  // namespace exercises
