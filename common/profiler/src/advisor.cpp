// The cheat sheet's rules. Each reads only the profile; each threshold is written beside it in
// advice_rules(), so the text a learner reads and the number the code compares are one.
#include "workbook/profiler/advisor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "workbook/profiler/format.h"
#include "workbook/profiler/gpu_analysis.h"
#include "workbook/profiler/kernel_names.h"

namespace workbook {
namespace {

// The thresholds, named once.
constexpr double kColdStepRatio = 2.0;
constexpr double kColdStepMinUs = 20;
constexpr double kLateOpRatio = 5.0;
constexpr double kLateOpMinUs = 10;
constexpr double kSyncMinUs = 50;
constexpr double kSyncBusyBelow = 0.10;
constexpr double kKernelVariesRatio = 1.5;
constexpr double kKernelVariesMinUs = 20;
constexpr std::size_t kMinRepeats = 3;

double us(std::int64_t ns) { return double(ns) / 1e3; }

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

bool contains_no_case(std::string_view text, std::string_view word) {
  return std::search(text.begin(), text.end(), word.begin(), word.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         }) != text.end();
}

std::string short_name(std::string_view name) {
  std::string shown = printable(name);
  return shown.size() > 70 ? shown.substr(0, 67) + "..." : shown;
}

// The host's ProfilerStep#N events in start order (a Kineto trace also has them on the GPU lane).
std::vector<EventId> host_steps(const Profile& profile) {
  std::vector<EventId> steps;
  for (EventId id : profile.find_prefix("ProfilerStep#"))
    if (profile[id].on_host()) steps.push_back(id);
  return steps;
}

std::optional<Advice> cold_first_step(const Profile& profile) {
  const auto steps = host_steps(profile);
  if (steps.size() < kMinRepeats) return std::nullopt;
  std::vector<double> later;
  for (std::size_t k = 1; k < steps.size(); ++k) later.push_back(us(profile.total_ns(steps[k])));
  const double first = us(profile.total_ns(steps[0])), typical = median_of(later);
  if (!(first > kColdStepRatio * typical && first - typical >= kColdStepMinUs)) return std::nullopt;
  return Advice{"cold_first_step",
                fmt::format("{} took {}, the median of the {} later steps {} ({:.1f}x)", profile[steps[0]].name,
                            format_time_us(first), later.size(), format_time_us(typical), first / typical)};
}

// The gap from a region's start to its first host child, or nothing for a region without one.
std::optional<double> gap_before_first_op(const Profile& profile, EventId region) {
  for (EventId child : profile.children(region))
    if (profile[child].on_host()) return us(profile[child].start_ns - profile[region].start_ns);
  return std::nullopt;
}

std::optional<Advice> late_first_op(const Profile& profile) {
  std::map<std::string, std::vector<EventId>> regions;  // labelled regions by name, in start order
  for (EventId id : profile.of_category(Category::user_annotation))
    if (profile[id].on_host() && !starts_with(profile[id].name, "ProfilerStep#"))
      regions[std::string(profile[id].name)].push_back(id);
  std::optional<Advice> worst;
  double worst_ratio = 0;
  for (const auto& [name, ids] : regions) {
    std::vector<double> gaps;
    for (EventId id : ids)
      if (const auto gap = gap_before_first_op(profile, id)) gaps.push_back(*gap);
    if (gaps.size() < kMinRepeats) continue;
    const double first = gaps[0], typical = median_of(std::vector<double>(gaps.begin() + 1, gaps.end()));
    const double ratio = typical > 0 ? first / typical : first > 0 ? 1e9 : 0;
    if (first < kLateOpMinUs || ratio <= kLateOpRatio || ratio <= worst_ratio) continue;
    worst_ratio = ratio;
    worst = Advice{"late_first_op",
                   fmt::format("'{}': its first op started {} after the region did the first time; the median of the "
                               "{} later times {}",
                               short_name(name), format_time_us(first), gaps.size() - 1, format_time_us(typical))};
  }
  return worst;
}

std::optional<Advice> sync_waits_for_little_gpu_work(const Profile& profile) {
  std::vector<EventId> device;
  for (EventId id = 0; id < profile.size(); ++id)
    if (profile[id].on_device()) device.push_back(id);
  std::optional<Advice> worst;
  std::int64_t worst_idle = 0;
  std::size_t count = 0;
  for (EventId id : profile.of_category(Category::runtime)) {
    const EventView e = profile[id];
    if (e.name.find("Synchronize") == std::string::npos || us(e.duration_ns()) < kSyncMinUs) continue;
    const std::int64_t busy = busy_ns_within(profile, device, e.start_ns, e.end_ns);
    if (double(busy) >= kSyncBusyBelow * double(e.duration_ns())) continue;
    ++count;
    if (e.duration_ns() - busy <= worst_idle) continue;
    worst_idle = e.duration_ns() - busy;
    worst = Advice{"sync_waits_for_little_gpu_work",
                   fmt::format("{} waited {} while the GPU was busy {} of it ({:.0f}% idle)", short_name(e.name),
                               format_time_us(us(e.duration_ns())), format_time_us(us(busy)),
                               100.0 * double(e.duration_ns() - busy) / double(e.duration_ns()))};
  }
  if (worst && count > 1) worst->evidence += fmt::format("; {} such waits in all", count);
  return worst;
}

// The first device activity launched after `after` among the children of the same parent.
std::optional<EventId> next_launched(const Profile& profile, EventId after) {
  const auto parent = profile.parent(after);
  if (!parent) return std::nullopt;
  for (EventId sibling : profile.children(*parent)) {
    if (profile[sibling].start_ns < profile[after].end_ns || profile[sibling].category != Category::runtime) continue;
    for (EventId launched : profile.children(sibling))
      if (profile[launched].on_device()) return launched;
  }
  return std::nullopt;
}

std::optional<Advice> occupancy_query_before_launch(const Profile& profile) {
  std::size_t count = 0;
  std::map<std::string, std::size_t> kernels;
  for (EventId id : profile.of_category(Category::runtime)) {
    if (profile[id].name.find("OccupancyMaxActiveBlocksPerMultiprocessor") == std::string::npos) continue;
    if (const auto launched = next_launched(profile, id)) {
      ++count;
      ++kernels[std::string(profile[*launched].name)];
    }
  }
  if (count == 0) return std::nullopt;
  const auto most = std::max_element(kernels.begin(), kernels.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  return Advice{"occupancy_query_before_launch",
                fmt::format("{} occupancy queries each followed by a launch; most often of {} ({}x, {})", count,
                            short_name(most->first), most->second, decode_kernel_name(most->first).family)};
}

bool is_gemm(std::string_view kernel) {
  return contains_no_case(kernel, "gemm") || decode_kernel_name(kernel).family.find("GEMM") != std::string::npos;
}

std::optional<Advice> memcpy_before_gemm(const Profile& profile) {
  // Device activity per (device, stream), in start order.
  std::map<std::pair<std::int64_t, std::uint64_t>, std::vector<EventId>> lanes;
  for (EventId id = 0; id < profile.size(); ++id) {
    const EventView e = profile[id];
    if (e.on_device() && e.work != DeviceWork::annotation && e.work != DeviceWork::sync)
      lanes[{e.device_index, e.thread}].push_back(id);
  }
  std::size_t count = 0;
  std::optional<Advice> first;
  for (const auto& [lane, ids] : lanes) {
    for (std::size_t k = 0; k + 1 < ids.size(); ++k) {
      const EventView copy = profile[ids[k]], next = profile[ids[k + 1]];
      if (copy.work != DeviceWork::memcpy || copy.name.find("DtoD") == std::string::npos) continue;
      if (next.work != DeviceWork::kernel || !is_gemm(next.name)) continue;
      ++count;
      if (first) continue;
      // The op that launched the GEMM: the runtime call's parent.
      std::string op = "an op";
      if (const auto launch = profile.parent(ids[k + 1]))
        if (const auto owner = profile.parent(*launch)) op = short_name(profile[*owner].name);
      first = Advice{"memcpy_before_gemm", fmt::format("{} ({}) right before {} on GPU {} stream {}, launched by {}",
                                                       short_name(copy.name), format_time_us(us(copy.duration_ns())),
                                                       short_name(next.name), lane.first, lane.second, op)};
    }
  }
  if (first && count > 1) first->evidence += fmt::format("; {} such pairs in all", count);
  return first;
}

// The op that launched a piece of device work (its launch call's parent) and that op's input
// shapes: the same kernel name launched for other shapes does other work.
std::string launching_op(const Profile& profile, EventId device_work) {
  const auto launch = profile.parent(device_work);
  const auto op = launch ? profile.parent(*launch) : std::nullopt;
  if (!op) return "";
  std::string key(profile[*op].name);
  for (const auto& shape : profile[*op].input_shapes) key += fmt::format("[{}]", fmt::join(shape, ","));
  return key;
}

std::optional<Advice> kernel_time_varies(const Profile& profile) {
  // One piece of work, run again: the same kernel name for the same op at the same input shapes
  // and, where the trace has steps, the same place in its step (its n-th such launch), since a
  // trace without shapes launches one elementwise kernel for tensors of many sizes.
  const auto steps = host_steps(profile);
  std::map<std::pair<std::string, std::string>, std::vector<double>> times;
  std::map<std::tuple<std::size_t, std::string, std::string>, int> seen_in_step;
  for (EventId id = 0; id < profile.size(); ++id) {
    if (!profile[id].on_device() || profile[id].work != DeviceWork::kernel) continue;
    std::string op = launching_op(profile, id);
    const auto launch = profile.parent(id);
    if (!steps.empty() && launch) {
      const std::int64_t at = profile[*launch].start_ns;
      // The last step starting at or before the launch (steps come in start order), if it holds it.
      auto step = std::upper_bound(steps.begin(), steps.end(), at,
                                   [&](std::int64_t t, EventId s) { return t < profile[s].start_ns; });
      if (step == steps.begin() || at >= profile[*--step].end_ns) continue;
      const std::string name(profile[id].name);
      const int nth = seen_in_step[{std::size_t(step - steps.begin()), name, op}]++;
      times[{name, op + fmt::format("#{}", nth)}].push_back(us(profile[id].duration_ns()));
    } else if (op.find('[') != std::string::npos) {
      times[{std::string(profile[id].name), op}].push_back(us(profile[id].duration_ns()));
    }
  }
  std::optional<Advice> worst;
  double worst_ratio = 0;
  for (const auto& [key, values] : times) {
    if (values.size() < kMinRepeats) continue;
    const double typical = median_of(values), slowest = *std::max_element(values.begin(), values.end());
    const double fastest = *std::min_element(values.begin(), values.end());
    if (typical <= 0 || slowest <= kKernelVariesRatio * typical || slowest - typical < kKernelVariesMinUs) continue;
    if (slowest / typical <= worst_ratio) continue;
    worst_ratio = slowest / typical;
    const std::string op = " (launched by " + short_name(key.second.substr(0, key.second.rfind('#'))) + ")";
    worst = Advice{"kernel_time_varies",
                   fmt::format("{}{} ran {} times: fastest {}, median {}, slowest {} ({:.1f}x the median)",
                               short_name(key.first), op, values.size(), format_time_us(fastest),
                               format_time_us(typical), format_time_us(slowest), slowest / typical)};
  }
  return worst;
}

// The work below a compiled region: the summed totals of the outermost aten ops and of Inductor's
// generated kernel calls (triton_*), which run without an aten op around them.
std::int64_t outermost_op_ns(const Profile& profile, EventId id) {
  std::int64_t total = 0;
  std::vector<EventId> todo(profile.children(id).begin(), profile.children(id).end());
  while (!todo.empty()) {
    const EventId next = todo.back();
    todo.pop_back();
    if (!profile[next].on_host()) continue;
    if (starts_with(profile[next].name, "aten::") || starts_with(profile[next].name, "triton_")) {
      total += profile.total_ns(next);
      continue;
    }
    todo.insert(todo.end(), profile.children(next).begin(), profile.children(next).end());
  }
  return total;
}

std::optional<Advice> compile_wrappers_cost_more(const Profile& profile) {
  std::int64_t wrappers = 0, ops = 0;
  std::size_t regions = 0;
  for (EventId id : profile.find_prefix("Torch-Compiled Region")) {
    if (!profile[id].on_host()) continue;
    const std::int64_t inside = outermost_op_ns(profile, id);
    ops += inside;
    wrappers += profile.total_ns(id) - inside;
    ++regions;
  }
  for (EventId id : profile.find("TorchDynamo Cache Lookup"))
    if (profile[id].on_host()) wrappers += profile.total_ns(id);
  if (regions == 0 || wrappers <= ops) return std::nullopt;
  return Advice{"compile_wrappers_cost_more",
                fmt::format("{} compiled call{}: {} in the wrappers (cache lookups, the compiled region's own time) "
                            "around {} of work (aten ops, Inductor's triton_* calls) ({:.1f}x)",
                            regions, regions == 1 ? "" : "s", format_time_us(us(wrappers)), format_time_us(us(ops)),
                            ops > 0 ? double(wrappers) / double(ops) : 0.0)};
}

using RuleCheck = std::optional<Advice> (*)(const Profile&);

const std::vector<RuleCheck>& rule_checks() {
  static const std::vector<RuleCheck> checks = {
      cold_first_step,    late_first_op,      sync_waits_for_little_gpu_work, occupancy_query_before_launch,
      memcpy_before_gemm, kernel_time_varies, compile_wrappers_cost_more};
  return checks;
}

const AdviceRule& rule_named(const std::string& id) {
  for (const auto& rule : advice_rules())
    if (rule.id == id) return rule;
  throw std::logic_error("no advice rule " + id);
}

}  // namespace

const std::vector<AdviceRule>& advice_rules() {
  static const std::vector<AdviceRule> rules = {
      {"cold_first_step", "the first recorded step much slower than the others",
       "something ran for the first time under the profiler (the allocator, a library's set-up, the profiler's own "
       "start): a cold start. Warm up before you measure; Part 1 saw it removed by iterations run before the "
       "profiler started, not by the schedule's warm-up steps (Python's warm-up prepares the device tracing; "
       "operators are recorded from the first active step). This workbook's Session records its warm-up steps and "
       "cuts them from a recording that runs on into the active steps, so what the profiler's start costs lands in "
       "the warm-up: one warm-up step takes it on LibTorch 1.13; with Kineto (LibTorch 2.6 here) the first two "
       "recorded steps pay it, so this rule still fires after a single warm-up step",
       fmt::format("the first ProfilerStep is more than {}x the median of the later ones and {} us longer (at "
                   "least {} steps)",
                   kColdStepRatio, kColdStepMinUs, kMinRepeats)},
      {"late_first_op", "a gap between a region's start and its first op, in its first run only",
       "the first call paid for set-up before the work could start (Part 1: about 228 us before the first "
       "aten::matmul of the first recorded step, about 5 us later): a cold start inside the region",
       fmt::format("a labelled region seen at least {} times whose first gap is more than {}x the median of the "
                   "later ones and at least {} us",
                   kMinRepeats, kLateOpRatio, kLateOpMinUs)},
      {"sync_waits_for_little_gpu_work", "a long synchronize call covering little GPU work",
       "the CPU waited for a GPU that had little to do: time goes to launching and preparing work, not doing it "
       "(overhead-bound; Part 1 at n=64: 1.78 ms of waiting for 26 us of GPU work, 98% idle). More work per launch "
       "helps: bigger batches, fused ops, CUDA graphs",
       fmt::format("a *Synchronize call of at least {} us during which the GPU was busy less than {:.0f}% of the time",
                   kSyncMinUs, 100 * kSyncBusyBelow)},
      {"occupancy_query_before_launch", "an occupancy query right before a kernel launch",
       "the library chose the kernel's launch configuration at run time: a heavyweight, adaptively launched "
       "kernel (a GEMM, a convolution). Elementwise kernels launch without one",
       "any cudaOccupancyMaxActiveBlocksPerMultiprocessor call followed by a launch inside the same op"},
      {"memcpy_before_gemm", "a Memcpy DtoD right before a GEMM kernel",
       "the bias was copied into the output first and the GEMM then added onto it (beta = 1): addmm's bias "
       "\"epilogue\" is a copy before the GEMM, not work inside it (Part 1, compiled at 4096: 32 MB, about 33 us)",
       "a device-to-device copy followed directly by a GEMM kernel on the same stream"},
      {"kernel_time_varies", "the same kernel taking different times across steps",
       "the same work ran at different speeds: clocks, heat, power limits, the driver's housekeeping. Read the "
       "trace, not just the mean (Part 1: 580 us for one GEMM, a mean of 1084 us over 5)",
       fmt::format("a kernel name run at least {} times by one op at one input shape and, in a trace with steps, "
                   "at one place in each step, whose slowest run is more than {}x its median and {} us longer",
                   kMinRepeats, kKernelVariesRatio, kKernelVariesMinUs)},
      {"compile_wrappers_cost_more", "compiled-region wrappers costing more than the ops inside them",
       "every call through torch.compile pays for its guards and wrappers (TorchDynamo Cache Lookup, Torch-Compiled "
       "Region, AOTDispatcher's runtime wrapper); around one or two ops that tax costs more than the ops. It "
       "amortises over many ops per call (Part 1: 0.2 vs 0.1 ms per step)",
       "the summed time of Torch-Compiled Region events outside their aten ops and triton_* calls, plus "
       "TorchDynamo Cache Lookup, exceeds the time of those ops and calls"},
  };
  return rules;
}

std::vector<Advice> advise(const Profile& profile) {
  std::vector<Advice> found;
  for (RuleCheck check : rule_checks())
    if (auto advice = check(profile)) found.push_back(std::move(*advice));
  return found;
}

std::string format_advice(const std::vector<Advice>& advice) {
  std::string text =
      advice.empty() ? "no rule of the cheat sheet fired on this trace\n"
                     : fmt::format("{} of {} rules of the cheat sheet fired:\n", advice.size(), advice_rules().size());
  for (const auto& a : advice) {
    const AdviceRule& rule = rule_named(a.rule);
    text += fmt::format("\n[{}] if you see {}\n  here: {}\n  it usually means {}\n  fires on: {}\n", rule.id,
                        rule.if_you_see, a.evidence, rule.usually_means, rule.threshold);
  }
  text += "\nsilent here (each checked):\n";
  for (const auto& rule : advice_rules())
    if (std::none_of(advice.begin(), advice.end(), [&](const Advice& a) { return a.rule == rule.id; }))
      text += fmt::format("  [{}] fires on: {}\n", rule.id, rule.threshold);
  return text;
}

std::string advice_json(const std::vector<Advice>& advice) {
  nlohmann::json out{{"findings", nlohmann::json::array()}, {"silent", nlohmann::json::array()}};
  for (const auto& a : advice) {
    const AdviceRule& rule = rule_named(a.rule);
    out["findings"].push_back({{"rule", rule.id},
                               {"if_you_see", rule.if_you_see},
                               {"usually_means", rule.usually_means},
                               {"threshold", rule.threshold},
                               {"evidence", a.evidence}});
  }
  for (const auto& rule : advice_rules())
    if (std::none_of(advice.begin(), advice.end(), [&](const Advice& a) { return a.rule == rule.id; }))
      out["silent"].push_back({{"rule", rule.id}, {"threshold", rule.threshold}});
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace workbook
