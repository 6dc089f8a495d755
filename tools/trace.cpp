// `./workbook trace FILE [--sort KEY] [--limit N] [--under NAME] [--json] [--gpu] [--svg OUT]`: the
// statistics table of any chrome trace (ours, Kineto's save(), Python's export_chrome_trace), or
// with --gpu where the GPU's time went (busy and idle per device and stream, kernels, the launch
// queue, a verdict per step); --svg also writes the per-step utilisation figure.
#include <fmt/format.h>

#include <cstring>
#include <string>

#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/gpu_analysis.h"
#include "workbook/profiler/key_averages.h"

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
  std::string file, sort_by = "cpu_time_total", under, svg;
  int limit = 30;
  bool json = false, gpu = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "--gpu") {
      gpu = true;
    } else if ((arg == "--sort" || arg == "--limit" || arg == "--under" || arg == "--svg") && i + 1 < argc) {
      std::string value = argv[++i];
      if (arg == "--svg") {
        svg = value;
      } else if (arg == "--under") {
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
      fmt::print(stderr,
                 "workbook trace: unexpected argument '{}' (usage: trace FILE [--sort KEY] [--limit N] [--under NAME] "
                 "[--json] [--gpu] [--svg OUT])\n",
                 arg);
      return 2;
    }
  }
  if (file.empty()) {
    fmt::print(
        stderr,
        "workbook trace: usage: trace FILE [--sort KEY] [--limit N] [--under NAME] [--json] [--gpu] [--svg OUT]\n");
    return 2;
  }
  try {
    workbook::Profile profile = workbook::load_chrome_trace(file);
    if (!under.empty()) profile = subtrees(profile, under);
    if (gpu || !svg.empty()) {
      const workbook::GpuAnalysis analysis = workbook::analyze_gpu(profile);
      if (!svg.empty()) workbook::write_file_atomically(svg, workbook::gpu_utilisation_svg(analysis, file));
      if (gpu) {
        fmt::print("{}", json ? workbook::gpu_analysis_json(analysis)
                              : workbook::format_gpu_analysis(analysis, std::size_t(limit > 0 ? limit : 1000000)));
        return 0;
      }
    }
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
