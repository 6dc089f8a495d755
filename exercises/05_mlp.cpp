// Exercise 05 — see 05_mlp.h for the contract, `./workbook hint 5` for a hint.
// Until you write it, the function below throws "not implemented yet" and the checks fail.
#include "05_mlp.h"

#include "workbook/lesson/not_implemented.h"

namespace exercises {

std::vector<StageTime> stage_breakdown(const workbook::Profile& profile, std::int64_t tokens, std::int64_t dim,
                                       std::int64_t hidden) {
  // TODO: per stage, average over the forwards: the region's total and self time, the GEMMs
  // beneath it, the FLOPs from the shapes and the rate they imply.
  (void)profile, (void)tokens, (void)dim, (void)hidden;
  throw workbook::NotImplemented("exercise 05: stage_breakdown (exercises/05_mlp.cpp)");
}

}  // namespace exercises
