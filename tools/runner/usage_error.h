#pragma once
/// \file
/// \brief The runner's one kind of user error: a single line on stderr and exit status 2.

#include <stdexcept>
#include <string>

namespace runner {

/// Bad input from the person at the keyboard (a wrong lesson number, an unknown option, a path of
/// the wrong kind). `main` prints "workbook: <what()>" as one line and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace runner
