// Reference solution of exercise 04.
#include "04_addmm_epilogue.h"

namespace exercises {

torch::Tensor fused_linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  return torch::addmm(b, x, w.t());
}

std::int64_t extra_add_traffic_bytes(std::int64_t m, std::int64_t n, std::int64_t element_size) {
  return (2 * m * n + n) * element_size;
}

}  // namespace exercises
