// Mutant of exercise 03 — never profiles: the copy count and the bytes are guessed from the tensors.
// must fail: the profile tells what the tensors cannot: a hidden copy beside a view, two copies in a row
#include "03_linear_t.h"

namespace exercises {

ViewOrCopy view_or_copy(const std::function<torch::Tensor(const torch::Tensor&)>& op, const torch::Tensor& input) {
  const torch::Tensor out = op(input);
  ViewOrCopy v;
  v.shares_storage = out.storage().is_alias_of(input.storage());
  v.same_data_ptr = out.data_ptr() == input.data_ptr();
  v.out_strides = out.strides().vec();
  // No profile: the evidence guessed from the tensors alone.
  if (!v.shares_storage) {
    v.copying_ops = 1;
    v.bytes_allocated = out.numel() * out.element_size();
  }
  // The data pointer is not the test: narrow() is a view that starts further in.
  v.is_view = v.shares_storage && v.copying_ops == 0 && v.bytes_allocated == 0;
  return v;
}

}  // namespace exercises
