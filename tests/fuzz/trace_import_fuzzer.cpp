// libFuzzer target: arbitrary bytes through the chrome-trace importer (gzip data through the
// decompressor first), the key-averages builder,
// its table/JSON/CSV, the GPU analysis, the kernel-name decoder (`--kernels`), flame graphs, memory
// timelines, `--under`'s subtrees and the exporter. Bad input must end in workbook::TraceError, nothing else;
// what the importer accepts must export and import again with the same number of events.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/flame_graph.h"
#include "workbook/profiler/gpu_analysis.h"
#include "workbook/profiler/kernel_names.h"
#include "workbook/profiler/key_averages.h"
#include "workbook/profiler/memory_timeline.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  workbook::Profile profile;
  try {
    profile = workbook::parse_chrome_trace(json, "fuzz input");
  } catch (const workbook::TraceError&) {
    return 0;  // rejected with a message: what bad input must get
  }
  for (bool by_shape : {false, true}) {
    const workbook::KeyAverages averages(profile, by_shape);
    (void)averages.table("self_cpu_time_total", 0);
    (void)averages.to_json();
    (void)averages.to_csv();
  }
  if (!profile.empty()) (void)workbook::format_tree(profile, profile.roots().front(), 4);
  const workbook::GpuAnalysis gpu = workbook::analyze_gpu(profile);
  (void)workbook::format_gpu_analysis(gpu);
  (void)workbook::gpu_analysis_json(gpu);
  (void)workbook::gpu_utilisation_svg(gpu, "fuzz");
  for (const auto& kernel : gpu.kernels) (void)workbook::decode_kernel_name(kernel.name).describe_fields();
  (void)workbook::collapsed_stacks_text(profile);
  (void)workbook::flame_graph_svg(profile, "fuzz");
  for (auto device : {workbook::DeviceType::cpu, workbook::DeviceType::cuda}) {
    const workbook::MemoryTimeline timeline = workbook::memory_timeline(profile, device);
    (void)workbook::memory_timeline_svg(timeline, "fuzz");
  }
  if (!profile.empty()) (void)workbook::KeyAverages(workbook::subtrees(profile, profile[0].name)).table();
  const workbook::Profile again = workbook::parse_chrome_trace(workbook::to_chrome_trace(profile), "round trip");
  if (again.size() != profile.size()) {
    std::fprintf(stderr, "round trip changed the event count: %zu -> %zu\n", profile.size(), again.size());
    std::abort();
  }
  return 0;
}
