#include "dev_check.h"

#include <fmt/format.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "commands.h"
#include "text_file.h"
#include "usage_error.h"

namespace runner {
namespace fs = std::filesystem;
namespace {

std::string read_text(const fs::path& path) { return read_file(path).value_or(""); }

// Files a lesson may own beside lesson_files(): lessons/<slug>_* (lesson 07's CUDA source, its
// header and the stand-in without the CUDA Toolkit).
bool extra_file_of(const Lesson& l, const std::string& relative) {
  return relative.rfind("lessons/" + l.slug + "_", 0) == 0;
}

void check_readme(const Manifest& manifest, const fs::path& root, std::vector<std::string>& problems) {
  // README rows: | 01 | `01_matmul_add` — Profile matmul + bias | what you learn |
  const std::regex row(R"(^\| (\d\d) \| `([a-z0-9_]+)` — ([^|]+?) \|)");
  std::istringstream in(read_text(root / "README.md"));
  std::vector<std::smatch> rows;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::size_t k = 0;
  for (const auto& line : lines) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    if (k >= manifest.lessons().size()) {
      problems.push_back(fmt::format("README.md lists lesson {} which the manifest does not have", m[1].str()));
      continue;
    }
    const Lesson& l = manifest.lessons()[k++];
    if (m[1] != l.number || m[2] != l.slug || m[3] != l.title)
      problems.push_back(
          fmt::format("README.md's lesson table row {} reads '{} | {} | {}', the manifest says '{} | {} | {}'", k,
                      m[1].str(), m[2].str(), m[3].str(), l.number, l.slug, l.title));
  }
  for (; k < manifest.lessons().size(); ++k)
    problems.push_back(fmt::format("README.md's lesson table lacks lesson {}", manifest.lessons()[k].number));
}

}  // namespace

std::vector<std::string> manifest_problems(const Manifest& manifest, const fs::path& root) {
  std::vector<std::string> problems;
  std::set<std::string> owned;
  for (const auto& l : manifest.lessons())
    for (const auto& f : lesson_files(l)) {
      owned.insert(f);
      if (!fs::is_regular_file(root / f)) problems.push_back(fmt::format("lesson {} has no {}", l.number, f));
    }
  for (const auto& l : manifest.lessons()) {
    const std::string page = read_text(root / "docs/lessons" / (l.slug + ".md"));
    if (!page.empty() && page.find("{#lesson_" + l.slug + "}") == std::string::npos)
      problems.push_back(fmt::format("docs/lessons/{}.md has no anchor {{#lesson_{}}}", l.slug, l.slug));
  }
  const std::regex lesson_file(R"(^\d\d_.*)");
  for (const char* dir : {"lessons", "exercises", "solutions", "tests/lessons", "docs/lessons"}) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root / dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file() || !std::regex_match(name, lesson_file)) continue;
      const std::string relative = std::string(dir) + "/" + name;
      if (owned.count(relative)) continue;
      bool extra = false;
      for (const auto& l : manifest.lessons()) extra = extra || extra_file_of(l, relative);
      if (!extra) problems.push_back(fmt::format("{} belongs to no lesson in the manifest", relative));
    }
  }
  check_readme(manifest, root, problems);
  return problems;
}

int dev_check(const Context& c, const Arguments& a) {
  if (a.words.size() != 1 || a.words[0] != "check") throw UsageError("usage: ./workbook dev check");
  const auto problems = manifest_problems(c.manifest, c.root);
  for (const auto& p : problems) fmt::print("dev check: {}\n", p);
  if (!problems.empty()) return 1;
  fmt::print("dev check: the manifest's {} lessons and the tree agree\n", c.manifest.lessons().size());
  return 0;
}

}  // namespace runner
