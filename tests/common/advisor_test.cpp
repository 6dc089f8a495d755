// advisor.h: each rule of the cheat sheet fires on a profile built to show it, and stays silent on
// one just short of its threshold.
#include "workbook/profiler/advisor.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "synthetic_events.h"

using testing::make_device_work;
using testing::make_event;
using testing::make_launch;
using workbook::Category;
using workbook::DeviceWork;
using workbook::Event;
using workbook::Profile;

namespace {

constexpr std::int64_t us = 1000;

bool fires(const Profile& profile, const std::string& rule) {
  const auto advice = workbook::advise(profile);
  return std::any_of(advice.begin(), advice.end(), [&](const workbook::Advice& a) { return a.rule == rule; });
}

std::string evidence(const Profile& profile, const std::string& rule) {
  for (const auto& a : workbook::advise(profile))
    if (a.rule == rule) return a.evidence;
  return "";
}

// Steps of these lengths (µs), back to back, each a ProfilerStep#N holding a region "work" whose
// first op starts `gaps[k]` µs after the region does.
Profile steps(const std::vector<std::int64_t>& lengths, const std::vector<std::int64_t>& gaps) {
  std::vector<Event> events;
  std::int64_t t = 0;
  for (std::size_t k = 0; k < lengths.size(); ++k) {
    const std::string step = "ProfilerStep#" + std::to_string(k + 1);
    events.push_back(make_event(step.c_str(), t, t + lengths[k] * us, Category::user_annotation));
    events.back().name = step;
    events.push_back(make_event("work", t + 1 * us, t + lengths[k] * us - 1 * us, Category::user_annotation));
    events.push_back(make_event("aten::mm", t + 1 * us + gaps[k] * us, t + lengths[k] * us - 2 * us));
    t += lengths[k] * us;
  }
  return Profile(std::move(events));
}

// A synchronize call of `wait` µs during which a kernel of `busy` µs runs.
Profile sync_over(std::int64_t wait, std::int64_t busy) {
  std::vector<Event> events = {make_event("cudaDeviceSynchronize", 0, wait * us, Category::runtime),
                               make_device_work("kernel", 10 * us, 10 * us + busy * us, 7)};
  return Profile(std::move(events));
}

// aten::addmm launching `first` then a GEMM on one stream, with a gap of `gap` ns between them.
Profile copy_then(const char* first, DeviceWork work, const char* second) {
  std::vector<Event> events = {
      make_event("aten::addmm", 0, 100 * us), make_event("cudaMemcpyAsync", 10 * us, 20 * us, Category::runtime),
      make_launch(30 * us, 40 * us, 2), make_device_work(first, 200 * us, 233 * us, 7, work, 1),
      make_device_work(second, 240 * us, 820 * us, 7, DeviceWork::kernel, 2)};
  events[1].correlation = 1;
  return Profile(std::move(events));
}

// One GEMM per step, launched by aten::mm, taking these durations (µs).
Profile kernel_runs(const std::vector<std::int64_t>& durations) {
  std::vector<Event> events;
  std::int64_t t = 0;
  for (std::size_t k = 0; k < durations.size(); ++k) {
    const std::int64_t length = durations[k] * us + 200 * us;
    const std::string step = "ProfilerStep#" + std::to_string(k + 1);
    events.push_back(make_event("step", t, t + length, Category::user_annotation));
    events.back().name = step;
    events.push_back(make_event("aten::mm", t + 1 * us, t + 50 * us));
    events.push_back(make_launch(t + 10 * us, t + 20 * us, std::int64_t(k) + 1));
    events.push_back(make_device_work("ampere_bf16_s16816gemm_bf16_128x128_ldg8_stages_64x3_tn", t + 30 * us,
                                      t + 30 * us + durations[k] * us, 7, DeviceWork::kernel, std::int64_t(k) + 1));
    t += length;
  }
  return Profile(std::move(events));
}

// One elementwise kernel name launched by one op for two tensor sizes in each step (a trace without
// shapes): a short run and a long one per step, every step alike.
Profile one_name_two_sizes(int steps_count) {
  std::vector<Event> events;
  std::int64_t t = 0;
  std::int64_t correlation = 1;
  for (int k = 0; k < steps_count; ++k) {
    const std::string step = "ProfilerStep#" + std::to_string(k + 1);
    events.push_back(make_event("step", t, t + 1000 * us, Category::user_annotation));
    events.back().name = step;
    for (std::int64_t length : {5, 145}) {
      events.push_back(make_event("aten::relu_", t + 1 * us, t + 40 * us));
      events.push_back(make_launch(t + 10 * us, t + 20 * us, correlation));
      events.push_back(make_device_work("vectorized_elementwise_kernel", t + 100 * us, t + 100 * us + length * us, 7,
                                        DeviceWork::kernel, correlation++));
      t += 300 * us;
    }
    t += 400 * us;
  }
  return Profile(std::move(events));
}

// `calls` compiled calls of `wrapper` µs each around an aten op of `op` µs.
Profile compiled_calls(int calls, std::int64_t wrapper, std::int64_t op) {
  std::vector<Event> events;
  std::int64_t t = 0;
  for (int k = 0; k < calls; ++k) {
    events.push_back(make_event("Torch-Compiled Region: 0/0", t, t + (wrapper + op) * us, Category::user_annotation));
    events.push_back(make_event("aten::addmm", t + wrapper * us / 2, t + wrapper * us / 2 + op * us));
    t += (wrapper + op) * us + 5 * us;
  }
  return Profile(std::move(events));
}

}  // namespace

