// Exercise 02 — see 02_scale.h for the contract, `./workbook hint 2` for a hint.
// Until you write them, the functions below throw "not implemented yet" and the checks fail.
#include "02_scale.h"

#include "workbook/lesson/not_implemented.h"

namespace exercises {

double StepModel::predict_us(std::int64_t n) const {
  (void)n;
  throw workbook::NotImplemented("exercise 02: StepModel::predict_us (exercises/02_scale.cpp)");
}

double StepModel::busy_fraction(std::int64_t n) const {
  (void)n;
  throw workbook::NotImplemented("exercise 02: StepModel::busy_fraction (exercises/02_scale.cpp)");
}

StepModel fit_step_model(const std::vector<std::pair<std::int64_t, double>>& points) {
  // TODO: set up the least-squares problem for (a, c, b) and solve it.
  (void)points;
  throw workbook::NotImplemented("exercise 02: fit_step_model (exercises/02_scale.cpp)");
}

std::int64_t predicted_crossover(const StepModel& model, std::int64_t lo, std::int64_t hi) {
  (void)model, (void)lo, (void)hi;
  throw workbook::NotImplemented("exercise 02: predicted_crossover (exercises/02_scale.cpp)");
}

}  // namespace exercises
