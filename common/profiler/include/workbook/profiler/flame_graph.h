#pragma once
/// \file
/// \brief Where the time goes as a flame graph: collapsed stacks (the format Python's
/// `export_stacks` writes and speedscope and flamegraph.pl read) and an SVG flame graph.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "workbook/profiler/profile.h"

namespace workbook {

/// One collapsed stack: the names from a root event down to one event, and that event's value.
struct CollapsedStack {
  std::vector<std::string> frames;  ///< root first
  std::int64_t value = 0;           ///< self time in µs (whole µs, as Python's export_stacks)
};

/// Every host event with at least 1 µs of self time, as a stack of the op tree's names (Python's
/// export_stacks walks Python frames; the op tree is what a C++ profile has). Every ProfilerStep#N
/// is the frame "ProfilerStep*", so the steps' identical stacks add up; order: by stack text.
std::vector<CollapsedStack> collapsed_stacks(const Profile& profile);

/// The stacks as text, one "frame;frame;frame value" line each; ' ', ';', '\\t' and '\\n' inside
/// a name become '_' (as in Python's export_stacks).
std::string collapsed_stacks_text(const Profile& profile);

/// Writes collapsed_stacks_text atomically.
void write_collapsed_stacks(const Profile& profile, const std::filesystem::path& path);

/// An SVG flame graph of the stacks: one row per depth, roots at the bottom, each box as wide as
/// its own self time plus that of the boxes above it (the calls made inside it), as a share of the
/// total, with its name where it fits and a tooltip (µs and share).
std::string flame_graph_svg(const Profile& profile, const std::string& title, int width = 1200);

}  // namespace workbook
