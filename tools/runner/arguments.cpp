#include "arguments.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <map>
#include <regex>

#include "usage_error.h"

namespace runner {

bool Arguments::has(const std::string& flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

Arguments parse_arguments(const CommandSpec& spec, const std::vector<std::string>& args) {
  Arguments a;
  if (spec.raw) {
    a.words = args;
    if (a.words.size() < spec.min_words) throw UsageError(fmt::format("usage: ./workbook {}", spec.usage));
    return a;
  }
  auto split = std::find(args.begin(), args.end(), "--");
  if (split != args.end()) {
    if (!spec.passthrough)
      throw UsageError(fmt::format("{} takes no '--' (use: ./workbook {})", spec.name, spec.usage));
    a.passthrough.assign(split + 1, args.end());
  }
  std::vector<std::string> own(args.begin(), split);
  for (const auto& word : own)
    if (word == "-h" || word == "--help") throw HelpRequested(fmt::format("usage: ./workbook {}", spec.usage));

  CLI::App app{spec.name};
  app.set_help_flag();  // -h and --help are answered below, as the command's usage
  app.allow_extras();
  std::map<std::string, bool> given;
  for (const auto& flag : spec.flags) app.add_flag(flag, given[flag]);
  std::map<std::string, std::string> values;
  for (const auto& option : spec.options) app.add_option(option, values[option]);
  std::vector<std::string> reversed(own.rbegin(), own.rend());  // CLI11 takes its vector reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw UsageError(fmt::format("{}: {} (use: ./workbook {})", spec.name, e.what(), spec.usage));
  }
  const std::regex negative_number("-[0-9]+");
  for (const auto& word : app.remaining()) {
    if (word.size() > 1 && word[0] == '-' && !std::regex_match(word, negative_number))
      throw UsageError(fmt::format("unknown option '{}' for {} (use: ./workbook {})", word, spec.name, spec.usage));
    a.words.push_back(word);
  }
  for (const auto& flag : spec.flags)
    if (given[flag]) a.flags.push_back(flag);
  for (const auto& option : spec.options)
    if (app.count(option) > 0) a.values[option] = values[option];
  if (a.words.size() > spec.max_words)
    throw UsageError(fmt::format("{} takes {} (got '{}')", spec.name, spec.takes, a.words[spec.max_words]));
  if (a.words.size() < spec.min_words)
    throw UsageError(fmt::format("{} takes {} (use: ./workbook {})", spec.name, spec.takes, spec.usage));
  return a;
}

}  // namespace runner
