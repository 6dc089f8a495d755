// Reference solution of exercise 02.
//
// What to notice: the residuals are relative (divided by the step): otherwise the 1 ms sizes drown the 6 us ones
// and the fixed cost can come out far off, even negative. Scaling n by the largest size keeps n^3 and 1 in reach
// of each other in the normal equations. The fit uses both ends of the range, never the crossover.
#include "02_scale.h"

#include <array>
#include <cmath>
#include <set>
#include <stdexcept>

namespace exercises {

double StepModel::predict_us(std::int64_t n) const {
  const double d = double(n);
  return fixed_us + per_n2_us * d * d + per_n3_us * d * d * d;
}

double StepModel::busy_fraction(std::int64_t n) const {
  const double step = predict_us(n);
  return step > 0 ? (step - fixed_us) / step : 0.0;
}

StepModel fit_step_model(const std::vector<std::pair<std::int64_t, double>>& points) {
  std::set<std::int64_t> sizes;
  for (const auto& p : points) {
    if (p.first < 0 || p.first >= (std::int64_t(1) << 53))
      throw std::invalid_argument("fit_step_model: a size must be in [0, 2^53)");
    sizes.insert(p.first);
  }
  if (sizes.size() < 3) throw std::invalid_argument("fit_step_model needs at least three distinct sizes");
  // Relative least squares: each point's residual is divided by its step, so that a 6 us step
  // counts as much as a 1 ms one. Normal equations (X^T W X) beta = X^T W y for the columns 1,
  // n^2, n^3, scaled by the largest n so that n^3 and 1 stay within a double's reach.
  const double scale = double(*sizes.rbegin());
  std::array<std::array<double, 4>, 3> m{};  // augmented 3x3 | rhs
  for (const auto& [n, step] : points) {
    if (!(step > 0)) throw std::invalid_argument("fit_step_model: step times must be positive");
    const double s = double(n) / scale, w = 1.0 / (step * step);
    const std::array<double, 3> x{1.0, s * s, s * s * s};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m[i][j] += w * x[i] * x[j];
      m[i][3] += w * x[i] * step;
    }
  }
  // Gaussian elimination with partial pivoting.
  for (int col = 0; col < 3; ++col) {
    int pivot = col;
    for (int r = col + 1; r < 3; ++r)
      if (std::fabs(m[r][col]) > std::fabs(m[pivot][col])) pivot = r;
    std::swap(m[col], m[pivot]);
    if (m[col][col] == 0) throw std::invalid_argument("fit_step_model: the sizes do not determine the model");
    for (int r = 0; r < 3; ++r) {
      if (r == col) continue;
      const double f = m[r][col] / m[col][col];
      for (int c = col; c < 4; ++c) m[r][c] -= f * m[col][c];
    }
  }
  StepModel model;
  model.fixed_us = m[0][3] / m[0][0];
  model.per_n2_us = m[1][3] / m[1][1] / (scale * scale);
  model.per_n3_us = m[2][3] / m[2][2] / (scale * scale * scale);
  return model;
}

std::int64_t predicted_crossover(const StepModel& model, std::int64_t lo, std::int64_t hi) {
  std::int64_t n = 1;
  while (n < lo) n *= 2;
  for (; n <= hi; n *= 2)
    if (model.busy_fraction(n) >= 0.5) return n;
  return 0;
}

}  // namespace exercises
