// The memory timeline on a profile whose allocations are known: running sums, the peak and the op
// that reached it, windows, device memory kept apart, and the figure.
#include <doctest/doctest.h>

#include <limits>

#include "synthetic_events.h"
#include "workbook/profiler/memory_timeline.h"

using testing::make_event;
using workbook::Category;

namespace {

workbook::Event memory(std::int64_t at_ns, std::int64_t bytes,
                       workbook::DeviceType device = workbook::DeviceType::cpu) {
  workbook::Event e = make_event("[memory]", at_ns, at_ns, Category::memory);
  e.bytes = bytes;
  e.device_type = device;
  return e;
}

// step [0, 100] us: "aten::mm" [10, 20] allocates 400 B, "aten::mul" [30, 40] 600 B, then a free
// of 400 B inside "release" [50, 60], a free of 600 B outside every op at 90 us; a CUDA allocation
// of 1 MB at 35 us.
workbook::Profile sample() {
  return workbook::Profile({make_event("ProfilerStep#1", 0, 80000, Category::user_annotation),
                            make_event("aten::mm", 10000, 20000), memory(15000, 400),
                            make_event("aten::mul", 30000, 40000), memory(32000, 600),
                            memory(35000, 1 << 20, workbook::DeviceType::cuda), make_event("release", 50000, 60000),
                            memory(55000, -400), memory(90000, -600)});
}

}  // namespace

TEST_CASE("the peak is the largest running sum, reached by the op around the allocation") {
  const auto p = sample();
  const auto t = workbook::memory_timeline(p);
  REQUIRE(t.points.size() == 4);  // the CUDA allocation is not CPU memory
  CHECK(t.points[0].live_bytes == 400);
  CHECK(t.points[1].live_bytes == 1000);
  CHECK(t.points[2].live_bytes == 600);
  CHECK(t.points[3].live_bytes == 0);
  CHECK(t.peak_bytes == 1000);
  REQUIRE(t.peak_event);
  const auto op = workbook::allocating_op(p, *t.peak_event);
  REQUIRE(op);
  CHECK(p[*op].name == "aten::mul");
  CHECK_FALSE(workbook::allocating_op(p, t.points[3].event));  // a free outside every op
}

TEST_CASE("live bytes at a moment and the peak inside a window") {
  const auto t = workbook::memory_timeline(sample());
  CHECK(t.live_at(0) == 0);
  CHECK(t.live_at(15000) == 400);  // an event counts from its own moment on
  CHECK(t.live_at(31999) == 400);
  CHECK(t.live_at(60000) == 600);
  CHECK(t.live_at(1000000) == 0);
  CHECK(t.peak_between(0, 20000) == 400);
  CHECK(t.peak_between(50000, 100000) == 1000);  // the level at the window's start counts
  CHECK(t.peak_between(56000, 100000) == 600);
  CHECK(t.peak_between(60001, 89999) == 600);  // no event inside: the level there
}

TEST_CASE("device memory has a timeline of its own") {
  const auto t = workbook::memory_timeline(sample(), workbook::DeviceType::cuda, 0);
  REQUIRE(t.points.size() == 1);
  CHECK(t.peak_bytes == 1 << 20);
  CHECK(workbook::memory_timeline(sample(), workbook::DeviceType::cuda, 1).points.empty());
}

TEST_CASE("a timeline that only frees has no peak; hostile sizes saturate") {
  const workbook::Profile frees({memory(10, -5), memory(20, -7)});
  const auto t = workbook::memory_timeline(frees);
  CHECK(t.peak_bytes == 0);
  CHECK_FALSE(t.peak_event);
  CHECK(t.points.back().live_bytes == -12);
  const std::int64_t most = std::numeric_limits<std::int64_t>::max();
  const auto huge = workbook::memory_timeline(workbook::Profile({memory(10, most), memory(20, most)}));
  CHECK(huge.peak_bytes == most);
}

TEST_CASE("the figure's axis is in the unit its data need, from the lowest point to just above the peak") {
  // 50 KiB live at most: a KiB axis (on a MiB one, the line lies on the floor).
  const auto small = workbook::memory_timeline(workbook::Profile({memory(10, 51200), memory(20, -51200)}));
  const std::string kib = workbook::memory_timeline_svg(small, "small");
  CHECK(kib.find(">KiB live<") != std::string::npos);
  CHECK(kib.find("peak 50.00 KiB") != std::string::npos);
  CHECK(kib.find(">0.1<") == std::string::npos);  // no tick of a MiB axis
  const auto large = workbook::memory_timeline(workbook::Profile({memory(10, std::int64_t(3) << 30)}));
  CHECK(workbook::memory_timeline_svg(large, "large").find("peak 3.00 GiB") != std::string::npos);
  // What the docs' browser check measures: the data line against the plot area.
  CHECK(kib.find("class=\"data\"") != std::string::npos);
  CHECK(kib.find("class=\"plot-area\"") != std::string::npos);
}

TEST_CASE("the figure: a step line, the bands, the peak's label, escaped text") {
  const auto p = sample();
  const auto t = workbook::memory_timeline(p);
  const std::string svg = workbook::memory_timeline_svg(t, "a <title>", {{"forward & back", 0, 80000}}, "aten::mul");
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find("a &lt;title&gt;") != std::string::npos);
  CHECK(svg.find("forward &amp; back") != std::string::npos);
  CHECK(svg.find("peak 1000 bytes: aten::mul") != std::string::npos);
  CHECK(svg.find("<polyline") != std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
  const std::string empty = workbook::memory_timeline_svg(workbook::MemoryTimeline{}, "nothing");
  CHECK(empty.find("nan") == std::string::npos);
}
