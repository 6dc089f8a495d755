// `./workbook trace FILE [--sort KEY] [--limit N] [--under NAME] [--json]`: the statistics table of any chrome
// trace (ours, Kineto's save(), Python's export_chrome_trace).
#include <fmt/format.h>

#include <cstring>
#include <string>

#include "workbook/chrome_trace.h"
#include "workbook/key_averages.h"

namespace {

// The events named `name` and everything beneath them.
workbook::Profile subtrees(const workbook::Profile& profile, const std::string& name) {
  std::vector<workbook::Event> kept;
  for (auto root : profile.find(name)) {
    kept.push_back(profile[root]);
    for (auto id : profile.descendants(root)) kept.push_back(profile[id]);
  }
  return workbook::Profile(std::move(kept));
}

}  // namespace

int main(int argc, char** argv) {
  std::string file, sort_by = "cpu_time_total", under;
  int limit = 30;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if ((arg == "--sort" || arg == "--limit" || arg == "--under") && i + 1 < argc) {
      std::string value = argv[++i];
      if (arg == "--under") {
        under = value;
      } else if (arg == "--sort") {
        sort_by = value;
      } else {
        try {
          limit = std::stoi(value);
        } catch (...) {
          fmt::print(stderr, "workbook trace: --limit takes a number (got '{}')\n", value);
          return 2;
        }
      }
    } else if (file.empty() && arg.rfind("--", 0) != 0) {
      file = arg;
    } else {
      fmt::print(stderr, "workbook trace: unexpected argument '{}' (usage: trace FILE [--sort KEY] [--limit N] [--under NAME] [--json])\n", arg);
      return 2;
    }
  }
  if (file.empty()) {
    fmt::print(stderr, "workbook trace: usage: trace FILE [--sort KEY] [--limit N] [--under NAME] [--json]\n");
    return 2;
  }
  try {
    workbook::Profile profile = workbook::load_chrome_trace(file);
    if (!under.empty()) profile = subtrees(profile, under);
    const workbook::KeyAverages averages(profile);
    workbook::TableOptions options;
    options.sort_by = sort_by;
    options.row_limit = limit;
    fmt::print("{}", json ? averages.to_json(options) : averages.table(options));
  } catch (const std::exception& e) {
    fmt::print(stderr, "workbook trace: {}\n", e.what());
    return 2;
  }
  return 0;
}
