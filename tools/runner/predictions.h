#pragma once
/// \file
/// \brief Guess first, then look: the learner's predictions for a lesson's questions, asked by
/// `./workbook predict N` and scored by `./workbook run N` against the answers the run computes
/// (each from a finding on its own profile, written where WORKBOOK_ANSWERS_FILE says).

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "manifest.h"

namespace runner {

struct Context;
struct Arguments;

/// A prediction as typed, made canonical for `q`: "yes"/"no" (y, n, any case) or a number
/// (as written back by the shortest form); nothing when it is not one of those.
std::optional<std::string> canonical_prediction(const Question& q, const std::string& typed);

/// Whether `prediction` (canonical) is right for the run's `measured` value: the same word, or a
/// number within the question's tolerance.
bool prediction_is_right(const Question& q, const std::string& prediction, const std::string& measured);

/// One question's verdict after a run.
struct Verdict {
  std::string question, predicted, measured, why;
  bool right = false;
};

/// The verdicts for `predictions` against the run's answers (the JSON text the lesson wrote);
/// a question the run did not answer is left out. Throws std::runtime_error on malformed answers.
std::vector<Verdict> score_predictions(const Lesson& l, const std::map<std::string, std::string>& predictions,
                                       const std::string& answers_json);

/// `predict N [--answers a,b,...]`.
int predict(const Context& c, const Arguments& a);

/// Runs lesson `l`'s program (`argv`) and, when the learner made predictions for it, scores them
/// against the run's answers and prints the verdicts; otherwise reminds once that `predict` exists.
int run_with_predictions(const Context& c, const Lesson& l, const std::vector<std::string>& argv);

}  // namespace runner
