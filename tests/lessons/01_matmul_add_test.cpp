// Checks of exercise 01, built twice: against the learner's file (./workbook check 1) and
// against the reference solution (the suite).
#include "workbook_doctest.h"

#include <unistd.h>

#include "01_matmul_add.h"
#include "workbook/chrome_trace.h"
#include "workbook/key_averages.h"

namespace {

using workbook::Profile;

Profile run(const workbook::Schedule& schedule) {
  torch::manual_seed(1);
  return exercises::profile_matmul_add(torch::randn({32, 32}), torch::randn({32, 32}), torch::randn({32}), schedule);
}

// The article's schedule: wait 1, warm-up 1, three recorded steps. Recorded once, checked often.
const Profile& article_profile() {
  static const Profile profile = run(workbook::Schedule(1, 1, 3));
  return profile;
}

}  // namespace

TEST_CASE("three recorded matmul_add regions, each with matmul -> mm and add beneath") {
  const Profile& p = article_profile();
  const auto regions = p.find("matmul_add");
  REQUIRE(regions.size() == 3);
  for (auto r : regions) {
    CHECK(p[r].category == workbook::Category::user_annotation);
    CHECK(p.has_chain(r, {"aten::matmul", "aten::mm"}));
    CHECK(p.count_under(r, "aten::matmul") == 1);
    CHECK(p.count_under(r, "aten::add") == 1);
  }
}

TEST_CASE("each recorded step is a ProfilerStep#N region holding one matmul_add") {
  const Profile& p = article_profile();
  const auto steps = p.find_prefix("ProfilerStep#");
  REQUIRE(steps.size() == 3);
  CHECK(p[steps[0]].name == "ProfilerStep#2");
  CHECK(p[steps[2]].name == "ProfilerStep#4");
  for (auto s : steps) CHECK(p.count_under(s, "matmul_add") == 1);
  for (auto r : p.find("matmul_add")) {
    REQUIRE(p.parent(r));
    CHECK(p[*p.parent(r)].name.rfind("ProfilerStep#", 0) == 0);
  }
}

TEST_CASE("the schedule decides what is recorded, not a fixed count") {
  const Profile p = run(workbook::Schedule(0, 2, 2));
  CHECK(p.count("matmul_add") == 2);
  CHECK(p.count("aten::mm") == 2);
  CHECK(p.find_prefix("ProfilerStep#").size() == 2);
}

TEST_CASE("the table has a row per op with one call per recorded step") {
  const workbook::KeyAverages averages(article_profile());
  for (const char* name : {"matmul_add", "aten::matmul", "aten::mm", "aten::add"}) {
    const workbook::KeyAverage* row = averages.find(name);
    REQUIRE_MESSAGE(row != nullptr, "no row for " << name);
    CHECK(row->count == 3);
    CHECK(row->cpu_total_us >= row->self_cpu_us);
  }
  const std::string table = averages.table("cpu_time_total", 15);
  CHECK(table.find("aten::mm") != std::string::npos);
  CHECK(table.find("Self CPU time total:") != std::string::npos);
}

TEST_CASE("the chrome trace, written and loaded back, gives the same counts") {
  const Profile& p = article_profile();
  const auto path = std::filesystem::temp_directory_path() / ("wb-check01-" + std::to_string(::getpid()) + ".json");
  workbook::write_chrome_trace(p, path);
  const Profile back = workbook::load_chrome_trace(path);
  std::filesystem::remove(path);
  for (const char* name : {"matmul_add", "aten::matmul", "aten::mm", "aten::add", "ProfilerStep#3"})
    CHECK_MESSAGE(back.count(name) == p.count(name), name);
  for (auto r : back.find("matmul_add")) CHECK(back.has_chain(r, {"aten::matmul", "aten::mm"}));
}
