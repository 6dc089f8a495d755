// `./workbook trace FILE [--sort KEY] [--limit N] [--under NAME] [--json] [--gpu] [--kernels] [--advise]
// [--svg OUT] [--out OUT]`,
// `./workbook trace --ranks FILE... | DIR [--json] [--svg OUT]`:
// the statistics table of any chrome trace (ours, Kineto's save(), Python's export_chrome_trace), or
// with --gpu where the GPU's time went (busy and idle per device and stream, kernels, the launch
// queue, a verdict per step); --kernels lists the kernels by time with what each name says;
// --advise runs the articles' cheat sheet on it; --svg also writes the per-step utilisation figure; --out writes the trace read (after --under) again,
// gzip-compressed when its name ends in .gz.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "workbook/profiler/advisor.h"
#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/format.h"
#include "workbook/profiler/gpu_analysis.h"
#include "workbook/profiler/kernel_names.h"
#include "workbook/profiler/key_averages.h"
#include "workbook/profiler/multi_rank.h"

namespace {

// 0 when everything printed reached stdout; 1, with a line on stderr, when a write failed (a full
// disk, a closed pipe): a table that was cut short must not look like success.
int stdout_written() {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return 0;
  fmt::print(stderr, "workbook trace: could not write the output: {}\n", std::strerror(errno));
  return 1;
}

// The kernels by summed time, each with its decoded name (text or JSON), at most `limit` (0: all).
std::string kernel_list(const workbook::GpuAnalysis& analysis, int limit, bool json) {
  const std::size_t shown = limit > 0 ? std::min(analysis.kernels.size(), std::size_t(limit)) : analysis.kernels.size();
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& k = analysis.kernels[i];
      const workbook::KernelName decoded = workbook::decode_kernel_name(k.name);
      nlohmann::json fields = nlohmann::json::object();
      for (const auto& [key, value] : decoded.fields) fields[key] = value;
      out.push_back({{"name", k.name},
                     {"count", k.count},
                     {"total_us", double(k.total_ns) / 1e3},
                     {"share", k.share},
                     {"family", decoded.family},
                     {"fields", fields}});
    }
    return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  std::string text = fmt::format("kernels by time ({} of {}), each name read where its family is known:\n", shown,
                                 analysis.kernels.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& k = analysis.kernels[i];
    const workbook::KernelName decoded = workbook::decode_kernel_name(k.name);
    const std::string fields = decoded.describe_fields();
    text += fmt::format("  {:5.1f}%  {:>10}  x{:<5} {}{}\n          {}\n", 100 * k.share,
                        workbook::format_time_us(double(k.total_ns) / 1e3), k.count, decoded.family,
                        fields.empty() ? "" : ": " + fields, workbook::printable(k.name));
  }
  return text;
}

}  // namespace

// Natural order: "rank2.json" before "rank10.json".
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t i_end = i, j_end = j;
      while (i_end < a.size() && std::isdigit(static_cast<unsigned char>(a[i_end]))) ++i_end;
      while (j_end < b.size() && std::isdigit(static_cast<unsigned char>(b[j_end]))) ++j_end;
      const std::string x = a.substr(i, i_end - i), y = b.substr(j, j_end - j);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i_end, j = j_end;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// Whether a folder's file is a trace: `.json`, or gzip-compressed `.json.gz` (Kineto's `.pt.trace.json.gz`).
bool is_trace_file_name(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  const auto ends_with = [&](std::string_view end) {
    return name.size() > end.size() && name.compare(name.size() - end.size(), end.size(), end) == 0;
  };
  return ends_with(".json") || ends_with(".json.gz");
}

// The rank traces named on the command line, a folder standing for its traces in natural order.
std::vector<std::string> rank_files(const std::vector<std::string>& arguments) {
  std::vector<std::string> files;
  for (const auto& argument : arguments) {
    if (!std::filesystem::is_directory(argument)) {
      files.push_back(argument);
      continue;
    }
    std::vector<std::string> inside;
    for (const auto& entry : std::filesystem::directory_iterator(argument))
      if (entry.is_regular_file() && is_trace_file_name(entry.path())) inside.push_back(entry.path().string());
    std::sort(inside.begin(), inside.end(), natural_less);
    if (inside.empty()) throw std::invalid_argument(argument + ": a folder without .json or .json.gz traces");
    files.insert(files.end(), inside.begin(), inside.end());
  }
  return files;
}

// The profile lives until the process ends, never destroyed: the program exits right after it
// prints, and handing a big trace's strings and shape lists back to the allocator one by one
// took an eighth of the run (100 MB: 658 000 events); the system reclaims them at once. Held by a
// static pointer, so leak checkers see it as still reachable.
workbook::Profile& kept_until_exit(workbook::Profile profile) {
  static workbook::Profile* kept = nullptr;
  kept = new workbook::Profile(std::move(profile));
  return *kept;
}

