// Version layer: everything that differs between LibTorch 1.13 and 2.x lives here.
#include "libtorch_profiler.h"

#include "normalize.h"

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
#include <optional>
#include <set>
#include <type_traits>
#include <unordered_map>

namespace workbook::detail {
namespace {

namespace tp = torch::profiler::impl;
namespace ap = torch::autograd::profiler;

std::atomic<bool> running{false};
std::atomic<bool> prepared{false};
std::atomic<int> starts{0};

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
    case libkineto::ActivityType::GPU_MEMSET:
      return Category::kernel;
    case libkineto::ActivityType::CUDA_RUNTIME:
      return Category::runtime;
    case libkineto::ActivityType::USER_ANNOTATION:
    case libkineto::ActivityType::GPU_USER_ANNOTATION:
      return Category::user_annotation;
    case libkineto::ActivityType::CPU_OP:
      return Category::cpu_op;
    default:
      return Category::other;
  }
}

bool runs_on_device(libkineto::ActivityType type) {
  return type == libkineto::ActivityType::CONCURRENT_KERNEL || type == libkineto::ActivityType::GPU_MEMCPY ||
         type == libkineto::ActivityType::GPU_MEMSET || type == libkineto::ActivityType::GPU_USER_ANNOTATION;
}

// The id Kineto writes as "External id": an op's correlation id.
std::int64_t correlation_of(const tp::Result& r) {
  std::int64_t id = 0;
  r.visit([&](const auto& fields) {
    using F = std::decay_t<decltype(fields)>;
    if constexpr (std::is_same_v<F, tp::ExtraFields<tp::EventType::TorchOp>> ||
                  std::is_same_v<F, tp::ExtraFields<tp::EventType::Kineto>>)
      id = std::int64_t(fields.correlation_id_);
  });
  return id;
}

struct Converter {
  std::vector<Event> events;
  // Ops carry the profiler's own thread ids; Kineto's host activities carry OS thread ids. Host
  // activities are put on the profiler's id of their OS thread (learnt from the ops), whether
  // they sit at the top of the tree or under an op: one convention for every host event.
  std::unordered_map<std::uint64_t, std::uint64_t> profiler_thread_of_os_thread;

  // Reserving the exact count up front: growing the vector copies every event again, and fresh
  // memory is what costs most in a conversion (page faults), not the conversion itself.
  static std::size_t count(const tp::Result& r) {
    std::size_t n = 1;
    for (const auto& child : r.children_) n += count(*child);
    return n;
  }

  void learn_threads(const tp::Result& r) {
    if (r.tag() == tp::EventType::TorchOp && r.kineto_info_.resource != 0)
      profiler_thread_of_os_thread.emplace(std::uint64_t(r.kineto_info_.resource), std::uint64_t(r.start_tid_));
    for (const auto& child : r.children_) learn_threads(*child);
  }

  std::uint64_t host_thread(const tp::Result& r, std::int64_t parent_thread) const {
    auto it = profiler_thread_of_os_thread.find(std::uint64_t(r.kineto_info_.resource));
    if (it != profiler_thread_of_os_thread.end()) return it->second;
    return parent_thread >= 0 ? std::uint64_t(parent_thread) : std::uint64_t(r.kineto_info_.resource);
  }

