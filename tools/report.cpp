// `./workbook report FILE... -o OUT.html [--title TEXT]`: one self-contained HTML page summarising
// the traces (overview per step, operators, kernels, GPU busy, memory, flame graph, advisor);
// gzip-compressed when OUT ends in .gz. Bad input: one line, exit 2, nothing written.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/format.h"
#include "workbook/profiler/gzip.h"
#include "workbook/profiler/html_report.h"

namespace {

constexpr const char* kUsage =
    "usage: workbook report FILE... -o OUT.html [--title TEXT]\n"
    "\n"
    "Writes one self-contained HTML page (no network: open it from disk) summarising the traces: each\n"
    "step's time split into CPU ops, GPU kernels, copies and idle; the operator table (key_averages,\n"
    "sortable, filterable, by input shape); the kernels with their names read; GPU busy per stream and\n"
    "step; the memory timeline; a flame graph to zoom into; the advisor's findings (trace --advise).\n"
    "  -o, --out OUT   the page (gzip-compressed when OUT ends in .gz)\n"
    "  --title TEXT    its heading (default: the traces' names)\n"
    "  --help, -h      this text\n";

int usage_error(const std::string& message) {
  fmt::print(stderr, "workbook report: {}\n", workbook::printable(message));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  std::string out, title;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kUsage);
      return std::fflush(stdout) == 0 ? 0 : 1;
    }
    if ((arg == "-o" || arg == "--out" || arg == "--title") && i + 1 < argc) {
      (arg == "--title" ? title : out) = argv[++i];
    } else if (arg.rfind("-", 0) == 0) {
      return usage_error(
          fmt::format("unexpected argument '{}' (usage: report FILE... -o OUT.html [--title TEXT])", arg));
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) return usage_error("no trace given (usage: report FILE... -o OUT.html [--title TEXT])");
  if (out.empty()) return usage_error("-o OUT.html is missing: where to write the page");
  for (const auto& f : files) {
    std::error_code same_error;
    if (std::filesystem::equivalent(out, f, same_error))
      return usage_error(fmt::format("-o {} is one of the input traces: not overwritten", out));
  }
  try {
    std::vector<workbook::ReportTrace> traces;
    std::string names;
    for (const auto& f : files) {
      workbook::Profile profile = workbook::load_chrome_trace(f);
      if (profile.empty()) return usage_error(f + ": the trace holds no complete events");
      const std::string name = std::filesystem::path(f).filename().string();
      names += (names.empty() ? "" : ", ") + name;
      traces.push_back({name, std::move(profile)});
    }
    const std::string page = workbook::html_report(traces, title.empty() ? "Profile report: " + names : title);
    const bool gzip = std::filesystem::path(out).extension() == ".gz";
    workbook::write_file_atomically(out, gzip ? workbook::gzip_compress(page) : page);
    fmt::print("report: {} ({}, {} trace{})\n", out,
               workbook::format_memory(std::int64_t(std::filesystem::file_size(out))), traces.size(),
               traces.size() == 1 ? "" : "s");
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  return std::fflush(stdout) == 0 && !std::ferror(stdout) ? 0 : 1;
}