TEST_CASE("cold_first_step fires on a first step over twice the others and stays silent under it") {
  CHECK(fires(steps({300, 100, 110, 90}, {1, 1, 1, 1}), "cold_first_step"));
  CHECK(evidence(steps({300, 100, 110, 90}, {1, 1, 1, 1}), "cold_first_step").find("ProfilerStep#1 took 300") !=
        std::string::npos);
  CHECK_FALSE(fires(steps({190, 100, 110, 90}, {1, 1, 1, 1}), "cold_first_step"));   // 1.9x
  CHECK_FALSE(fires(steps({29, 10, 10, 10}, {1, 1, 1, 1}), "cold_first_step"));      // 2.9x, but 19 us apart
  CHECK_FALSE(fires(steps({300, 100}, {1, 1}), "cold_first_step"));                  // too few steps to say
  CHECK_FALSE(fires(steps({100, 100, 300, 100}, {1, 1, 1, 1}), "cold_first_step"));  // a later step is slow
}

TEST_CASE("late_first_op fires on a region whose first op starts late the first time only") {
  CHECK(fires(steps({300, 300, 300}, {60, 2, 2}), "late_first_op"));
  CHECK(evidence(steps({300, 300, 300}, {60, 2, 2}), "late_first_op").find("'work'") != std::string::npos);
  CHECK_FALSE(fires(steps({300, 300, 300}, {9, 1, 1}), "late_first_op"));     // under 10 us
  CHECK_FALSE(fires(steps({300, 300, 300}, {60, 20, 20}), "late_first_op"));  // 3x
  CHECK_FALSE(fires(steps({300, 300, 300}, {2, 60, 60}), "late_first_op"));   // late every time but the first
}

TEST_CASE("sync_waits_for_little_gpu_work fires on a long wait over an idle GPU") {
  CHECK(fires(sync_over(1780, 26), "sync_waits_for_little_gpu_work"));
  CHECK(evidence(sync_over(1780, 26), "sync_waits_for_little_gpu_work").find("99% idle") != std::string::npos);
  CHECK_FALSE(fires(sync_over(1780, 900), "sync_waits_for_little_gpu_work"));  // the GPU was working
  CHECK_FALSE(fires(sync_over(40, 1), "sync_waits_for_little_gpu_work"));      // too short to matter
}

