#include <doctest/doctest.h>

#include "workbook/profiler/format.h"
#include "workbook/profiler/svg.h"

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

TEST_CASE("a log-log line plot has a polyline per series, a legend and both axes") {
  workbook::Series compute{"compute", {16, 64, 256}, {1, 10, 1000}, "#4e79a7", false};
  workbook::Series busy{"busy fraction", {16, 64, 256}, {0.1, 0.5, 0.99}, "#e15759", true};
  workbook::PlotOptions options;
  options.title = "sweep";
  options.x_label = "n";
  options.y_label = "us per step";
  options.right_label = "busy fraction";
  const std::string svg = workbook::line_plot_svg({compute}, options, {busy});
  std::size_t lines = 0;
  for (auto at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++lines;
  CHECK(lines == 2);
  CHECK(svg.find(">busy fraction</text>") != std::string::npos);
  CHECK(svg.find(">256</text>") != std::string::npos);
  CHECK(svg.find(">1000</text>") != std::string::npos);  // the log axis reaches the next power of ten
  CHECK(svg.find("stroke-dasharray") != std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
}

TEST_CASE("printable writes control characters, C1 controls and bidi overrides out") {
  CHECK(workbook::printable("a\x1b[2Jb\n") == "a\\x1b[2Jb\\x0a");
  CHECK(workbook::printable("x\xC2\x9B"
                            "31m") == "x\\u{009b}31m");
  CHECK(workbook::printable("\xE2\x80\xAE"
                            "evil") == "\\u{202e}evil");
  CHECK(workbook::printable("caf\xC3\xA9 \xE2\x80\x94 ok") == "caf\xC3\xA9 \xE2\x80\x94 ok");  // ordinary UTF-8 stays
}

TEST_CASE("shortened cuts at a character's start, never inside one, and leaves short text alone") {
  CHECK(workbook::shortened("abc", 10) == "abc");
  CHECK(workbook::shortened("abcdefghijkl", 10) == "abcdefg...");
  // "x" then 2-byte characters: a cut at byte 7 falls between two; one at byte 6 would split the
  // third, so it steps back to byte 5.
  const std::string name = "x\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";
  CHECK(workbook::shortened(name, 10) == "x\xC3\xA9\xC3\xA9\xC3\xA9...");
  CHECK(workbook::shortened(name, 9) == "x\xC3\xA9\xC3\xA9...");
}

TEST_CASE("printable escapes bytes that are not well-formed UTF-8: a stray byte, a cut sequence, an overlong") {
  CHECK(workbook::printable("path\xFF.json") == "path\\xff.json");
  CHECK(workbook::printable("caf\xC3") == "caf\\xc3");                   // cut at the end
  CHECK(workbook::printable("\xC0\xAF") == "\\xc0\\xaf");                // overlong '/'
  CHECK(workbook::printable("\xED\xA0\x80") == "\\xed\\xa0\\x80");       // a surrogate
  CHECK(workbook::printable("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80");  // an emoji stays
}
