#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

#include "synthetic_events.h"
#include "workbook/profiler/key_averages.h"

using workbook::Category;
using workbook::Event;
using workbook::KeyAverages;
using workbook::Profile;

namespace {

// Times in microseconds here, as in Python's tables.
Event ev(const char* name, std::int64_t start_us, std::int64_t end_us, Category c = Category::cpu_op) {
  return testing::make_event(name, start_us * 1000, end_us * 1000, c);
}

// ProfilerStep#2 [0,100] > matmul_add [5,95] > {aten::matmul [10,60] > aten::mm [20,60], aten::add [60,90]}
// Self times: 10, 10, 10, 40, 30 = 100 us in all.
Profile step_profile() {
  return Profile({ev("ProfilerStep#2", 0, 100, Category::user_annotation),
                  ev("matmul_add", 5, 95, Category::user_annotation), ev("aten::matmul", 10, 60),
                  ev("aten::mm", 20, 60), ev("aten::add", 60, 90)});
}

}  // namespace

TEST_CASE("rows add up self and total time like FunctionEventAvg") {
  const KeyAverages k(step_profile());
  REQUIRE(k.rows().size() == 5);
  CHECK(k.self_cpu_total_us() == doctest::Approx(100));
  const auto* matmul = k.find("aten::matmul");
  REQUIRE(matmul);
  CHECK(matmul->cpu_total_us == doctest::Approx(50));
  CHECK(matmul->self_cpu_us == doctest::Approx(10));
  CHECK(matmul->count == 1);
  CHECK(k.find("matmul_add")->self_cpu_us == doctest::Approx(10));
  CHECK_FALSE(k.has_device_time());
  CHECK(k.find("nothing") == nullptr);
}

TEST_CASE("the table has Python's layout, percentages of total self time, and the footer") {
  const std::string t = KeyAverages(step_profile()).table("cpu_time_total", 100);
  // The name column is the longest key ("ProfilerStep*") plus 4.
  const std::string sep = std::string(17, '-') + "  " + [] {
    std::string s;
    for (int i = 0; i < 6; ++i) s += std::string(12, '-') + "  ";
    return s;
  }() + "\n";
  CHECK(t.rfind(sep, 0) == 0);
  CHECK(t.find("             Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  "
               "\n") != std::string::npos);
  CHECK(t.find("         aten::mm        40.00%      40.000us        40.00%      40.000us      40.000us             1  "
               "\n") != std::string::npos);
  CHECK(t.find("    ProfilerStep*        10.00%      10.000us       100.00%     100.000us     100.000us             1  "
               "\n") != std::string::npos);
  CHECK(t.find("Self CPU time total: 100.000us\n") != std::string::npos);
  // Sorted by CPU total, descending: the step first, aten::mm (40) before aten::add (30).
  CHECK(t.find("ProfilerStep*") < t.find("matmul_add"));
  CHECK(t.find("aten::mm") < t.find("aten::add"));
}

TEST_CASE("every ProfilerStep#N folds into one ProfilerStep* row, as in Python") {
  const Profile p({ev("ProfilerStep#2", 0, 10, Category::user_annotation),
                   ev("ProfilerStep#3", 20, 40, Category::user_annotation)});
  const KeyAverages k(p);
  REQUIRE(k.rows().size() == 1);
  CHECK(k.rows()[0].name == "ProfilerStep*");
  CHECK(k.rows()[0].count == 2);
  CHECK(k.rows()[0].cpu_total_us == doctest::Approx(30));
}

TEST_CASE("sort keys, stable order and row_limit") {
  const KeyAverages k(step_profile());
  const auto by_self = k.sorted("self_cpu_time_total");
  CHECK(by_self[0].name == "aten::mm");
  CHECK(by_self[1].name == "aten::add");
  CHECK(by_self[2].name == "ProfilerStep*");  // ties keep first-seen order
  CHECK(by_self[3].name == "matmul_add");
  const std::string two = k.table("self_cpu_time_total", 2);
  CHECK(two.find("aten::add") != std::string::npos);
  CHECK(two.find("aten::matmul") == std::string::npos);
  CHECK_THROWS_WITH_AS(k.sorted("wall_time"), doctest::Contains("wall_time"), std::invalid_argument);
}

