#pragma once
/// \file
/// \brief The articles' trace-reading cheat sheet ("if you see this, it usually means that") as
/// rules run on any profile: each finding names its evidence (events, steps, times, a ratio)
/// and each rule states the threshold it fires at. What `./workbook trace FILE --advise` prints.

#include <string>
#include <vector>

#include "workbook/profiler/profile.h"

namespace workbook {

/// One rule of the cheat sheet.
struct AdviceRule {
  std::string id;             ///< "cold_first_step"
  std::string if_you_see;     ///< what the trace shows, in the cheat sheet's words
  std::string usually_means;  ///< the articles' explanation
  std::string threshold;      ///< when the rule fires, stated with its numbers
};

/// A rule that fired on a profile, with what it saw.
struct Advice {
  std::string rule;      ///< the rule's id
  std::string evidence;  ///< the events, steps, times and ratio it decided on
};

/// Every rule, in the order `advise` runs them.
const std::vector<AdviceRule>& advice_rules();

/// The findings of every rule on `profile`, in rule order; a rule fires at most once per profile
/// (its evidence names the worst case and how many more there were).
std::vector<Advice> advise(const Profile& profile);

/// The findings as text: each with its rule's explanation and threshold, then the rules that
/// stayed silent with their thresholds (a silent rule is evidence too).
std::string format_advice(const std::vector<Advice>& advice);

/// The findings as JSON: {"findings": [{rule, if_you_see, usually_means, threshold, evidence}],
/// "silent": [{rule, threshold}]}.
std::string advice_json(const std::vector<Advice>& advice);

}  // namespace workbook
