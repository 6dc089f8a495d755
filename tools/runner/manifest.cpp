#include "manifest.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "text_file.h"
#include "usage_error.h"

namespace runner {
namespace {

std::vector<std::string> split_flags(const std::string& flags) {
  std::vector<std::string> out;
  std::istringstream in(flags);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

std::string required_string(const nlohmann::json& entry, const char* key, std::size_t index) {
  const auto it = entry.find(key);
  if (it == entry.end() || !it->is_string())
    throw std::runtime_error(fmt::format("lesson #{} needs a string '{}'", index + 1, key));
  return it->get<std::string>();
}

Question parse_question(const nlohmann::json& entry, const std::string& lesson) {
  const auto text = [&](const char* key) {
    const auto it = entry.find(key);
    if (it == entry.end() || !it->is_string() || it->get<std::string>().empty())
      throw std::runtime_error(fmt::format("lesson {}: every question needs a string '{}'", lesson, key));
    return it->get<std::string>();
  };
  Question q;
  q.id = text("id");
  q.ask = text("ask");
  q.kind = text("kind");
  q.explain = text("explain");
  if (!std::regex_match(q.id, std::regex("[a-z0-9_]+")))
    throw std::runtime_error(fmt::format("lesson {}: question id '{}' is not lower_case_words", lesson, q.id));
  if (q.kind != "yes_no" && q.kind != "number")
    throw std::runtime_error(
        fmt::format("lesson {}: question '{}' has kind '{}' (yes_no or number)", lesson, q.id, q.kind));
  if (const auto t = entry.find("tolerance"); t != entry.end()) {
    if (!t->is_number() || t->get<double>() < 0 || q.kind != "number")
      throw std::runtime_error(
          fmt::format("lesson {}: question '{}': a tolerance is a number >= 0, for a number", lesson, q.id));
    q.tolerance = t->get<double>();
  }
  return q;
}

Lesson parse_lesson(const nlohmann::json& entry, std::size_t index) {
  if (!entry.is_object()) throw std::runtime_error(fmt::format("lesson #{} is not an object", index + 1));
  Lesson l;
  l.number = required_string(entry, "number", index);
  l.slug = required_string(entry, "slug", index);
  l.title = required_string(entry, "title", index);
  l.goal = required_string(entry, "goal", index);
  if (!std::regex_match(l.number, std::regex("[0-9][0-9]")) ||
      !std::regex_match(l.slug, std::regex(l.number + "_[a-z0-9_]+")))
    throw std::runtime_error(fmt::format("lesson '{}' needs a two-digit number and a slug '{}_name' (got '{}')",
                                         l.number, l.number, l.slug));
  const auto gpu = entry.find("needs_gpu");
  if (gpu == entry.end() || !gpu->is_boolean())
    throw std::runtime_error(fmt::format("lesson {} needs a boolean 'needs_gpu'", l.number));
  l.needs_gpu = gpu->get<bool>();
  l.quick_flags = split_flags(required_string(entry, "quick_flags", index));
  l.docs_flags =
      entry.contains("docs_flags") ? split_flags(required_string(entry, "docs_flags", index)) : l.quick_flags;
  if (entry.contains("figure")) l.figure = required_string(entry, "figure", index);
  const auto hints = entry.find("hints");
  if (hints == entry.end() || !hints->is_array() || hints->empty())
    throw std::runtime_error(fmt::format("lesson {} needs a non-empty list of 'hints'", l.number));
  for (const auto& h : *hints) {
    if (!h.is_string()) throw std::runtime_error(fmt::format("lesson {}: every hint is a string", l.number));
    l.hints.push_back(h.get<std::string>());
  }
  if (const auto questions = entry.find("questions"); questions != entry.end()) {
    if (!questions->is_array()) throw std::runtime_error(fmt::format("lesson {}: 'questions' is a list", l.number));
    for (const auto& q : *questions) {
      if (!q.is_object()) throw std::runtime_error(fmt::format("lesson {}: every question is an object", l.number));
      l.questions.push_back(parse_question(q, l.number));
      for (std::size_t k = 0; k + 1 < l.questions.size(); ++k)
        if (l.questions[k].id == l.questions.back().id)
          throw std::runtime_error(
              fmt::format("lesson {}: question '{}' is listed twice", l.number, l.questions[k].id));
    }
  }
  return l;
}

}  // namespace

Manifest Manifest::parse(const std::string& text, const std::string& origin) {
  Manifest m;
  try {
    // CMake reads the same file and splits its lists at ';'.
    if (text.find(';') != std::string::npos) throw std::runtime_error("';' is not allowed (it splits CMake lists)");
    const auto doc = nlohmann::json::parse(text);
    const auto lessons = doc.find("lessons");
    if (lessons == doc.end() || !lessons->is_array() || lessons->empty())
      throw std::runtime_error("needs a non-empty list 'lessons'");
    for (std::size_t i = 0; i < lessons->size(); ++i) {
      Lesson l = parse_lesson((*lessons)[i], i);
      for (const auto& other : m.lessons_)
        if (other.number == l.number) throw std::runtime_error(fmt::format("lesson {} is listed twice", l.number));
      if (!m.lessons_.empty() && m.lessons_.back().number >= l.number)
        throw std::runtime_error(fmt::format("lesson {} is out of order", l.number));
      m.lessons_.push_back(std::move(l));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON ({})", origin, e.what()));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("{}: {}", origin, e.what()));
  }
  return m;
}

Manifest Manifest::load(const std::filesystem::path& path) {
  const auto text = read_file(path);
  if (!text) throw std::runtime_error(fmt::format("cannot read {}", path.string()));
  return parse(*text, path.filename().string());
}

const Lesson& Manifest::lesson(const std::string& raw) const {
  if (!std::regex_match(raw, std::regex("[0-9]{1,3}")))
    throw UsageError(fmt::format("'{}' is not a lesson number (lessons: {})", raw, numbers()));
  const std::string number = fmt::format("{:02d}", std::stoi(raw));
  for (const auto& l : lessons_)
    if (l.number == number) return l;
  throw UsageError(fmt::format("no lesson {} (lessons: {})", raw, numbers()));
}

std::string Manifest::numbers() const {
  std::string out;
  for (const auto& l : lessons_) out += (out.empty() ? "" : " ") + l.number;
  return out;
}

std::vector<std::string> lesson_files(const Lesson& l) {
  return {"lessons/" + l.slug + ".cpp",
          "exercises/" + l.slug + ".h",
          "exercises/" + l.slug + ".cpp",
          "solutions/" + l.slug + ".cpp",
          "tests/lessons/" + l.slug + "_test.cpp",
          "docs/lessons/" + l.slug + ".md"};
}

}  // namespace runner