  // parent_thread: host thread of the nearest kept ancestor, or -1 at the top.
  void add(const tp::Result& r, std::int64_t parent_thread) {
    Event e;
    e.name = r.name();
    e.start_ns = r.start_time_ns_;
    e.end_ns = std::max<std::int64_t>(r.endTimeNS(), r.start_time_ns_);
    e.thread = r.start_tid_;
    r.visit([&](const auto& fields) {
      using F = std::decay_t<decltype(fields)>;
      if constexpr (std::is_same_v<F, tp::ExtraFields<tp::EventType::TorchOp>>) {
        e.category = fields.scope_ == at::RecordScope::USER_SCOPE ? Category::user_annotation : Category::cpu_op;
        e.external_id = std::int64_t(fields.correlation_id_);
        e.input_shapes = input_shapes(fields);
        // extra_args_ is only filled when FLOPs were asked for; computeFlops warns on empty ones.
        if (!fields.extra_args_.empty()) e.flops = std::int64_t(tp::computeFlops(e.name, fields.extra_args_));
      } else if constexpr (std::is_same_v<F, tp::ExtraFields<tp::EventType::Allocation>>) {
        e.category = Category::memory;
        e.name = "[memory]";
        e.bytes = fields.alloc_size_;
        e.end_ns = e.start_ns;
        // Python counts CPU, MKLDNN and IDEEP as CPU memory, CUDA and HIP as CUDA memory.
        const auto type = fields.device_type_;
        e.device_type =
            type == c10::DeviceType::CUDA || type == c10::DeviceType::HIP ? DeviceType::cuda : DeviceType::cpu;
        e.device_index = int(fields.device_index_);
        if (type != c10::DeviceType::CPU && type != c10::DeviceType::MKLDNN && type != c10::DeviceType::IDEEP &&
            e.device_type == DeviceType::cpu)
          e.bytes = 0;
      } else if constexpr (std::is_same_v<F, tp::ExtraFields<tp::EventType::Kineto>>) {
        e.category = kineto_category(fields.activity_type_);
        e.correlation = std::int64_t(fields.correlation_id_);
        if (const auto linked = fields.linked_activity_.lock()) e.external_id = correlation_of(*linked);
        if (runs_on_device(fields.activity_type_)) {
          e.device_type = DeviceType::cuda;
          const auto type = fields.activity_type_;
          e.work = type == libkineto::ActivityType::GPU_MEMCPY            ? DeviceWork::memcpy
                   : type == libkineto::ActivityType::GPU_MEMSET          ? DeviceWork::memset
                   : type == libkineto::ActivityType::GPU_USER_ANNOTATION ? DeviceWork::annotation
                                                                          : DeviceWork::kernel;
          e.device_index = int(r.kineto_info_.device);
          e.thread = std::uint64_t(r.kineto_info_.resource);
        } else {
          e.thread = host_thread(r, parent_thread);
        }
      } else {
        e.category = Category::other;
      }
    });
    const std::int64_t thread = e.on_host() ? std::int64_t(e.thread) : parent_thread;
    events.push_back(std::move(e));
    for (const auto& child : r.children_) add(*child, thread);
  }
};

void prepare_profiler(const RecorderConfig& config) {
  if (prepared.exchange(true)) return;
  ap::prepareProfiler(make_config(config), activities(config));
}

}  // namespace

void start_profiler(const RecorderConfig& config) {
  if (running.load()) throw std::logic_error("workbook: a profiling session is already recording on this process");
  prepare_profiler(config);  // 2.x crashes in enableProfiler without it
  ap::enableProfiler(make_config(config), activities(config));
  running = true;
  ++starts;
}

int profiler_starts() { return starts.load(); }

Profile stop_profiler(const std::string& kineto_trace_path, bool* saved, const std::string& first_kept) {
  if (!running.exchange(false)) return Profile{};
  prepared = false;
  std::unique_ptr<ap::ProfilerResult> result = ap::disableProfiler();
  Converter converter;
  const auto& tree = result->event_tree();
  std::size_t total = 0;
  for (const auto& root : tree) total += Converter::count(*root);
  converter.events.reserve(total);
  for (const auto& root : tree) converter.learn_threads(*root);
  for (const auto& root : tree) converter.add(*root, -1);
  if (!kineto_trace_path.empty()) {
    bool ok = true;
    try {
      result->save(kineto_trace_path);
    } catch (const std::exception&) {
      ok = false;  // LibTorch without Kineto: save() always throws
    }
    if (saved) *saved = ok;
  }
  if (!first_kept.empty()) converter.events = events_from(std::move(converter.events), first_kept);
  return normalized_profile(std::move(converter.events));
}

bool profiler_running() { return running.load(); }

std::string torch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

void discard_recording() {
  if (!running.exchange(false)) return;
  prepared = false;
  ap::disableProfiler();  // the result, and every event in it, is dropped here
}

bool kineto_available() {
  // Asked while a session records, the probe cannot run: say no for now, but do not remember it.
  static std::mutex mutex;
  static std::optional<bool> known;
  std::lock_guard<std::mutex> lock(mutex);
  if (known) return *known;
  if (running.load()) return false;
  known = [] {
    const std::string path =
        (std::filesystem::temp_directory_path() / ("workbook-kineto-probe-" + std::to_string(::getpid()) + ".json"))
            .string();
    RecorderConfig config;
    start_profiler(config);
    bool saved = false;
    stop_profiler(path, &saved);
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return saved;
  }();
  return *known;
}

}  // namespace workbook::detail