TEST_CASE("grouping by input shape splits rows and adds the column") {
  Event a = ev("aten::mm", 0, 10), b = ev("aten::mm", 20, 40), c = ev("aten::mm", 50, 60);
  a.input_shapes = {{64, 64}, {64, 64}};
  b.input_shapes = {{64, 64}, {64, 64}};
  c.input_shapes = {{128, 64}, {64, 64}};
  const Profile p({a, b, c});
  CHECK(KeyAverages(p).rows().size() == 1);
  const KeyAverages grouped(p, true);
  REQUIRE(grouped.rows().size() == 2);
  CHECK(grouped.rows()[0].input_shapes == "[[64, 64], [64, 64]]");
  CHECK(grouped.rows()[0].count == 2);
  CHECK(grouped.rows()[0].cpu_total_us == doctest::Approx(30));
  CHECK(grouped.table().find("Input Shapes") != std::string::npos);
}

TEST_CASE("kernel time goes to the op that launched it, and adds the CUDA columns") {
  Event mm = ev("aten::mm", 0, 50), launch = ev("cudaLaunchKernel", 10, 20, Category::runtime);
  Event kernel = ev("gemm", 30, 130, Category::kernel);
  launch.correlation = kernel.correlation = 9;
  kernel.device_type = workbook::DeviceType::cuda;
  Event matmul = ev("aten::matmul", 0, 60);
  const KeyAverages k(Profile({matmul, mm, launch, kernel}));
  CHECK(k.find("aten::mm")->self_device_us == doctest::Approx(100));
  CHECK(k.find("aten::matmul")->self_device_us == doctest::Approx(0));
  CHECK(k.find("aten::matmul")->device_total_us == doctest::Approx(100));
  CHECK(k.find("gemm")->self_device_us == doctest::Approx(100));
  CHECK(k.find("gemm")->cpu_total_us == doctest::Approx(0));
  CHECK(k.self_device_total_us() == doctest::Approx(100));
  const std::string t = k.table("cuda_time_total", 10);
  CHECK(t.find("Self CUDA %") != std::string::npos);
  CHECK(t.find("Self CUDA time total: 100.000us") != std::string::npos);
}

TEST_CASE("memory: CPU Mem includes children, Self CPU Mem only the op's own") {
  Event outer = ev("aten::matmul", 0, 100), inner = ev("aten::mm", 10, 50);
  Event a1 = ev("[memory]", 5, 5, Category::memory), a2 = ev("[memory]", 20, 20, Category::memory);
  a1.bytes = 1024;
  a2.bytes = 4096;
  const KeyAverages k(Profile({outer, inner, a1, a2}));
  CHECK(k.has_memory());
  CHECK(k.find("aten::matmul")->cpu_memory_bytes == 5120);
  CHECK(k.find("aten::matmul")->self_cpu_memory_bytes == 1024);
  CHECK(k.find("aten::mm")->self_cpu_memory_bytes == 4096);
  CHECK(k.table().find("Self CPU Mem") != std::string::npos);
}

TEST_CASE("formatting follows Python's helpers") {
  CHECK(workbook::format_time_us(12.3456) == "12.346us");
  CHECK(workbook::format_time_us(1234.5) == "1.234ms");
  CHECK(workbook::format_time_us(2.5e6) == "2.500s");
  CHECK(workbook::format_memory(512) == "512 b");
  CHECK(workbook::format_memory(16384) == "16.00 Kb");
  CHECK(workbook::format_memory(-3 * 1024 * 1024) == "-3.00 Mb");
  CHECK(workbook::format_shapes({{64, 64}, {}}) == "[[64, 64], []]");
}

TEST_CASE("FLOPs column scales by the smallest non-zero value") {
  Event mm = ev("aten::mm", 0, 10), add = ev("aten::add", 20, 30);
  mm.flops = 524288;
  add.flops = 4096;
  const std::string t = KeyAverages(Profile({mm, add})).table();
  CHECK(t.find("Total KFLOPs") != std::string::npos);
  CHECK(t.find(" 524.288") != std::string::npos);
}

TEST_CASE("JSON and CSV carry the same rows") {
  const KeyAverages k(step_profile());
  const auto json = nlohmann::json::parse(k.to_json());
  REQUIRE(json.size() == 5);
  CHECK(json[0]["name"] == "ProfilerStep*");
  CHECK(json[0]["cpu_total_us"].get<double>() == doctest::Approx(100));
  const std::string csv = k.to_csv();
  CHECK(csv.rfind("name,device_type,input_shapes,count,self_cpu_us", 0) == 0);
  CHECK(csv.find("\"aten::mm\",cpu,\"\",1,40.000,40.000") != std::string::npos);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 6);
}

TEST_CASE("an empty profile gives an empty table") { CHECK(KeyAverages(Profile{}).table().empty()); }
