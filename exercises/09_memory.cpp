// Exercise 09 — see 09_memory.h for the contract, `./workbook hint 9` for a hint.
// Until you write it, the function below throws "not implemented yet" and the checks fail.
#include "09_memory.h"

#include "workbook/lesson/not_implemented.h"

namespace exercises {

std::int64_t predict_training_peak_bytes(const StepShapes& shapes) {
  // TODO: which buffers are alive at the worst moment of backward, and how big is each?
  (void)shapes;
  throw workbook::NotImplemented("exercise 09: predict_training_peak_bytes (exercises/09_memory.cpp)");
}

}  // namespace exercises
