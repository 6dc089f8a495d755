#pragma once
/// \file
/// \brief `./workbook dev check`: the manifest against the tree, both ways, as rustlings'
/// `dev check` does. Adding a lesson is one manifest entry plus that lesson's own files.

#include <filesystem>
#include <string>
#include <vector>

#include "manifest.h"

namespace runner {

/// Every problem found, one sentence each (empty: the tree and the manifest agree):
/// - a manifest entry without one of its files (lesson, exercise .h/.cpp, solution, checks, docs page);
/// - a lesson file (lessons/NN_*, exercises/NN_*, solutions/NN_*, tests/lessons/NN_*, docs/lessons/NN_*)
///   that no entry owns;
/// - a docs page without its anchor {#lesson_<slug>};
/// - README.md's lesson table not listing the manifest's lessons in order (number, slug, title).
std::vector<std::string> manifest_problems(const Manifest& manifest, const std::filesystem::path& root);

}  // namespace runner