// `trace --ranks`: the ranks of one job read together.
int print_ranks(const std::vector<std::string>& arguments, bool json, const std::string& svg) {
  const std::vector<std::string> files = rank_files(arguments);
  std::vector<workbook::Profile> ranks;
  for (const auto& f : files) ranks.push_back(workbook::load_chrome_trace(f));
  // Named by file name when those tell the ranks apart (one folder), else by the path given.
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(std::filesystem::path(f).filename().string());
  std::vector<std::string> sorted_names = names;
  std::sort(sorted_names.begin(), sorted_names.end());
  if (std::adjacent_find(sorted_names.begin(), sorted_names.end()) != sorted_names.end()) names = files;
  const workbook::MultiRankAnalysis analysis = workbook::analyze_ranks(ranks, names);
  if (!svg.empty()) {
    for (const auto& f : files) {
      std::error_code same_error;
      if (std::filesystem::equivalent(svg, f, same_error))
        throw std::invalid_argument("--svg " + svg + " is one of the input traces: not overwritten");
    }
    workbook::write_file_atomically(
        svg, workbook::ranks_timeline_svg(ranks, analysis, {"the ranks on one clock", 1200, 18}));
  }
  fmt::print("{}", json ? workbook::multi_rank_json(analysis) : workbook::format_multi_rank(analysis));
  return stdout_written();
}

constexpr const char* kUsage =
    "usage: workbook trace FILE [--sort KEY] [--limit N] [--under NAME] [--json] [--gpu] [--kernels] [--advise]\n"
    "                            [--svg OUT] [--out OUT]\n"
    "       workbook trace --ranks FILE FILE... | DIR [--json] [--svg OUT]\n"
    "\n"
    "Reads a Chrome trace (a lesson's, Python's torch.profiler's or Kineto's; .json, or gzip-compressed\n"
    "as in Kineto's .pt.trace.json.gz, whatever the name)\n"
    "and prints what Python's key_averages().table() would.\n"
    "  --sort KEY     the table's order: cpu_time_total (default), self_cpu_time_total, cuda_time_total,\n"
    "                 self_cuda_time_total, cpu_memory_usage, self_cpu_memory_usage, count, ...\n"
    "  --limit N      at most N rows (default 30; 0: all)\n"
    "  --under NAME   only the events named NAME and everything beneath them\n"
    "  --json         the rows as JSON instead of a table\n"
    "  --gpu          the GPU view: busy and idle time per device, stream and step, the launch queue\n"
    "  --kernels      the kernels by time, each name decoded where its family is known\n"
    "  --advise       the articles' cheat sheet as rules (\"if you see this, it usually means that\"): each\n"
    "                 finding with its evidence and the rule's threshold, then the rules that stayed silent\n"
    "  --svg OUT      also draw the timeline as an SVG (a new or regular, writable file)\n"
    "  --out OUT      also write the trace read (after --under) as Kineto-style JSON, gzip-compressed\n"
    "                 when OUT ends in .gz: a subtree cut out, or a trace compressed\n"
    "  --ranks        the traces are the ranks of one job (a folder: its .json and .json.gz files, rank2\n"
    "                 before rank10):\n"
    "                 per rank, step time, communication hidden under computation and exposed, the\n"
    "                 time it waited at the collectives for the last rank; the straggler. --svg OUT: the\n"
    "                 ranks' compute and communication lanes on one clock, overlap shaded\n"
    "  --help, -h     this text\n";