TEST_CASE("occupancy_query_before_launch fires when a launch follows the query inside one op") {
  const auto make = [](const char* query_name) {
    std::vector<Event> events = {
        make_event("aten::mm", 0, 100 * us), make_event(query_name, 10 * us, 12 * us, Category::runtime),
        make_launch(20 * us, 30 * us, 4),
        make_device_work("ampere_sgemm_128x64_tn", 40 * us, 90 * us, 7, DeviceWork::kernel, 4)};
    return Profile(std::move(events));
  };
  CHECK(fires(make("cudaOccupancyMaxActiveBlocksPerMultiprocessor"), "occupancy_query_before_launch"));
  CHECK(evidence(make("cudaOccupancyMaxActiveBlocksPerMultiprocessor"), "occupancy_query_before_launch")
            .find("ampere_sgemm_128x64_tn") != std::string::npos);
  CHECK_FALSE(fires(make("cudaGetDevice"), "occupancy_query_before_launch"));
  // A query with no launch after it in its op: silent.
  std::vector<Event> alone = {
      make_event("aten::mm", 0, 100 * us),
      make_event("cudaOccupancyMaxActiveBlocksPerMultiprocessor", 10 * us, 12 * us, Category::runtime)};
  CHECK_FALSE(fires(Profile(std::move(alone)), "occupancy_query_before_launch"));
}

TEST_CASE("memcpy_before_gemm fires on a device-to-device copy right before a GEMM") {
  const Profile bias_copy = copy_then("Memcpy DtoD (Device -> Device)", DeviceWork::memcpy,
                                      "ampere_bf16_s16816gemm_bf16_128x128_ldg8_stages_64x3_tn");
  CHECK(fires(bias_copy, "memcpy_before_gemm"));
  CHECK(evidence(bias_copy, "memcpy_before_gemm").find("launched by aten::addmm") != std::string::npos);
  CHECK_FALSE(fires(copy_then("Memcpy HtoD (Pageable -> Device)", DeviceWork::memcpy,
                              "ampere_bf16_s16816gemm_bf16_128x128_ldg8_stages_64x3_tn"),
                    "memcpy_before_gemm"));
  CHECK_FALSE(fires(copy_then("Memcpy DtoD (Device -> Device)", DeviceWork::memcpy,
                              "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"),
                    "memcpy_before_gemm"));
}

TEST_CASE("kernel_time_varies fires when one run of a kernel is far slower than its median") {
  CHECK(fires(kernel_runs({580, 590, 2300, 585, 600}), "kernel_time_varies"));
  CHECK(evidence(kernel_runs({580, 590, 2300, 585, 600}), "kernel_time_varies").find("ran 5 times") !=
        std::string::npos);
  CHECK_FALSE(fires(kernel_runs({580, 590, 800, 585, 600}), "kernel_time_varies"));  // 1.35x
  CHECK_FALSE(fires(kernel_runs({10, 10, 25}), "kernel_time_varies"));               // 2.5x, 15 us apart
  CHECK_FALSE(fires(kernel_runs({580, 2300}), "kernel_time_varies"));                // two runs say little
  // The same name for two sizes in every step is two pieces of work, each steady.
  CHECK_FALSE(fires(one_name_two_sizes(4), "kernel_time_varies"));
}

TEST_CASE("compile_wrappers_cost_more fires when the wrappers take longer than the ops inside") {
  CHECK(fires(compiled_calls(3, 120, 70), "compile_wrappers_cost_more"));
  CHECK_FALSE(fires(compiled_calls(3, 20, 700), "compile_wrappers_cost_more"));
  CHECK_FALSE(fires(steps({300, 100, 110}, {1, 1, 1}), "compile_wrappers_cost_more"));  // nothing compiled
}

TEST_CASE("every rule is stated, and the silent ones are listed with their thresholds") {
  const auto& rules = workbook::advice_rules();
  CHECK(rules.size() == 7);
  for (const auto& rule : rules) {
    CAPTURE(rule.id);
    CHECK_FALSE(rule.if_you_see.empty());
    CHECK_FALSE(rule.usually_means.empty());
    CHECK_FALSE(rule.threshold.empty());
  }
  const auto advice = workbook::advise(steps({300, 100, 110, 90}, {1, 1, 1, 1}));
  const auto json = nlohmann::json::parse(workbook::advice_json(advice));
  CHECK(json["findings"].size() == advice.size());
  CHECK(json["findings"].size() + json["silent"].size() == rules.size());
  const std::string text = workbook::format_advice(advice);
  CHECK(text.find("[cold_first_step] if you see") != std::string::npos);
  CHECK(text.find("silent here") != std::string::npos);
  CHECK(workbook::format_advice({}).find("no rule of the cheat sheet fired") != std::string::npos);
}
