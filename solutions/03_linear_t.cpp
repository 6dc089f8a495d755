// Reference solution of exercise 03.
#include "03_linear_t.h"

#include <algorithm>
#include <string_view>

namespace exercises {

ViewFacts view_facts(const torch::Tensor& tensor) {
  ViewFacts v;
  v.sizes = tensor.sizes().vec();
  v.strides = tensor.strides().vec();
  v.storage_offset = tensor.storage_offset();
  v.data = tensor.data_ptr();
  v.contiguous = tensor.is_contiguous();
  return v;
}

bool same_storage(const torch::Tensor& a, const torch::Tensor& b) { return a.storage().is_alias_of(b.storage()); }

bool is_metadata_only(const workbook::Profile& profile, workbook::EventId op, std::int64_t tensor_bytes) {
  constexpr std::string_view copying[] = {"aten::copy_", "aten::clone", "aten::contiguous", "aten::_to_copy"};
  for (workbook::EventId id : profile.descendants(op)) {
    const workbook::Event& e = profile[id];
    if (std::find(std::begin(copying), std::end(copying), e.name) != std::end(copying)) return false;
    if (e.category == workbook::Category::memory && e.bytes >= tensor_bytes) return false;
  }
  return true;
}

}  // namespace exercises
