// The GPU analysis on a hand-made profile whose answers are known.
#include <doctest/doctest.h>

#include "synthetic_events.h"
#include "workbook/profiler/gpu_analysis.h"

using testing::make_event;
using workbook::Category;
using workbook::DeviceWork;
using workbook::Event;

using testing::make_device_work;
using testing::make_launch;

TEST_CASE("busy is the union of kernels, copies and fills; syncs and annotations only mark time") {
  // Step [0, 100): gemm [10, 40) on stream 7 and copy [30, 50) on stream 8 overlap: busy 40.
  // Step [100, 200): add [110, 115); a sync [120, 190) keeps nothing busy. Window [0, 200).
  const workbook::Profile p({make_event("ProfilerStep#0", 0, 100, Category::user_annotation),
                             make_event("ProfilerStep#1", 100, 200, Category::user_annotation), make_launch(5, 7, 1),
                             make_launch(105, 107, 2), make_device_work("gemm", 10, 40, 7, DeviceWork::kernel, 1),
                             make_device_work("Memcpy HtoD", 30, 50, 8, DeviceWork::memcpy),
                             make_device_work("add", 110, 115, 7, DeviceWork::kernel, 2),
                             make_device_work("Stream Sync", 120, 190, 7, DeviceWork::sync)});
  const auto a = workbook::analyze_gpu(p);
  REQUIRE(a.devices.size() == 1);
  const auto& d = a.devices[0];
  CHECK(d.window_ns == 200);
  CHECK(d.busy_ns == 45);
  CHECK(d.busy_fraction == doctest::Approx(0.225));
  CHECK(d.kernel_ns == 35);
  CHECK(d.memcpy_ns == 20);
  CHECK(d.gaps == 1);
  CHECK(d.longest_gap_ns == 60);
  REQUIRE(d.streams.size() == 2);
  CHECK(d.streams[0].busy_ns == 35);
  REQUIRE(a.kernels.size() == 2);
  CHECK(a.kernels[0].name == "gemm");
  CHECK(a.kernels[0].share == doctest::Approx(30.0 / 35.0));
  CHECK(a.launch_queue.count == 2);
  CHECK(a.launch_queue.median_ns == 5);
  CHECK(a.launch_queue.p90_ns == 5);
  REQUIRE(a.steps.size() == 2);
  CHECK(a.steps[0].devices[0].busy_ns == 40);
  CHECK(a.steps[0].verdict == "CPU-bound (GPU idle 60%)");
  CHECK(a.steps[1].devices[0].busy_fraction == doctest::Approx(0.05));
  CHECK(workbook::gpu_analysis_json(a).find("\"busy_fraction\"") != std::string::npos);
  CHECK(workbook::gpu_utilisation_svg(a, "t").find("<svg") == 0);
}

TEST_CASE("a profile without device work says so") {
  const workbook::Profile p({make_event("aten::mm", 0, 10)});
  const auto a = workbook::analyze_gpu(p);
  CHECK(a.devices.empty());
  CHECK(workbook::format_gpu_analysis(a).find("no device activity") != std::string::npos);
}

TEST_CASE("a step that gave the GPU no work is neither CPU- nor GPU-bound") {
  const workbook::Profile p({make_event("ProfilerStep#0", 0, 100, Category::user_annotation),
                             make_event("ProfilerStep#1", 100, 200, Category::user_annotation), make_launch(5, 7, 1),
                             make_device_work("gemm", 10, 90, 7, DeviceWork::kernel, 1),
                             make_event("aten::copy_", 120, 180)});
  const auto a = workbook::analyze_gpu(p);
  REQUIRE(a.steps.size() == 2);
  CHECK(a.steps[0].verdict == "GPU-bound");
  CHECK(a.steps[1].verdict == "no GPU work in this step");
}
