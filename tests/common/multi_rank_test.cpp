// Several ranks read together, on hand-made profiles whose answers are known.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "synthetic_events.h"
#include "workbook/profiler/multi_rank.h"

using testing::make_event;
using workbook::Category;
using workbook::Profile;

namespace {

// One recorded step [0, 100) with a collective called at `call` (2 ns) whose transfer runs from
// call + 2 to `end`, on the process group's lane (thread 9).
Profile rank_with_collective(std::int64_t call, std::int64_t end) {
  return Profile({make_event("ProfilerStep#0", 0, 100, Category::user_annotation),
                  make_event("c10d::allreduce_", call, call + 2),
                  make_event("gloo:all_reduce", call + 2, end, Category::user_annotation, 9)});
}

}  // namespace

TEST_CASE("clocks are aligned by the first transfer's end, and the late rank is the straggler") {
  // Rank 0 calls at 10, its transfer ends at 50; rank 1 calls at 30 and its transfer ends at 60.
  // Aligned (rank 0 moved by +10): rank 0 arrived at 20, rank 1 at 30: rank 0 waited 10 ns.
  const auto a = workbook::analyze_ranks({rank_with_collective(10, 50), rank_with_collective(30, 60)});
  REQUIRE(a.ranks.size() == 2);
  CHECK(a.shift_ns == std::vector<std::int64_t>{10, 0});
  REQUIRE(a.collectives.size() == 1);
  CHECK(a.collectives[0].arrival_ns == std::vector<std::int64_t>{20, 30});
  CHECK(a.collectives[0].last_rank == 1);
  CHECK(a.collectives[0].spread_ns == 10);
  CHECK(a.ranks[0].waited_ns == 10);
  CHECK(a.ranks[1].waited_ns == 0);
  REQUIRE(a.straggler);
  CHECK(*a.straggler == 1);
  // Nothing computes while the transfers fly: all exposed.
  CHECK(a.ranks[0].communication_ns == 38);
  CHECK(a.ranks[0].exposed_ns == 38);
  CHECK(a.ranks[0].overlap_fraction == 0);
}

TEST_CASE("only the collectives every rank ran are compared, nested calls counted once") {
  // Rank 1 runs a second collective that rank 0 does not record; its record_param_comms sits inside
  // c10d::allreduce_ (as on LibTorch 2.x) and is the same collective.
  Profile r0 = rank_with_collective(10, 50);
  const Profile r1(
      {make_event("ProfilerStep#0", 0, 100, Category::user_annotation), make_event("c10d::allreduce_", 10, 14),
       make_event("record_param_comms", 11, 13), make_event("gloo:all_reduce", 14, 50, Category::user_annotation, 9),
       make_event("c10d::allreduce_", 60, 62), make_event("gloo:all_reduce", 62, 90, Category::user_annotation, 9)});
  CHECK(workbook::collective_arrivals(r1) == std::vector<std::int64_t>{10, 60});
  const auto a = workbook::analyze_ranks({r0, r1});
  CHECK(a.collectives.size() == 1);
  CHECK(a.ranks[1].collectives == 1);
}

TEST_CASE("ranks that take turns arriving last name no straggler") {
  // Two collectives: rank 1 is late at the first, rank 0 at the second.
  const auto job = [](std::int64_t first_call, std::int64_t second_call) {
    return Profile({make_event("ProfilerStep#0", 0, 200, Category::user_annotation),
                    make_event("c10d::allreduce_", first_call, first_call + 2),
                    make_event("gloo:all_reduce", first_call + 2, 50, Category::user_annotation, 9),
                    make_event("c10d::allreduce_", second_call, second_call + 2),
                    make_event("gloo:all_reduce", second_call + 2, 150, Category::user_annotation, 9)});
  };
  const auto a = workbook::analyze_ranks({job(10, 120), job(30, 100)});
  REQUIRE(a.collectives.size() == 2);
  CHECK(a.collectives[0].last_rank == 1);
  CHECK(a.collectives[1].last_rank == 0);
  CHECK_FALSE(a.straggler);
  CHECK(workbook::format_multi_rank(a).find("no single straggler") != std::string::npos);
}

TEST_CASE("a GPU job's collectives are its NCCL kernels when no host call is recorded") {
  const Profile gpu({make_event("ProfilerStep#0", 0, 100, Category::user_annotation),
                     testing::make_device_work("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20, 70, 13),
                     testing::make_device_work("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 80, 90, 13)});
  CHECK(workbook::collective_arrivals(gpu) == std::vector<std::int64_t>{20, 80});
}

TEST_CASE("the JSON carries every rank and collective, times in microseconds") {
  const auto a = workbook::analyze_ranks({rank_with_collective(10000, 50000), rank_with_collective(30000, 60000)},
                                         {"a.json", "b.json"});
  const auto j = nlohmann::json::parse(workbook::multi_rank_json(a));
  REQUIRE(j["ranks"].size() == 2);
  CHECK(j["ranks"][0]["name"] == "a.json");
  CHECK(j["ranks"][0]["waited_us"].get<double>() == doctest::Approx(10));
  CHECK(j["collectives"][0]["last_rank"] == 1);
  CHECK(j["straggler"] == 1);
  CHECK(workbook::format_multi_rank(a).find("b.json (1 of 1)") != std::string::npos);
}

TEST_CASE("fewer than two ranks, a rank without steps or without a transfer: refused with the reason") {
  CHECK_THROWS_AS(workbook::analyze_ranks({rank_with_collective(10, 50)}), std::invalid_argument);
  const Profile no_steps({make_event("gloo:all_reduce", 0, 10, Category::user_annotation, 9)});
  CHECK_THROWS_WITH_AS(workbook::analyze_ranks({rank_with_collective(10, 50), no_steps}),
                       doctest::Contains("rank 1: no ProfilerStep#N"), std::invalid_argument);
  const Profile no_transfer({make_event("ProfilerStep#0", 0, 100, Category::user_annotation)});
  CHECK_THROWS_WITH_AS(workbook::analyze_ranks({rank_with_collective(10, 50), no_transfer}),
                       doctest::Contains("no collective transfer"), std::invalid_argument);
}

TEST_CASE("the ranks' figure: two lanes a rank, overlap shaded only where a transfer flew during an op") {
  // Rank 0 computes [20, 40) while its transfer flies [12, 50): overlap [20, 40). Rank 1 computes nothing.
  Profile r0({make_event("ProfilerStep#0", 0, 100, Category::user_annotation), make_event("c10d::allreduce_", 10, 12),
              make_event("gloo:all_reduce", 12, 50, Category::user_annotation, 9), make_event("aten::mm", 20, 40)});
  const Profile r1 = rank_with_collective(30, 60);
  const auto a = workbook::analyze_ranks({r0, r1}, {"first", "second"});
  const std::string svg = workbook::ranks_timeline_svg({r0, r1}, a);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find(">first<") != std::string::npos);
  CHECK(svg.find(">second<") != std::string::npos);
  const auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count("fill=\"#59a14f\" fill-opacity") == 1);  // rank 0's overlap; rank 1 has none
  CHECK(count("<title>ProfilerStep#0</title>") == 2);
  CHECK_THROWS_AS(workbook::ranks_timeline_svg({r0}, a), std::invalid_argument);
}
