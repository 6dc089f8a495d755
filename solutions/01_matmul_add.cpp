// Reference solution of exercise 01.
#include "01_matmul_add.h"

#include "workbook/region.h"

namespace exercises {

workbook::Profile profile_matmul_add(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                     const workbook::Schedule& schedule) {
  workbook::Session session(schedule);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    {
      workbook::Region region("matmul_add");
      torch::Tensor y = torch::add(torch::matmul(x, w), b);
    }
    session.step();
  }
  return session.finish();
}

}  // namespace exercises
