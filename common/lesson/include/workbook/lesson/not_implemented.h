#pragma once
/// \file
/// \brief The exception an unfinished exercise throws.

#include <stdexcept>
#include <string>

namespace workbook {

/// Thrown by exercise stubs: "not implemented yet: <what>". Checks report it as a failure
/// with this message instead of crashing.
class NotImplemented : public std::logic_error {
 public:
  /// `what` names the exercise and the function to write.
  explicit NotImplemented(const std::string& what) : std::logic_error("not implemented yet: " + what) {}
};

}  // namespace workbook
