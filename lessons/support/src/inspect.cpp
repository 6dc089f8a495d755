#include "workbook/support/inspect.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace workbook {

TensorView inspect(const torch::Tensor& t) {
  TensorView v;
  v.sizes = t.sizes().vec();
  v.strides = t.strides().vec();
  v.storage_offset = t.storage_offset();
  v.data = t.data_ptr();
  v.storage = t.storage().data();
  v.storage_bytes = std::int64_t(t.storage().nbytes());
  v.contiguous = t.is_contiguous();
  return v;
}

bool shares_storage(const torch::Tensor& a, const torch::Tensor& b) {
  return a.defined() && b.defined() && a.storage().is_alias_of(b.storage());
}

std::string describe(const TensorView& v) {
  return fmt::format("sizes [{}]  strides [{}]  offset {}  data {}  {}", fmt::join(v.sizes, ", "),
                     fmt::join(v.strides, ", "), v.storage_offset, v.data,
                     v.contiguous ? "contiguous" : "not contiguous");
}

}  // namespace workbook
