#include "workbook/lesson/lesson_output.h"

#include <fmt/format.h>

#include <sstream>

#include "workbook/lesson/machine.h"
#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/html_report.h"
#include "workbook/profiler/svg.h"

namespace workbook {

void narrate(const std::string& text) {
  std::istringstream words(text);
  std::string word, line;
  std::string out;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > 84) {
      out += "  | " + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += "  | " + line + "\n";
  fmt::print("\n{}\n", out);
}

void print_lesson_header(const std::string& title) {
  fmt::print("== {} ==\n{}\n", title, machine_line(machine_info()));
}

namespace {
bool html_reports = false;  // --report: write_outputs adds the report page
}  // namespace

void write_html_reports(bool on) { html_reports = on; }

OutputFiles write_outputs(const Profile& profile, const KeyAverages& averages, const std::string& table_text,
                          const std::filesystem::path& dir, const std::string& tag, const std::string& title) {
  OutputFiles files{dir / (tag + ".json"), dir / (tag + ".txt"), dir / (tag + ".csv"), dir / (tag + ".svg"),
                    html_reports ? dir / (tag + ".html") : std::filesystem::path()};
  TraceOptions trace;
  trace.trace_name = title;
  TimelineOptions timeline;
  timeline.title = title;
  // One set: an interrupted run leaves the previous run's four files, never a mix.
  FileSet set;
  set.stage(files.trace, to_chrome_trace(profile, trace));
  set.stage(files.table, table_text);
  set.stage(files.csv, averages.to_csv());
  set.stage(files.svg, timeline_svg(profile, timeline));
  if (!files.report.empty()) set.stage(files.report, html_report({{tag + ".json", profile}}, title));
  set.commit();
  return files;
}

OutputFiles report_profile(const Profile& profile, bool device_time, const std::filesystem::path& dir,
                           const std::string& tag, const std::string& title, int row_limit) {
  const std::string sort_by = device_time ? "cuda_time_total" : "cpu_time_total";
  // Built once: the printed table, the .txt and the .csv come from the same rows.
  const KeyAverages averages(profile);
  const std::string table = averages.table(sort_by, row_limit);
  fmt::print("\nkey_averages().table(sort_by=\"{}\", row_limit={})\n{}", sort_by, row_limit, table);
  // Python's memory units, kept for parity, read as megabits to some: say once what they are.
  if (table.find(" Mb") != std::string::npos || table.find(" Kb") != std::string::npos ||
      table.find(" Gb") != std::string::npos)
    fmt::print("(memory as torch.profiler prints it: Kb, Mb and Gb are KiB, MiB and GiB: 1024-based bytes)\n");
  const OutputFiles files = write_outputs(profile, averages, table, dir, tag, title);
  print_written(files);
  return files;
}

namespace {
int not_shown = 0;
}

bool claim(bool holds, const std::string& sentence, const std::string& evidence) {
  if (!holds) ++not_shown;
  fmt::print("  {} {}\n      evidence from this run: {}\n", holds ? "shown:" : "NOT shown by this run:", sentence,
             evidence);
  return holds;
}

int claims_not_shown() { return not_shown; }

void print_written(const OutputFiles& files) {
  fmt::print("wrote {}\n      {}\n      {}\n      {}\n", files.trace.string(), files.table.string(), files.csv.string(),
             files.svg.string());
  if (!files.report.empty()) fmt::print("      {} (open it in a browser)\n", files.report.string());
}

}  // namespace workbook
