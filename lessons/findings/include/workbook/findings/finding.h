#pragma once
/// \file
/// \brief A lesson's run-dependent statement as a value, computed from what the run recorded.
///
/// A lesson says nothing about its run that a finding did not decide: each finding is a function
/// of the Profile (and the numbers the run measured) to a Finding, with a unit test where it must
/// come out "NOT shown" (`ctest -L findings`, no LibTorch needed). The lesson prints it with
/// workbook::claim.

#include <stdexcept>
#include <string>
#include <string_view>

#include "workbook/profiler/profile.h"

namespace workbook {

/// What one run shows about one statement.
struct Finding {
  bool holds = false;    ///< this run bears the sentence out
  std::string sentence;  ///< the statement, true whenever `holds`
  std::string evidence;  ///< the numbers from this run it was decided on
};

/// The first event named `name`; throws std::invalid_argument when there is none, so that a
/// finding never reads a missing region as zero.
inline EventId first_named(const Profile& profile, std::string_view name) {
  const auto ids = profile.find(name);
  if (ids.empty()) throw std::invalid_argument("no event named '" + std::string(name) + "' in this profile");
  return ids.front();
}

}  // namespace workbook
