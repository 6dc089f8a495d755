#pragma once
/// \file
/// \brief A lesson's answers to its prediction questions (the manifest's "questions"): each
/// computed from this run's profile by a finding, handed to the runner, which scores the learner's
/// predictions (`./workbook predict N`) against them.

#include <string>

namespace workbook {

/// Records this run's answer to the lesson's question `question` (the manifest's id): the value
/// ("yes", "no", a number as text) and one line saying why, from the run's evidence.
void answer(const std::string& question, const std::string& value, const std::string& why);

/// The same for a yes/no question decided by a finding: "yes" when it holds.
template <class Finding>
void answer(const std::string& question, const Finding& finding) {
  answer(question, finding.holds ? "yes" : "no", finding.evidence);
}

/// Writes the answers recorded so far as JSON ({"question": {"value": ..., "why": ...}}) to the
/// file named by WORKBOOK_ANSWERS_FILE, where the runner asked for them; nothing otherwise.
void write_answers();

}  // namespace workbook
