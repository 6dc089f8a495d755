#pragma once
/// \file
/// \brief One self-contained HTML file summarising traces — what TensorBoard's profiler plugin
/// showed: an overview per step, the operator table (= key_averages, sortable, filterable, by
/// input shape), the kernels with their names read, GPU busy per stream and step, the memory
/// timeline, a flame graph to zoom into, and the advisor's findings. No network: the CSS, the
/// script and the data are inside the page; it summarises, it embeds no raw events.

#include <string>
#include <vector>

#include "workbook/profiler/profile.h"

namespace workbook {

/// One trace for the report, under the name it is shown by (its file name).
struct ReportTrace {
  std::string name;  ///< "rank0.json"
  Profile profile;   ///< its events
};

/// The data one trace contributes to a report, as JSON (what the page's script draws): overview,
/// operators (the rows of `trace --json --limit 0`), operators_by_shape, kernels, gpu, memory,
/// flame, advice.
std::string report_data_json(const ReportTrace& trace);

/// The report page: every trace's data and the page's own CSS and script, inline.
std::string html_report(const std::vector<ReportTrace>& traces, const std::string& title);

}  // namespace workbook
