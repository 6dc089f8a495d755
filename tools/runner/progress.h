#pragma once
/// \file
/// \brief The learner's progress (which exercises pass, how many hints were shown), kept as data in
/// .workbook/progress.json: read, never evaluated.

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>

namespace runner {

/// What the runner remembers between commands.
struct Progress {
  std::set<std::string> done;             ///< exercise numbers whose check passed ("01")
  std::map<std::string, int> hints_seen;  ///< exercise number -> hints shown so far
  /// lesson number -> question id -> the learner's prediction ("yes", "no", a number)
  std::map<std::string, std::map<std::string, std::string>> predictions;
  /// lesson number -> {right, asked} of the last run scored against predictions
  std::map<std::string, std::pair<int, int>> scores;
  std::set<std::string> reminded;  ///< lessons whose run already said that `predict` exists
};

/// Reads the progress text; anything that is not the expected JSON gives `warning` and a fresh
/// Progress (a corrupt file must never stop the learner, nor run anything).
Progress parse_progress(const std::string& text, std::string& warning);
/// The JSON text for `p`.
std::string progress_text(const Progress& p);

/// The .workbook/ folder: load, change and save the progress under a lock, atomically.
class ProgressStore {
 public:
  explicit ProgressStore(std::filesystem::path dir);
  /// The current progress (a warning line on stderr if the file was corrupt). Throws UsageError
  /// when .workbook or the file is a path of the wrong kind.
  Progress load() const;
  /// Loads, applies `change`, saves: two runners at once cannot lose each other's update.
  void update(const std::function<void(Progress&)>& change) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  void check_kinds() const;
  std::filesystem::path dir_;
  mutable bool warned_ = false;  ///< a corrupt file is said once per command
};

}  // namespace runner
