// Collapsed stacks and the flame graph on a profile whose self times are known.
#include <doctest/doctest.h>

#include <regex>
#include <sstream>

#include "synthetic_events.h"
#include "workbook/profiler/flame_graph.h"

using testing::make_event;
using workbook::Category;

namespace {

// step [0, 100] us > a [10, 60] > "b c" [20, 40]; d [70, 90]; twice, as two steps on two threads.
workbook::Profile sample() {
  std::vector<workbook::Event> events;
  for (std::uint64_t thread : {1, 2}) {
    events.push_back(
        make_event(thread == 1 ? "ProfilerStep#1" : "ProfilerStep#2", 0, 100000, Category::user_annotation, thread));
    events.push_back(make_event("a", 10000, 60000, Category::cpu_op, thread));
    events.push_back(make_event("b c", 20000, 40000, Category::cpu_op, thread));
    events.push_back(make_event("d", 70000, 90000, Category::cpu_op, thread));
  }
  events.push_back(make_event("tiny", 95000, 95500, Category::cpu_op, 1));  // under 1 us of self time
  return workbook::Profile(events);
}

}  // namespace

TEST_CASE("one line per stack, values are self time in us, identical stacks added up") {
  const std::string text = workbook::collapsed_stacks_text(sample());
  CHECK(text ==
        "ProfilerStep* 59\n"
        "ProfilerStep*;a 60\n"
        "ProfilerStep*;a;b_c 40\n"
        "ProfilerStep*;d 40\n");
  // Every line parses as "stack count", the format flamegraph.pl and speedscope read.
  std::istringstream lines(text);
  const std::regex format(R"(^[^ ;]+(;[^ ;]+)* [0-9]+$)");
  CHECK(text.find("ProfilerStep#") == std::string::npos);
  for (std::string line; std::getline(lines, line);) CHECK_MESSAGE(std::regex_match(line, format), line);
}

TEST_CASE("the flame graph draws each frame once per path, as wide as its share") {
  const std::string svg = workbook::flame_graph_svg(sample(), "t", 1000);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("<title>ProfilerStep* · 199.000us · 100.0%</title>") != std::string::npos);
  CHECK(svg.find("<title>b_c · 40.000us · 20.1%</title>") != std::string::npos);
  CHECK(workbook::flame_graph_svg(workbook::Profile{}, "empty").find("no self time") != std::string::npos);
}
