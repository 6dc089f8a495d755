// html_report.h: the page is self-contained, its data is the toolkit's own numbers, and no name in
// a trace can break out of the page's script.
#include "workbook/profiler/html_report.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "synthetic_events.h"
#include "workbook/profiler/advisor.h"
#include "workbook/profiler/key_averages.h"

using testing::make_event;
using workbook::Category;
using workbook::Profile;

namespace {

Profile two_steps(const char* op_name) {
  return Profile({make_event("ProfilerStep#1", 0, 100000, Category::user_annotation), make_event(op_name, 10000, 60000),
                  make_event("aten::mm", 20000, 50000),
                  make_event("ProfilerStep#2", 100000, 150000, Category::user_annotation),
                  make_event(op_name, 110000, 140000)});
}

}  // namespace

TEST_CASE("the report's operator rows are key_averages' rows, and its steps are the trace's") {
  const Profile profile = two_steps("aten::linear");
  const auto data = nlohmann::json::parse(workbook::report_data_json({"t.json", profile}));
  workbook::TableOptions all;
  all.row_limit = 0;
  CHECK(data["operators"] == nlohmann::json::parse(workbook::KeyAverages(profile).to_json(all)));
  REQUIRE(data["overview"]["rows"].size() == 3);  // two steps and the whole trace
  CHECK(data["overview"]["rows"][0]["name"] == "ProfilerStep#1");
  CHECK(data["overview"]["rows"][0]["wall_us"] == 100.0);
  CHECK(data["overview"]["rows"][0]["cpu_ops_us"] == 50.0);  // aten::mm inside aten::linear counts once
  CHECK(data["overview"]["rows"][2]["name"] == "whole trace");
  CHECK(data["advice"]["silent"].size() + data["advice"]["findings"].size() == workbook::advice_rules().size());
}

TEST_CASE("a name holding </script> cannot end the page's data early") {
  const std::string page =
      workbook::html_report({{"evil.json", two_steps("</script><script>alert(1)</script>")}}, "a <b>title</b>");
  CHECK(page.find("</script><script>alert(1)") == std::string::npos);
  CHECK(page.find("\\u003c/script>") != std::string::npos);
  CHECK(page.find("<title>a &lt;b&gt;title&lt;/b&gt;</title>") != std::string::npos);
}

TEST_CASE("the report page loads nothing from elsewhere") {
  const std::string page = workbook::html_report({{"t.json", two_steps("aten::linear")}}, "t");
  for (const char* fetch : {"src=\"http", "href=\"http", "src=\"//", "href=\"//", "@import", "fetch("})
    CHECK_MESSAGE(page.find(fetch) == std::string::npos, fetch);
}
