#pragma once
/// \file
/// \brief lessons/manifest.json, the one list of lessons, as the runner reads it.

#include <filesystem>
#include <string>
#include <vector>

namespace runner {

/// One lesson's entry. Its files are named after the slug (see `lesson_files`).
/// A question asked before a lesson runs (`./workbook predict N`), answered by the run itself.
struct Question {
  std::string id;        ///< the lesson's answer key ("first_step_cold")
  std::string ask;       ///< the question as the learner reads it
  std::string kind;      ///< "yes_no" or "number"
  double tolerance = 0;  ///< a number within this of the run's value is right
  std::string explain;   ///< one line: what the answer teaches, shown after the run
};

struct Lesson {
  std::string number;  ///< two digits: "01"
  std::string slug;    ///< "01_matmul_add"
  std::string title;
  std::string goal;
  bool needs_gpu = false;
  std::vector<std::string> quick_flags;  ///< the suite's smoke run
  std::vector<std::string> docs_flags;   ///< the docs' run (the quick flags unless given)
  std::string figure;                    ///< the file the docs page shows; empty: the first .svg
  std::vector<std::string> hints;        ///< graded: the idea, the API, nearly the code
  std::vector<Question> questions;       ///< predictions to make before running it (may be empty)
};

/// Every lesson, in order.
class Manifest {
 public:
  /// Parses the manifest's text; throws std::runtime_error naming `origin` and what is wrong.
  static Manifest parse(const std::string& text, const std::string& origin);
  /// Reads and parses the file.
  static Manifest load(const std::filesystem::path& path);

  const std::vector<Lesson>& lessons() const { return lessons_; }
  /// The lesson a person means by `raw` ("1", "01"); throws UsageError for anything else.
  const Lesson& lesson(const std::string& raw) const;
  /// "01 02 03 ...", for error messages.
  std::string numbers() const;

 private:
  std::vector<Lesson> lessons_;
};

/// The files a lesson owns, relative to the project root: the lesson program, the exercise's
/// contract and stub, the reference solution, the checks and the docs page.
std::vector<std::string> lesson_files(const Lesson& lesson);

}  // namespace runner
