#include "predictions.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "arguments.h"
#include "context.h"
#include "process.h"
#include "text_file.h"
#include "usage_error.h"
#include "workbook/profiler/format.h"

namespace runner {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return text;
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

std::optional<double> number_of(const std::string& text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

std::string kind_words(const Question& q) { return q.kind == "yes_no" ? "yes or no" : "a number"; }

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const auto comma = text.find(',', start);
    parts.push_back(trimmed(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

}  // namespace

std::optional<std::string> canonical_prediction(const Question& q, const std::string& typed) {
  const std::string text = lower(trimmed(typed));
  if (q.kind == "yes_no") {
    if (text == "yes" || text == "y") return std::string("yes");
    if (text == "no" || text == "n") return std::string("no");
    return std::nullopt;
  }
  const auto value = number_of(text);
  if (!value) return std::nullopt;
  return fmt::format("{}", *value);
}

bool prediction_is_right(const Question& q, const std::string& prediction, const std::string& measured) {
  if (q.kind == "yes_no") return prediction == measured;
  const auto p = number_of(prediction), m = number_of(measured);
  return p && m && std::fabs(*p - *m) <= q.tolerance;
}

std::vector<Verdict> score_predictions(const Lesson& l, const std::map<std::string, std::string>& predictions,
                                       const std::string& answers_json) {
  const auto answers = nlohmann::json::parse(answers_json);
  if (!answers.is_object()) throw std::runtime_error("the run's answers are not a JSON object");
  std::vector<Verdict> verdicts;
  for (const auto& q : l.questions) {
    const auto predicted = predictions.find(q.id);
    const auto answer = answers.find(q.id);
    if (predicted == predictions.end() || answer == answers.end()) continue;
    if (!answer->is_object() || !answer->contains("value") || !(*answer)["value"].is_string())
      throw std::runtime_error(fmt::format("the run's answer to '{}' has no string 'value'", q.id));
    Verdict v{q.id, predicted->second, (*answer)["value"].get<std::string>(), answer->value("why", std::string())};
    v.right = prediction_is_right(q, v.predicted, v.measured);
    verdicts.push_back(std::move(v));
  }
  return verdicts;
}

int predict(const Context& c, const Arguments& a) {
  const Lesson& l = c.manifest.lesson(a.words.at(0));
  if (l.questions.empty()) {
    fmt::print("lesson {} has no prediction questions yet\n", l.number);
    return 0;
  }
  std::map<std::string, std::string> made;
  if (const auto given = a.values.find("--answers"); given != a.values.end()) {
    // For scripts: one answer per question, in order; an empty one skips it.
    const std::vector<std::string> typed = split_commas(given->second);
    if (typed.size() != l.questions.size())
      throw UsageError(fmt::format("predict {}: --answers takes {} answers separated by commas (got {})", l.number,
                                   l.questions.size(), typed.size()));
    for (std::size_t k = 0; k < typed.size(); ++k) {
      if (typed[k].empty()) continue;
      const auto value = canonical_prediction(l.questions[k], typed[k]);
      if (!value)
        throw UsageError(fmt::format("predict {}: answer {} ('{}') must be {}", l.number, k + 1,
                                     workbook::printable(typed[k]), kind_words(l.questions[k])));
      made[l.questions[k].id] = *value;
    }
  } else {
    fmt::print(
        "Guess first, then look. Lesson {} ({}): {} questions about what its run will show.\n"
        "Answer each, or press Enter to skip it.\n\n",
        l.number, l.title, l.questions.size());
    for (const auto& q : l.questions) {
      for (;;) {
        fmt::print("{} [{}]: ", q.ask, kind_words(q));
        std::fflush(stdout);
        std::string line;
        if (!std::getline(std::cin, line)) {
          fmt::print("\n");
          break;  // end of input: the rest are skipped
        }
        if (trimmed(line).empty()) break;
        if (const auto value = canonical_prediction(q, line)) {
          made[q.id] = *value;
          break;
        }
        fmt::print("  that is not {}; try again, or Enter to skip\n", kind_words(q));
      }
    }
  }
  c.progress.update([&](Progress& p) {
    if (made.empty())
      p.predictions.erase(l.number);
    else
      p.predictions[l.number] = made;
  });
  fmt::print("{} of {} predictions saved. Now ./workbook run {} shows each beside what the run measures.\n",
             made.size(), l.questions.size(), l.number);
  return 0;
}

int run_with_predictions(const Context& c, const Lesson& l, const std::vector<std::string>& argv) {
  const Progress before = c.progress.load();
  const auto predicted = before.predictions.find(l.number);
  if (predicted == before.predictions.end() || predicted->second.empty()) {
    if (!l.questions.empty() && !before.reminded.count(l.number)) {
      fmt::print(
          "(guess first: ./workbook predict {} asks {} questions about what this run will show, and the next "
          "run scores them)\n",
          l.number, l.questions.size());
      c.progress.update([&](Progress& p) { p.reminded.insert(l.number); });
    }
    std::fflush(stdout);
    exec_process(argv);
  }
  const std::filesystem::path answers = c.progress.dir() / fmt::format("answers-{}.json", l.number);
  std::error_code ignored;
  std::filesystem::remove(answers, ignored);
  std::fflush(stdout);
  const int status = run_process(argv, {{"WORKBOOK_ANSWERS_FILE", answers.string()}});
  if (status != 0) return status;
  const std::optional<std::string> text = read_file(answers);
  if (!text) {
    fmt::print("\n(no answers from this run to score your predictions with)\n");
    return 0;
  }
  std::vector<Verdict> verdicts;
  try {
    verdicts = score_predictions(l, predicted->second, *text);
  } catch (const std::exception& e) {
    fmt::print(stderr, "workbook: the run's answers could not be read ({}): your predictions are not scored\n",
               workbook::printable(e.what()));
    return 1;
  }
  int right = 0;
  fmt::print("\nyour predictions against this run:\n");
  for (const auto& v : verdicts) {
    const auto q =
        std::find_if(l.questions.begin(), l.questions.end(), [&](const Question& x) { return x.id == v.question; });
    right += v.right ? 1 : 0;
    fmt::print("  {} {}\n      you said {}, this run says {}{}\n      {}\n",
               v.right ? "right:" : "not this time:", q->ask, v.predicted, v.measured,
               v.why.empty() ? "" : " (" + v.why + ")", q->explain);
  }
  fmt::print("{} of {} right\n", right, verdicts.size());
  c.progress.update([&](Progress& p) { p.scores[l.number] = {right, int(verdicts.size())}; });
  return 0;
}

}  // namespace runner
