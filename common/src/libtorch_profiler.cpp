// Version layer: everything that differs between LibTorch 1.13 and 2.x lives here.
#include "libtorch_profiler.h"

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/profiler/collection.h>
#include <torch/csrc/profiler/util.h>
#include <torch/version.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <mutex>
#include <set>
#include <type_traits>

namespace workbook::detail {
namespace {

namespace tp = torch::profiler::impl;
namespace ap = torch::autograd::profiler;

std::atomic<bool> running{false};
std::atomic<bool> prepared{false};

tp::ProfilerConfig make_config(const RecorderConfig& c) {
  // explicit in 2.x, so always spell the constructor out.
  return tp::ProfilerConfig(tp::ProfilerState::KINETO, c.record_shapes, c.profile_memory, /*with_stack=*/false,
                            c.with_flops, /*with_modules=*/false);
}

std::set<tp::ActivityType> activities(const RecorderConfig& c) {
  std::set<tp::ActivityType> set{tp::ActivityType::CPU};
  if (c.cuda) set.insert(tp::ActivityType::CUDA);
  return set;
}

std::vector<std::vector<std::int64_t>> input_shapes(const tp::ExtraFields<tp::EventType::TorchOp>& op) {
#if TORCH_VERSION_MAJOR >= 2
  // 2.x keeps tensor metadata per input; scalars and other values have no shape.
  std::vector<std::vector<std::int64_t>> shapes;
  for (const auto& input : op.inputs_) {
    std::vector<std::int64_t> shape;
    if (const auto* t = std::get_if<tp::TensorMetadata>(&input)) shape = t->sizes_;
    shapes.push_back(std::move(shape));
  }
  return shapes;
#else
  return op.inputs_.shapes_;
#endif
}

Category kineto_category(libkineto::ActivityType type) {
  switch (type) {
    case libkineto::ActivityType::CONCURRENT_KERNEL:
    case libkineto::ActivityType::GPU_MEMCPY:
    case libkineto::ActivityType::GPU_MEMSET: return Category::kernel;
    case libkineto::ActivityType::CUDA_RUNTIME: return Category::runtime;
    case libkineto::ActivityType::USER_ANNOTATION:
    case libkineto::ActivityType::GPU_USER_ANNOTATION: return Category::user_annotation;
    case libkineto::ActivityType::CPU_OP: return Category::cpu_op;
    default: return Category::other;
  }
}

struct Converter {
  std::vector<Event> events;

  // Reserving the exact count up front: growing the vector copies every event again, and fresh
  // memory is what costs most in a conversion (page faults), not the conversion itself.
  static std::size_t count(const tp::Result& r) {
    std::size_t n = 1;
    for (const auto& child : r.children_) n += count(*child);
    return n;
  }

  // parent_thread: host thread of the nearest kept ancestor, or -1 at the top.
  void add(const tp::Result& r, std::int64_t parent_thread) {
    Event e;
    e.name = r.name();
    e.start_ns = r.start_time_ns_;
    e.end_ns = std::max<std::int64_t>(r.endTimeNS(), r.start_time_ns_);
    e.thread = r.start_tid_;
    bool keep = true;
    r.visit([&](const auto& fields) {
      using F = std::decay_t<decltype(fields)>;
      if constexpr (std::is_same_v<F, tp::ExtraFields<tp::EventType::TorchOp>>) {
        e.category = fields.scope_ == at::RecordScope::USER_SCOPE ? Category::user_annotation : Category::cpu_op;
        e.input_shapes = input_shapes(fields);
        // extra_args_ is only filled when FLOPs were asked for; computeFlops warns on empty ones.
        if (!fields.extra_args_.empty()) e.flops = std::int64_t(tp::computeFlops(e.name, fields.extra_args_));
      } else if constexpr (std::is_same_v<F, tp::ExtraFields<tp::EventType::Allocation>>) {
        e.category = Category::memory;
        e.name = "[memory]";
        e.bytes = fields.alloc_size_;
        e.end_ns = e.start_ns;
        keep = fields.device_type_ == c10::DeviceType::CPU;  // device memory has its own columns later
      } else if constexpr (std::is_same_v<F, tp::ExtraFields<tp::EventType::Kineto>>) {
        e.category = kineto_category(fields.activity_type_);
        e.correlation = std::int64_t(fields.correlation_id_);
        if (e.category == Category::kernel) {
          e.device = "cuda:" + std::to_string(r.kineto_info_.device);
          e.thread = std::uint64_t(r.kineto_info_.resource);
        } else if (parent_thread >= 0) {
          // Kineto reports host activities with the OS thread id; ops use the profiler's own.
          e.thread = std::uint64_t(parent_thread);
        }
      } else {
        e.category = Category::other;
      }
    });
    const std::int64_t thread = keep && !e.on_device() ? std::int64_t(e.thread) : parent_thread;
    if (keep) events.push_back(std::move(e));
    for (const auto& child : r.children_) add(*child, thread);
  }
};

}  // namespace

void prepare_profiler(const RecorderConfig& config) {
  if (prepared.exchange(true)) return;
  ap::prepareProfiler(make_config(config), activities(config));
}

void start_profiler(const RecorderConfig& config) {
  if (running.load()) throw std::logic_error("workbook: a profiling session is already recording on this process");
  prepare_profiler(config);  // 2.x crashes in enableProfiler without it
  ap::enableProfiler(make_config(config), activities(config));
  running = true;
}

Profile stop_profiler(const std::string& kineto_trace_path, bool* saved) {
  if (!running.exchange(false)) return Profile{};
  prepared = false;
  std::unique_ptr<ap::ProfilerResult> result = ap::disableProfiler();
  Converter converter;
  const auto& tree = result->event_tree();
  std::size_t total = 0;
  for (const auto& root : tree) total += Converter::count(*root);
  converter.events.reserve(total);
  for (const auto& root : tree) converter.add(*root, -1);
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (const Event& e : converter.events) origin = std::min(origin, e.start_ns);
  for (Event& e : converter.events) {
    e.start_ns -= origin;
    e.end_ns -= origin;
  }
  if (!kineto_trace_path.empty()) {
    bool ok = true;
    try {
      result->save(kineto_trace_path);
    } catch (const std::exception&) {
      ok = false;  // LibTorch without Kineto: save() always throws
    }
    if (saved) *saved = ok;
  }
  return Profile(std::move(converter.events));
}

bool profiler_running() { return running.load(); }

std::string torch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

bool kineto_available() {
  static const bool available = [] {
    if (running.load()) return false;
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("workbook-kineto-probe-" + std::to_string(::getpid()) + ".json"))
                                 .string();
    RecorderConfig config;
    start_profiler(config);
    bool saved = false;
    stop_profiler(path, &saved);
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return saved;
  }();
  return available;
}

}  // namespace workbook::detail
