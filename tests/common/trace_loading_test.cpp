// A large trace file read in parts on two threads (common/profiler/src/trace_loading.h) gives what
// one reader gives: the same profile, or the same error, whatever lies where a part begins.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>

#include "trace_loading.h"
#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/chrome_trace.h"

namespace {

constexpr std::uint64_t kNeverSplit = ~std::uint64_t(0);

// What loading gives, as text to compare: the profile exported again, or the error's message.
std::string outcome(const std::filesystem::path& path, std::uint64_t split_from, bool* read_in_parts = nullptr) {
  try {
    return workbook::to_chrome_trace(
        workbook::detail::load_chrome_trace(path, workbook::kMaxStreamBytes, split_from, read_in_parts));
  } catch (const workbook::TraceError& e) {
    return std::string("error: ") + e.what();
  }
}

// A trace file of `events` complete events (each `event(i)`), between `head` and `tail`.
template <typename EventText>
std::filesystem::path trace_file(const std::string& name, int events, EventText event,
                                 const std::string& head = R"({"traceEvents": [)", const std::string& tail = "]}") {
  std::string doc = head;
  for (int i = 0; i < events; ++i) doc += (i ? ",\n  " : "\n  ") + event(i);
  doc += tail;
  const auto path =
      std::filesystem::temp_directory_path() / ("wb-split-" + name + "-" + std::to_string(::getpid()) + ".json");
  workbook::write_file_atomically(path, doc);
  return path;
}

std::string op(int i, const std::string& name = "aten::mm") {
  return R"({"ph": "X", "cat": "cpu_op", "name": ")" + name + R"(", "pid": 1, "tid": )" + std::to_string(1 + i % 2) +
         R"(, "ts": )" + std::to_string(1000 + 10 * i) + R"(.5, "dur": 4.25, "args": {"Input Dims": [[)" +
         std::to_string(i % 7) + R"(, 64], []], "flops": )" + std::to_string(i) + "}}";
}

// Read in parts (16 for any file) and whole: the same result. Returns whether the parts gave it.
bool split_and_same(const std::filesystem::path& path) {
  bool read_in_parts = false;
  const std::string in_parts = outcome(path, 0, &read_in_parts);
  CHECK(in_parts == outcome(path, kNeverSplit));
  std::filesystem::remove(path);
  return read_in_parts;
}

const bool two_cores = std::thread::hardware_concurrency() >= 2;

}  // namespace

TEST_CASE("a trace read in parts loads as one reader loads it, names and shapes renumbered") {
  // Names, threads and shapes first seen in the second half get ids after the first half's.
  const auto path = trace_file("plain", 4000, [](int i) { return op(i, i < 2000 ? "aten::mm" : "aten::add"); });
  CHECK(split_and_same(path) == two_cores);
  const auto array = trace_file(
      "array", 3000, [](int i) { return op(i); }, "[", "]");
  CHECK(split_and_same(array) == two_cores);
}

TEST_CASE(
    "parts are given up where the helper's first does not begin between two events, and one reader reads it all") {
  SUBCASE("'B'/'E' pairs in the helper's parts, whose pair may lie in an earlier one") {
    const auto path = trace_file("pairs", 4000, [](int i) {
      if (i % 2 == 0) return R"({"ph": "B", "name": "region", "pid": 1, "tid": 1, "ts": )" + std::to_string(i) + "}";
      return R"({"ph": "E", "pid": 1, "tid": 1, "ts": )" + std::to_string(i + 1) + "}";
    });
    CHECK_FALSE(split_and_same(path));
  }
  SUBCASE("the middle falls inside a string that reads like events, again and again") {
    std::string fake;
    for (int k = 0; k < 400; ++k) fake += std::string(1000, 'x') + "}, {";
    const auto path = trace_file(
        "string", 10, [](int i) { return op(i); }, R"({"meta": ")" + fake + R"(", "traceEvents": [)");
    CHECK_FALSE(split_and_same(path));
  }
  SUBCASE("the middle falls inside an event's arguments") {
    // Nine events: the middle of the file is in the middle of the fifth.
    const auto path = trace_file("args", 9, [](int i) {
      std::string list;
      for (int k = 0; k < 20000; ++k) list += (k ? ", " : "") + std::string(R"({"k": 1})");
      return R"({"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": )" + std::to_string(i) +
             R"(, "dur": 1, "args": {"list": [)" + list + "]}}";
    });
    CHECK_FALSE(split_and_same(path));
  }
}

TEST_CASE(
    "an error anywhere in a trace read in parts is the error one reader reports, event number and byte included") {
  SUBCASE("an event without 'ph' in the helper's half") {
    CHECK_FALSE(split_and_same(trace_file(
        "no-ph", 4000, [](int i) { return i == 3500 ? std::string(R"({"name": "op", "ts": 1})") : op(i); })));
  }
  SUBCASE("an event without 'ph' in the first part, read by this thread's own run") {
    CHECK_FALSE(split_and_same(trace_file(
        "no-ph-first", 4000, [](int i) { return i == 10 ? std::string(R"({"name": "op", "ts": 1})") : op(i); })));
  }
  SUBCASE("a trace cut short") {
    CHECK_FALSE(split_and_same(trace_file(
        "cut", 4000, [](int i) { return op(i); }, R"({"traceEvents": [)", "")));
  }
  SUBCASE("a second traceEvents member after the first") {
    CHECK_FALSE(split_and_same(trace_file(
        "twice", 4000, [](int i) { return op(i); }, R"({"traceEvents": [)", R"(], "traceEvents": []})")));
  }
  SUBCASE("bytes after the end of the document") {
    CHECK_FALSE(split_and_same(trace_file(
        "after", 4000, [](int i) { return op(i); }, R"({"traceEvents": [)", "]} x")));
  }
  SUBCASE("a bare array whose end says it was an object") {
    CHECK_FALSE(split_and_same(trace_file(
        "mismatch", 4000, [](int i) { return op(i); }, "[", "]}")));
  }
}

TEST_CASE("every stored trace and every fuzz regression loads in parts as it loads whole") {
  int files = 0;
  for (const char* folder : {"traces", "fuzz-regressions"})
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(std::filesystem::path(WORKBOOK_TEST_DATA) / folder)) {
      if (!entry.is_regular_file()) continue;
      CAPTURE(entry.path().string());
      ++files;
      CHECK(outcome(entry.path(), 0) == outcome(entry.path(), kNeverSplit));
    }
  CHECK(files >= 20);
}
