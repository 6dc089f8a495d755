#pragma once
/// \file
/// \brief A command's words and flags, parsed (with CLI11) against what that command accepts.

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace runner {

/// What one command accepts.
struct CommandSpec {
  std::string name;                       ///< "hint"
  std::string usage;                      ///< "hint N [--all]"
  std::string takes;                      ///< "a lesson number and optionally --all", for errors
  std::size_t min_words = 0;              ///< positional words required
  std::size_t max_words = 0;              ///< positional words allowed
  std::vector<std::string> flags;         ///< the flags it knows ("--all")
  bool passthrough = false;               ///< words after "--" go to the program it starts
  bool raw = false;                       ///< every word goes to the program as it is (trace)
  std::vector<std::string> options = {};  ///< the options that take one value ("--answers")
};

/// What one command was given: positional words, the flags it knows, and whatever followed "--".
struct Arguments {
  std::vector<std::string> words;
  std::vector<std::string> flags;             ///< as given, e.g. "--all"
  std::vector<std::string> passthrough;       ///< after "--": for the lesson
  std::map<std::string, std::string> values;  ///< the options given, with their values
  bool has(const std::string& flag) const;
};

/// `-h` or `--help` among a command's own words: what() is its usage line (printed, exit 0).
class HelpRequested : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses `args` (the words after the command's name). Throws UsageError naming an unknown
/// option, a missing or extra word, or "--" where the command takes none. A negative number is a
/// word (so "check -1" says it is not a lesson number).
Arguments parse_arguments(const CommandSpec& spec, const std::vector<std::string>& args);

}  // namespace runner
