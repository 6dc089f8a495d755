#include "build.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "file_lock.h"
#include "process.h"
#include "text_file.h"

namespace runner {
namespace fs = std::filesystem;
namespace {

// GCC's "path:line:col: error: ..." (column optional, "fatal error" too) and nvcc's
// "path(line): error: ...". Only lines that say "error" and are of a readable length are matched:
// libstdc++'s regex recurses per character, and a template error can run to many kilobytes.
const std::regex kDiagnostic(R"(^([^ ].*?)(?::(\d+)(?::\d+)?|\((\d+)\)): (?:fatal )?error: .*)");
constexpr std::size_t kLongestMatchedLine = 1000;
// Lines a compiler prints under a diagnostic: the source line, the caret, notes about it.
bool continues_diagnostic(const std::string& line) {
  return !line.empty() && (line[0] == ' ' || line.find(": note: ") != std::string::npos);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

struct Diagnostic {
  std::string path;
  std::vector<std::string> lines;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string build_error_excerpt(const std::string& log, const std::vector<std::string>& own_files,
                                std::size_t max_lines) {
  const auto lines = lines_of(log);
  std::vector<Diagnostic> diagnostics;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (lines[i].size() > kLongestMatchedLine || lines[i].find("error") == std::string::npos ||
        !std::regex_match(lines[i], m, kDiagnostic))
      continue;
    Diagnostic d{m[1].str(), {lines[i]}};
    while (i + 1 < lines.size() && continues_diagnostic(lines[i + 1]) && d.lines.size() < 8)
      d.lines.push_back(lines[++i]);
    diagnostics.push_back(std::move(d));
  }
  auto own = [&](const Diagnostic& d) {
    for (const auto& f : own_files)
      if (ends_with(d.path, f)) return true;
    return false;
  };
  std::vector<std::string> out;
  auto add = [&](const std::vector<std::string>& block) {
    for (const auto& l : block) {
      if (out.size() >= max_lines) return;
      out.push_back(l);
    }
  };
  for (const auto& d : diagnostics)
    if (own(d)) add(d.lines);
  for (const auto& d : diagnostics)
    if (!own(d)) add(d.lines);
  if (out.empty())
    for (const auto& l : lines)
      if (l.find("error") != std::string::npos || l.find("undefined reference") != std::string::npos) add({l});
  if (out.empty())
    for (std::size_t i = lines.size() > 20 ? lines.size() - 20 : 0; i < lines.size(); ++i) add({lines[i]});
  std::string text;
  for (const auto& l : out) text += l + "\n";
  return text;
}

Builder::Builder(fs::path root, fs::path build_dir, fs::path log)
    : root_(std::move(root)), build_dir_(std::move(build_dir)), log_(std::move(log)) {}

std::vector<std::string> Builder::cmake_build(const std::vector<std::string>& targets) const {
  std::vector<std::string> argv{"cmake", "--build", build_dir_.string(), "-j", jobs()};
  if (!targets.empty()) {
    argv.push_back("--target");
    argv.insert(argv.end(), targets.begin(), targets.end());
  }
  return argv;
}

// The build tree's lock: a build holds it exclusively; a program the build made holds it shared
// while it runs, so that no other runner relinks the program under it.
bool Builder::build(const std::vector<std::string>& targets, const std::vector<std::string>& own_files,
                    bool show_errors) const {
  std::string excerpt;
  {
    // The log is read back under the same lock: another runner's build would rewrite it.
    const FileLock lock(build_dir_ / ".workbook.lock", LOCK_EX);
    if (run_process(cmake_build(targets), {}, log_.string()) == 0) return true;
    excerpt = build_error_excerpt(read_file(log_).value_or(""), own_files);
  }
  if (!show_errors) return false;
  fmt::print(stderr, "{}", excerpt);
  // The log's path from the project root when it lies inside it (.workbook/build.log).
  std::error_code ec;
  const fs::path relative = fs::relative(log_, root_, ec);
  const bool inside = !ec && !relative.empty() && relative.begin()->string() != "..";
  fmt::print(stderr, "workbook: building {} failed (full log: {})\n", fmt::join(targets, " "),
             inside ? relative.string() : log_.string());
  return false;
}

bool Builder::build_all() const {
  const FileLock lock(build_dir_ / ".workbook.lock", LOCK_EX);
  return run_process(cmake_build({})) == 0;
}

std::string Builder::jobs() { return std::to_string(std::max(1u, std::thread::hardware_concurrency())); }

bool Builder::has_target(const std::string& target) const {
  // Makefiles list "... target", Ninja "target: phony".
  const auto [status, out] = capture_process({"cmake", "--build", build_dir_.string(), "--target", "help"});
  return status == 0 && (out.find("... " + target + "\n") != std::string::npos ||
                         out.find("\n" + target + ": ") != std::string::npos || out.rfind(target + ": ", 0) == 0);
}

int Builder::run_built(const std::vector<std::string>& argv, const Environment& env) const {
  const FileLock lock(build_dir_ / ".workbook.lock", LOCK_SH);
  return run_process(argv, env);
}

}  // namespace runner
