#include "progress.h"
#include "workbook/profiler/atomic_file.h"

#include <fmt/format.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>

#include "file_lock.h"
#include "text_file.h"
#include "usage_error.h"

namespace runner {
namespace fs = std::filesystem;
namespace {

const std::regex kNumber("[0-9][0-9]");

}  // namespace

Progress parse_progress(const std::string& text, std::string& warning) {
  Progress p;
  try {
    const auto doc = nlohmann::json::parse(text);
    if (!doc.is_object()) throw std::runtime_error("not an object");
    // Named copies: iterating a temporary's items() would outlive it.
    const nlohmann::json done = doc.value("done", nlohmann::json::array());
    const nlohmann::json hints = doc.value("hints_seen", nlohmann::json::object());
    if (!done.is_array() || !hints.is_object()) throw std::runtime_error("'done' or 'hints_seen' of the wrong type");
    for (const auto& n : done) {
      if (!n.is_string() || !std::regex_match(n.get<std::string>(), kNumber))
        throw std::runtime_error("bad 'done' entry");
      p.done.insert(n.get<std::string>());
    }
    for (const auto& [n, seen] : hints.items()) {
      // Compared as 64-bit: get<int>() would wrap 4294967297 to 1 and pass.
      if (!std::regex_match(n, kNumber) || !seen.is_number_integer() || seen.get<std::int64_t>() < 0 ||
          seen.get<std::int64_t>() > 99)
        throw std::runtime_error("bad 'hints_seen' entry");
      p.hints_seen[n] = seen.get<int>();
    }
    const nlohmann::json predictions = doc.value("predictions", nlohmann::json::object());
    const nlohmann::json scores = doc.value("scores", nlohmann::json::object());
    const nlohmann::json reminded = doc.value("reminded", nlohmann::json::array());
    if (!predictions.is_object() || !scores.is_object() || !reminded.is_array())
      throw std::runtime_error("'predictions', 'scores' or 'reminded' of the wrong type");
    for (const auto& [n, answers] : predictions.items()) {
      if (!std::regex_match(n, kNumber) || !answers.is_object()) throw std::runtime_error("bad 'predictions' entry");
      for (const auto& [id, value] : answers.items()) {
        if (!std::regex_match(id, std::regex("[a-z0-9_]{1,64}")) || !value.is_string() ||
            value.get<std::string>().size() > 32)
          throw std::runtime_error("bad prediction");
        p.predictions[n][id] = value.get<std::string>();
      }
    }
    for (const auto& [n, score] : scores.items()) {
      if (!std::regex_match(n, kNumber) || !score.is_array() || score.size() != 2 || !score[0].is_number_integer() ||
          !score[1].is_number_integer() || score[0].get<std::int64_t>() < 0 ||
          score[0].get<std::int64_t>() > score[1].get<std::int64_t>() || score[1].get<std::int64_t>() > 99)
        throw std::runtime_error("bad 'scores' entry");
      p.scores[n] = {score[0].get<int>(), score[1].get<int>()};
    }
    for (const auto& n : reminded) {
      if (!n.is_string() || !std::regex_match(n.get<std::string>(), kNumber))
        throw std::runtime_error("bad 'reminded' entry");
      p.reminded.insert(n.get<std::string>());
    }
  } catch (const std::exception& e) {
    warning = fmt::format("is not valid progress data ({}); starting from a fresh state", e.what());
    return Progress{};
  }
  return p;
}

std::string progress_text(const Progress& p) {
  nlohmann::json doc;
  doc["done"] = p.done;
  doc["hints_seen"] = p.hints_seen;
  if (!p.predictions.empty()) doc["predictions"] = p.predictions;
  if (!p.scores.empty()) {
    nlohmann::json scores = nlohmann::json::object();
    for (const auto& [n, score] : p.scores) scores[n] = {score.first, score.second};
    doc["scores"] = scores;
  }
  if (!p.reminded.empty()) doc["reminded"] = p.reminded;
  return doc.dump(2) + "\n";
}

ProgressStore::ProgressStore(fs::path dir) : dir_(std::move(dir)) {}

void ProgressStore::check_kinds() const {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dir_, ec)) && !fs::is_directory(dir_, ec))
    throw UsageError(fmt::format("{} is not a directory: move it away to keep your progress there", dir_.string()));
  const fs::path file = dir_ / "progress.json";
  if (fs::exists(fs::symlink_status(file, ec)) && !fs::is_regular_file(file, ec))
    throw UsageError(fmt::format("{} is not a regular file: move it away", file.string()));
}

Progress ProgressStore::load() const {
  check_kinds();
  const auto text = read_file(dir_ / "progress.json");
  std::error_code ec;
  // Unreadable is not missing: saving over it would lose the learner's progress.
  if (!text && fs::exists(dir_ / "progress.json", ec))
    throw UsageError(
        fmt::format("cannot read {}: fix its permissions (your progress is in it)", (dir_ / "progress.json").string()));
  if (!text) return Progress{};
  std::string warning;
  Progress p = parse_progress(*text, warning);
  if (!warning.empty() && !warned_) {
    warned_ = true;
    fmt::print(stderr, "workbook: warning: {}/progress.json {}\n", dir_.filename().string(), warning);
  }
  return p;
}

void ProgressStore::update(const std::function<void(Progress&)>& change) const {
  check_kinds();
  std::error_code made;
  fs::create_directories(dir_, made);
  if (made) throw UsageError(fmt::format("cannot save progress in {}: {}", dir_.string(), made.message()));
  const FileLock lock(dir_ / "progress.lock");
  Progress p = load();
  change(p);
  try {
    workbook::write_file_atomically(dir_ / "progress.json", progress_text(p));
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("cannot save progress: {}", e.what()));
  }
}

}  // namespace runner