int main(int argc, char** argv) {
  std::string file, sort_by = "cpu_time_total", under, svg, out;
  int limit = 30;
  bool json = false, gpu = false, kernels = false, ranks = false, advise = false;
  std::vector<std::string> rank_arguments;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kUsage);
      return stdout_written();
    }
    if (arg == "--json") {
      json = true;
    } else if (arg == "--gpu") {
      gpu = true;
    } else if (arg == "--kernels") {
      kernels = true;
    } else if (arg == "--advise") {
      advise = true;
    } else if (arg == "--ranks") {
      ranks = true;
    } else if ((arg == "--sort" || arg == "--limit" || arg == "--under" || arg == "--svg" || arg == "--out") &&
               i + 1 < argc) {
      std::string value = argv[++i];
      if (arg == "--svg") {
        svg = value;
      } else if (arg == "--out") {
        out = value;
      } else if (arg == "--under") {
        under = value;
      } else if (arg == "--sort") {
        sort_by = value;
      } else {
        // The whole text must be an integer: "5abc" and "1e3" are mistakes, not 5 and 1.
        const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), limit);
        if (value.empty() || error != std::errc() || end != value.data() + value.size() || limit < 0) {
          fmt::print(stderr, "workbook trace: --limit takes a whole number of rows, 0 for all (got '{}')\n",
                     workbook::printable(value));
          return 2;
        }
      }
    } else if (arg.rfind("--", 0) != 0 &&
               (file.empty() || std::find(argv + 1, argv + argc, std::string("--ranks")) != argv + argc)) {
      if (file.empty()) file = arg;
      rank_arguments.push_back(arg);
    } else {
      fmt::print(stderr,
                 "workbook trace: unexpected argument '{}' (usage: trace FILE [--sort KEY] [--limit N] [--under NAME] "
                 "[--json] [--gpu] [--kernels] [--advise] [--svg OUT] [--out OUT])\n",
                 workbook::printable(arg));
      return 2;
    }
  }
  if (file.empty()) {
    fmt::print(stderr,
               "workbook trace: usage: trace FILE [--sort KEY] [--limit N] [--under NAME] [--json] [--gpu] [--kernels] "
               "[--advise] [--svg OUT] [--out OUT]\n");
    return 2;
  }
  if (ranks) {
    const bool other_flag = std::any_of(argv + 1, argv + argc, [](const char* a) {
      const std::string flag = a;
      return flag == "--sort" || flag == "--limit" || flag == "--under" || flag == "--gpu" || flag == "--kernels" ||
             flag == "--out" || flag == "--advise";
    });
    if (other_flag) {
      fmt::print(stderr,
                 "workbook trace: --ranks takes only --json and --svg (it compares ranks, not one trace's ops)\n");
      return 2;
    }
    try {
      return print_ranks(rank_arguments, json, svg);
    } catch (const std::exception& e) {
      fmt::print(stderr, "workbook trace: --ranks: {}\n", workbook::printable(e.what()));
      return 2;
    }
  }
  try {
    // Every flag is checked before anything is read or written.
    (void)workbook::KeyAverages(workbook::Profile{}).sorted(sort_by);  // throws on an unknown key
  } catch (const std::exception& e) {
    fmt::print(stderr, "workbook trace: --sort: {}\n", workbook::printable(e.what()));
    return 2;
  }
  for (const auto& [flag, value] : {std::pair{"--svg", &svg}, {"--under", &under}, {"--out", &out}}) {
    if (std::find(argv + 1, argv + argc, std::string(flag)) != argv + argc && value->empty()) {
      fmt::print(stderr, "workbook trace: {} needs a value (got an empty one)\n", flag);
      return 2;
    }
  }
  if (int(kernels) + int(gpu) + int(advise) > 1) {
    fmt::print(stderr, "workbook trace: --kernels, --gpu and --advise are three views of a trace: give one\n");
    return 2;
  }
  for (const auto& [flag, value] : {std::pair{"--svg", &svg}, {"--out", &out}}) {
    std::error_code same_error;
    if (!value->empty() && std::filesystem::equivalent(*value, file, same_error)) {
      fmt::print(stderr, "workbook trace: {} {} is the input trace itself: not overwritten\n", flag,
                 workbook::printable(*value));
      return 2;
    }
  }
  if (!svg.empty() && svg == out) {
    fmt::print(stderr, "workbook trace: --svg and --out name the same file\n");
    return 2;
  }
  try {
    workbook::Profile& profile = kept_until_exit(workbook::load_chrome_trace(file));
    if (profile.empty()) {
      fmt::print(stderr,
                 "workbook trace: {}: the trace holds no complete events ('X', 'B'/'E' pairs or memory instants)\n",
                 workbook::printable(file));
      return 2;
    }
    if (!under.empty()) {
      profile = workbook::subtrees(profile, under);
      if (profile.empty()) {
        fmt::print(stderr, "workbook trace: no event named '{}' in {}\n", workbook::printable(under),
                   workbook::printable(file));
        return 2;
      }
    }
    // Written once the input is known good for what was asked: bad input writes nothing.
    const auto write_out = [&] {
      if (!out.empty()) workbook::write_chrome_trace(profile, out);
    };
    if (kernels) {
      const workbook::GpuAnalysis analysis = workbook::analyze_gpu(profile);
      if (analysis.kernels.empty()) {
        fmt::print(stderr, "workbook trace: {}: no GPU kernels in this trace\n", workbook::printable(file));
        return 2;
      }
      write_out();
      if (!svg.empty()) workbook::write_file_atomically(svg, workbook::gpu_utilisation_svg(analysis, file));
      fmt::print("{}", kernel_list(analysis, limit, json));
      return stdout_written();
    }
    write_out();
    if (advise) {
      const std::vector<workbook::Advice> advice = workbook::advise(profile);
      if (!svg.empty())
        workbook::write_file_atomically(svg, workbook::gpu_utilisation_svg(workbook::analyze_gpu(profile), file));
      fmt::print("{}", json ? workbook::advice_json(advice) : workbook::format_advice(advice));
      return stdout_written();
    }
    if (gpu || !svg.empty()) {
      const workbook::GpuAnalysis analysis = workbook::analyze_gpu(profile);
      if (!svg.empty()) workbook::write_file_atomically(svg, workbook::gpu_utilisation_svg(analysis, file));
      if (gpu) {
        fmt::print("{}", json ? workbook::gpu_analysis_json(analysis)
                              : workbook::format_gpu_analysis(analysis, std::size_t(limit > 0 ? limit : 1000000)));
        return stdout_written();
      }
    }
    const workbook::KeyAverages averages(profile);
    workbook::TableOptions options;
    options.sort_by = sort_by;
    options.row_limit = limit;
    fmt::print("{}", json ? averages.to_json(options) : averages.table(options));
  } catch (const std::exception& e) {
    fmt::print(stderr, "workbook trace: {}\n", workbook::printable(e.what()));
    return 2;
  }
  return stdout_written();
}
