#include <doctest/doctest.h>

#include "workbook/svg.h"

TEST_CASE("a timeline has a box per event, escaped names and the title") {
  workbook::Event a;
  a.name = "aten::mm";
  a.start_ns = 0;
  a.end_ns = 1000;
  workbook::Event b = a;
  b.name = "<tricky & name>";
  b.start_ns = 100;
  b.end_ns = 200;
  workbook::TimelineOptions options;
  options.title = "t & t";
  const std::string svg = workbook::timeline_svg(workbook::Profile({a, b}), options);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find("t &amp; t") != std::string::npos);
  CHECK(svg.find("&lt;tricky &amp; name&gt;") != std::string::npos);
  CHECK(svg.find("<tricky") == std::string::npos);
  std::size_t boxes = 0;
  for (auto at = svg.find("<rect x="); at != std::string::npos; at = svg.find("<rect x=", at + 1)) ++boxes;
  CHECK(boxes == 2);
}

TEST_CASE("an empty profile still gives a valid picture") {
  const std::string svg = workbook::timeline_svg(workbook::Profile{});
  CHECK(svg.find("</svg>") != std::string::npos);
}
