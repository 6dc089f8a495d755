// The one path from raw events to a Profile (common/profiler/src/normalize.h): the profiler's
// utility ops dropped, times from 0, and a warm-up cut from a recording that ran on.
#include "normalize.h"

#include <doctest/doctest.h>

#include "synthetic_events.h"

using testing::make_device_work;
using testing::make_event;
using testing::make_launch;
using workbook::Category;
using workbook::Profile;
using workbook::detail::from_event_on;
using workbook::detail::normalized_profile;

TEST_CASE("normalized: the profiler's own utility ops go, and times start at 0") {
  const Profile p = normalized_profile({make_event("aten::mm", 1000, 1500), make_event("aten::_version", 1100, 1200),
                                        make_event("aten::add", 1600, 1700)});
  CHECK(p.size() == 2);
  CHECK(p.count("aten::_version") == 0);
  CHECK(p[p.find("aten::mm")[0]].start_ns == 0);
  CHECK(p[p.find("aten::add")[0]].start_ns == 600);
}

TEST_CASE("from_event_on cuts everything before the named host event, and the kernels those launches started") {
  // A warm-up step launches kernel 1, which runs after the recorded step began; the recorded
  // step launches kernel 2. A thread-2 op of the warm-up, and a device-lane mirror of the step
  // name that starts earlier, must not move the boundary.
  const Profile recording = normalized_profile({
      make_event("aten::mm", 100, 900),
      make_launch(200, 300, 1),
      make_event("aten::add", 960, 990, Category::cpu_op, 2),
      make_device_work("ProfilerStep#2", 950, 2900, 7, workbook::DeviceWork::annotation),
      make_event("ProfilerStep#2", 1000, 3000, Category::user_annotation),
      make_event("aten::mm", 1100, 2000),
      make_launch(1200, 1300, 2),
      make_device_work("kernel_1", 1050, 1400, 7, workbook::DeviceWork::kernel, 1),
      make_device_work("kernel_2", 1500, 1800, 7, workbook::DeviceWork::kernel, 2),
  });
  const Profile cut = from_event_on(recording, "ProfilerStep#2");
  CHECK(cut.count("aten::mm") == 1);
  CHECK(cut.count("aten::add") == 0);
  CHECK(cut.count("cudaLaunchKernel") == 1);
  CHECK(cut.count("kernel_1") == 0);  // launched before the cut
  CHECK(cut.count("kernel_2") == 1);
  CHECK(cut[cut.find("ProfilerStep#2")[0]].start_ns == 0);
  CHECK(from_event_on(recording, "ProfilerStep#9").size() == recording.size());  // no such event: all kept
}
