#pragma once
/// \file
/// \brief A labelled region: C++'s `torch.profiler.record_function("name")`.

#include <memory>
#include <string>

namespace workbook {

/// Marks a scope so that it shows up in the profile as a `user_annotation` event with this
/// name, with every op run inside it as a descendant. Costs next to nothing when no profiler
/// is recording.
///
/// \code
/// { workbook::Region region("matmul_add"); y = torch::add(torch::matmul(x, w), b); }
/// \endcode
class Region {
 public:
  /// Opens the region.
  explicit Region(const std::string& name);
  /// Closes the region.
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  /// Closes the region before the end of its scope.
  void end();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace workbook
