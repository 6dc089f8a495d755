#include "workbook/profiler/region.h"

#include <ATen/record_function.h>

namespace workbook {

struct Region::Impl {
  at::RecordFunction guard{at::RecordScope::USER_SCOPE};
};

Region::Region(const std::string& name) : impl_(std::make_unique<Impl>()) {
  if (impl_->guard.isActive()) impl_->guard.before(name);
}

Region::~Region() { end(); }

void Region::end() { impl_.reset(); }

}  // namespace workbook
