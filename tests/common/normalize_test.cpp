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
using workbook::detail::events_from;
using workbook::detail::normalized_profile;

TEST_CASE("normalized: the profiler's own utility ops go, and times start at 0") {
  const Profile p = normalized_profile({make_event("aten::mm", 1000, 1500), make_event("aten::_version", 1100, 1200),
                                        make_event("aten::add", 1600, 1700)});
  CHECK(p.size() == 2);
  CHECK(p.count("aten::_version") == 0);
  CHECK(p[p.find("aten::mm")[0]].start_ns == 0);
  CHECK(p[p.find("aten::add")[0]].start_ns == 600);
}

TEST_CASE("events_from cuts what started before the named host event, and the device work those ops launched") {
  // A warm-up launches kernel 1 (correlation 1), which runs after the recorded step began, and
  // runs op 5 whose GPU-lane mirror (External id 5, no correlation) also runs late. The recorded
  // step launches kernel 2. A thread-2 op of the warm-up, and a device-lane mirror of the step name
  // that starts before the host event, must not move the boundary. A region opened in the warm-up
  // and closed after the cut goes; an op inside it after the cut stays. Memory instants are cut
  // by their time like everything else.
  auto with_external_id = [](workbook::Event e, std::int64_t id) {
    e.external_id = id;
    return e;
  };
  const std::vector<workbook::Event> recording = {
      with_external_id(make_event("aten::mm", 100, 900), 5),
      make_launch(200, 300, 1),
      testing::make_allocation(250, 64),
      make_event("aten::add", 960, 990, Category::cpu_op, 2),
      make_event("spanning", 500, 1500, Category::user_annotation, 3),
      make_event("aten::relu", 1100, 1200, Category::cpu_op, 3),
      make_device_work("ProfilerStep#2", 950, 2900, 7, workbook::DeviceWork::annotation),
      make_event("ProfilerStep#2", 1000, 3000, Category::user_annotation),
      make_event("aten::mm", 1100, 2000),
      make_launch(1200, 1300, 2),
      testing::make_allocation(1250, -64),
      make_device_work("kernel_1", 1050, 1400, 7, workbook::DeviceWork::kernel, 1),
      with_external_id(make_device_work("aten::mm", 1060, 1090, 8, workbook::DeviceWork::annotation), 5),
      make_device_work("kernel_2", 1500, 1800, 7, workbook::DeviceWork::kernel, 2),
  };
  const Profile cut = normalized_profile(events_from(recording, "ProfilerStep#2"));
  CHECK(cut.count("aten::mm") == 1);  // the recorded step's; the warm-up op and its GPU mirror went
  CHECK(cut.count("aten::add") == 0);
  CHECK(cut.count("spanning") == 0);
  CHECK(cut.count("aten::relu") == 1);
  CHECK(cut.count("cudaLaunchKernel") == 1);
  CHECK(cut.count("kernel_1") == 0);  // launched before the cut
  CHECK(cut.count("kernel_2") == 1);
  CHECK(cut.count("[memory]") == 1);
  CHECK(cut[cut.find("[memory]")[0]].bytes == -64);
  CHECK(cut[cut.find("ProfilerStep#2")[0]].start_ns == 0);
  CHECK(events_from(recording, "ProfilerStep#9").size() == recording.size());  // no such event: all kept
}
