#pragma once
/// \file
/// \brief One recorded activity: what it was, when and where it ran (no LibTorch needed).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace workbook {

/// What kind of activity an event records, in Kineto's trace vocabulary.
enum class Category : std::uint8_t {
  cpu_op,           ///< an ATen operator on the CPU (aten::mm, aten::add, ...)
  user_annotation,  ///< a labelled region: workbook::Region, ProfilerStep#N (on a GPU: gpu_user_annotation)
  kernel,           ///< device work: a GPU kernel, memcpy, memset or sync
  runtime,          ///< host-side device runtime or driver call (cudaLaunchKernel, cuLaunchKernel, ...)
  memory,           ///< an allocation (bytes > 0) or a free (bytes < 0); an instant
  other,            ///< anything else a trace may hold (python functions, ...)
};

/// Kineto's name for a category ("cpu_op", "user_annotation", "kernel", "cuda_runtime", "[memory]", "other").
std::string_view category_name(Category category);

/// Where an event ran (Python's `DeviceType`, the part of it traces use). For a memory event:
/// whose memory was allocated.
enum class DeviceType : std::uint8_t { cpu, cuda };

/// "cpu" or "cuda".
std::string_view device_type_name(DeviceType type);

/// What device activity did, in Kineto's categories: only kernels, copies and fills keep a GPU
/// busy; a sync or an annotation only marks time.
enum class DeviceWork : std::uint8_t {
  kernel,      ///< "kernel"
  memcpy,      ///< "gpu_memcpy"
  memset,      ///< "gpu_memset"
  sync,        ///< "cuda_sync"
  annotation,  ///< "gpu_user_annotation", "cuda_profiler_range"
};

/// Kineto's category for device work ("kernel", "gpu_memcpy", ...).
std::string_view device_work_name(DeviceWork work);

/// The shapes of an op's inputs, as the profiler records them: one list of sizes per input.
using Shapes = std::vector<std::vector<std::int64_t>>;

/// What Event and EventView answer alike from their fields.
template <typename Self>
struct EventQueries {
  /// end_ns - start_ns.
  std::int64_t duration_ns() const { return self().end_ns - self().start_ns; }
  /// True for activity that ran on a device (kernel, memcpy, GPU annotation) rather than a host thread.
  bool on_device() const { return self().device_type != DeviceType::cpu && self().category != Category::memory; }
  /// True for host activity that takes part in the tree (not device work, not a memory instant).
  bool on_host() const { return self().device_type == DeviceType::cpu && self().category != Category::memory; }

 private:
  const Self& self() const { return static_cast<const Self&>(*this); }
};

struct EventView;

/// One recorded activity, owning its name and shapes: what a recorder or a test builds and hands to
/// a Profile. Times are integer nanoseconds from the start of the trace.
struct Event : EventQueries<Event> {
  /// An event of no name at time 0 (fill in the fields).
  Event() = default;
  /// A copy of an event read from a Profile (its name and shapes copied out).
  Event(const EventView& view);  // implicit: `const Event& e = profile[id]` keeps reading naturally

  std::string name;                          ///< "aten::mm", "matmul_add", a kernel's name, "[memory]"
  Category category = Category::cpu_op;      ///< what kind of activity
  DeviceType device_type = DeviceType::cpu;  ///< where it ran; for memory, whose memory
  DeviceWork work = DeviceWork::kernel;      ///< for device activity: what it did
  std::int64_t start_ns = 0;                 ///< start, ns from the start of the trace
  std::int64_t end_ns = 0;                   ///< end (equal to start for instants)
  std::uint64_t thread = 0;                  ///< host thread id, or the stream for device events
  std::int64_t device_index = 0;  ///< which GPU, for device events and device memory (64-bit: traces carry any id)
  Shapes input_shapes;            ///< filled when shapes were recorded
  std::int64_t bytes = 0;         ///< memory events: allocated (> 0) or freed (< 0) bytes
  std::int64_t flops = 0;         ///< filled when FLOPs were estimated
  std::int64_t correlation = 0;   ///< links a runtime launch to its device activity; 0 when none
  std::int64_t external_id = 0;   ///< Kineto's "External id": an op's id, and on device activity
                                  ///< the id of the op it belongs to; 0 when none
};

/// One event of a Profile, read in place: Event's fields, with the name and the shapes referring
/// to the profile's own single copy of each (valid as long as the profile is). What `profile[id]`
/// gives; copying one costs no allocation, and converting it to an Event copies the name out.
struct EventView : EventQueries<EventView> {
  std::string_view name;       ///< as Event::name
  Category category;           ///< as Event::category
  DeviceType device_type;      ///< as Event::device_type
  DeviceWork work;             ///< as Event::work
  std::int64_t start_ns;       ///< as Event::start_ns
  std::int64_t end_ns;         ///< as Event::end_ns
  std::uint64_t thread;        ///< as Event::thread
  std::int64_t device_index;   ///< as Event::device_index
  const Shapes& input_shapes;  ///< as Event::input_shapes
  std::int64_t bytes;          ///< as Event::bytes
  std::int64_t flops;          ///< as Event::flops
  std::int64_t correlation;    ///< as Event::correlation
  std::int64_t external_id;    ///< as Event::external_id
};

inline Event::Event(const EventView& view)
    : name(view.name),
      category(view.category),
      device_type(view.device_type),
      work(view.work),
      start_ns(view.start_ns),
      end_ns(view.end_ns),
      thread(view.thread),
      device_index(view.device_index),
      input_shapes(view.input_shapes),
      bytes(view.bytes),
      flops(view.flops),
      correlation(view.correlation),
      external_id(view.external_id) {}

}  // namespace workbook
