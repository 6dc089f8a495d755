#pragma once
/// \file
/// \brief What a lesson prints and writes: narration, the machine line, tables and trace files.

#include <filesystem>
#include <string>

#include "workbook/profiler/key_averages.h"
#include "workbook/profiler/profile.h"

namespace workbook {

/// Prints a paragraph of narration, wrapped to 88 columns, marked so it stands apart from data.
void narrate(const std::string& text);

/// Prints a lesson's heading and the machine line (CPU, BLAS, threads, LibTorch, Kineto, CUDA).
void print_lesson_header(const std::string& title);

/// Paths of the files `write_outputs` writes.
struct OutputFiles {
  std::filesystem::path trace;   ///< `tag`.json: chrome trace
  std::filesystem::path table;   ///< `tag`.txt: the key_averages table
  std::filesystem::path csv;     ///< `tag`.csv: the key_averages rows for machines
  std::filesystem::path svg;     ///< `tag`.svg: the timeline
  std::filesystem::path report;  ///< `tag`.html: the one-page report (`--report`), empty when not asked for
};

/// Makes every later write_outputs also write `tag`.html, the one-page report of
/// `./workbook report` (the lessons' shared `--report` flag sets it).
void write_html_reports(bool on);

/// Writes `dir`/`tag`.json (chrome trace), `tag`.txt (`table_text`), `tag`.csv (`averages`'
/// rows), `tag`.svg (timeline titled `title`) and, after write_html_reports(true), `tag`.html (the
/// report page) as one set (all written, then all renamed).
/// Throws std::runtime_error naming the file, UnsafeTarget for a path that is not a regular file.
OutputFiles write_outputs(const Profile& profile, const KeyAverages& averages, const std::string& table_text,
                          const std::filesystem::path& dir, const std::string& tag, const std::string& title);

/// What every lesson ends with: prints the key_averages table (sorted by device time when there
/// is any, CPU total otherwise), writes it with the trace and timeline (write_outputs) and prints
/// where the files went.
OutputFiles report_profile(const Profile& profile, bool device_time, const std::filesystem::path& dir,
                           const std::string& tag, const std::string& title, int row_limit = 15);

/// States a qualitative claim about this run together with the evidence from this run's
/// profile or tensors, and prints whether the run bears it out ("shown:" or "NOT shown by this
/// run:"). Lessons say nothing about the run that is not checked this way. Returns `holds`.
bool claim(bool holds, const std::string& sentence, const std::string& evidence);

/// The same for a lesson's finding (lessons/findings): anything with `holds`, `sentence` and
/// `evidence`, decided from the recorded profile.
template <class Finding>
bool claim(const Finding& finding) {
  return claim(finding.holds, finding.sentence, finding.evidence);
}

/// How many claims of this process the run did not bear out. With WORKBOOK_STRICT_CLAIMS=1 in
/// the environment (the suite's smoke runs set it), run_reporting_errors turns any into exit 3.
int claims_not_shown();

/// Prints where the files went, one path a line.
void print_written(const OutputFiles& files);

}  // namespace workbook
