#pragma once
/// \file
/// \brief A whole file as text: the runner reads its manifest, state, logs and sources this way.

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace runner {

/// The file's bytes, or none when it cannot be opened.
inline std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace runner
