#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <thread>

#include "synthetic_events.h"
#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/gzip.h"
#include "workbook/profiler/key_averages.h"

using workbook::Category;
using workbook::Event;
using workbook::Profile;
using workbook::TraceError;

namespace {

Event ev(const char* name, std::int64_t start, std::int64_t end, Category c = Category::cpu_op) {
  return testing::make_event(name, start, end, c, 3);
}

Profile gpu_profile() {
  Event step = ev("ProfilerStep#2", 0, 100000, Category::user_annotation);
  Event mm = ev("aten::mm", 1000, 50000);
  mm.input_shapes = {{64, 64}, {64, 64}};
  mm.flops = 524288;
  Event launch = ev("cudaLaunchKernel", 2000, 3500, Category::runtime);
  launch.correlation = 5;
  Event kernel = ev("gemm", 10000, 40000, Category::kernel);
  kernel.device_type = workbook::DeviceType::cuda;
  kernel.thread = 7;
  kernel.correlation = 5;
  Event alloc = ev("[memory]", 1500, 1500, Category::memory);
  alloc.bytes = 16384;
  return Profile({step, mm, launch, kernel, alloc});
}

}  // namespace

TEST_CASE("export is Trace Event JSON in Kineto's dialect") {
  workbook::TraceOptions options;
  options.pid = 1234;
  const auto json = nlohmann::json::parse(workbook::to_chrome_trace(gpu_profile(), options));
  const auto& events = json.at("traceEvents");
  int complete = 0, flows = 0, names = 0;
  for (const auto& e : events) {
    const std::string ph = e.at("ph");
    if (ph == "X") {
      ++complete;
      for (const char* key : {"name", "cat", "pid", "tid", "ts", "dur"}) CHECK_MESSAGE(e.contains(key), key);
    }
    flows += (ph == "s" || ph == "f");
    names += (ph == "M");
  }
  CHECK(complete == 4);
  CHECK(flows == 2);
  CHECK(names >= 3);
  for (const auto& e : events) {
    if (e.value("name", "") == "aten::mm") {
      CHECK(e["ts"].get<double>() == doctest::Approx(1.0));
      CHECK(e["dur"].get<double>() == doctest::Approx(49.0));
      CHECK(e["args"]["Input Dims"] == nlohmann::json({{64, 64}, {64, 64}}));
      CHECK(e["pid"] == 1234);
    }
    if (e.value("name", "") == "gemm") {
      CHECK(e["cat"] == "kernel");
      CHECK(e["pid"] == 0);
      CHECK(e["tid"] == 7);
    }
  }
}

TEST_CASE("round trip keeps names, times, nesting, shapes, memory and kernels") {
  const Profile p = gpu_profile();
  const Profile back = workbook::parse_chrome_trace(workbook::to_chrome_trace(p));
  REQUIRE(back.size() == p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    CHECK(back[i].name == p[i].name);
    CHECK(back[i].start_ns == p[i].start_ns);
    CHECK(back[i].end_ns == p[i].end_ns);
    CHECK(back[i].category == p[i].category);
    CHECK(back.parent(i) == p.parent(i));
  }
  const auto mm = back.find("aten::mm").at(0);
  CHECK(back[mm].input_shapes == p[p.find("aten::mm").at(0)].input_shapes);
  CHECK(back[mm].flops == 524288);
  CHECK(back[back.find("[memory]").at(0)].bytes == 16384);
  CHECK(back[back.find("gemm").at(0)].device_type == workbook::DeviceType::cuda);
  CHECK(workbook::KeyAverages(back).find("aten::mm")->self_device_us == doctest::Approx(30));
}

TEST_CASE("a Kineto trace (LibTorch's save(), Python's export) loads") {
  const Profile p = workbook::load_chrome_trace(WORKBOOK_TEST_DATA "/kineto_cuda_sample.json");
  CHECK(p.count("PyTorch Profiler (0)") == 0);  // the whole-trace span is not an activity
  CHECK(p.count("aten::mm") == 1);
  CHECK(p.count("cudaLaunchKernel") == 2);
  const auto region = p.find("matmul_add").at(0);
  CHECK(p.has_chain(region, {"aten::matmul", "aten::mm", "cudaLaunchKernel"}));
  const auto kernel = p.find_prefix("ampere_bf16").at(0);
  CHECK(p[kernel].category == Category::kernel);
  CHECK(p[*p.parent(kernel)].name == "cudaLaunchKernel");
  CHECK(p[p.find("aten::add").at(0)].input_shapes == std::vector<std::vector<std::int64_t>>{{64, 64}, {64}, {}});
  CHECK(p[0].start_ns == 0);
  const workbook::KeyAverages k(p);
  CHECK(k.find("aten::mm")->self_device_us == doctest::Approx(12));
  CHECK(k.find("matmul_add")->device_total_us == doctest::Approx(15));
}

TEST_CASE("Python's legacy export (a bare array, string pids, no categories) loads") {
  const char* legacy = R"([
    {"name": "aten::matmul", "ph": "X", "ts": 10.5, "dur": 20, "tid": 1, "pid": "CPU functions", "args": {}},
    {"name": "aten::mm", "ph": "X", "ts": 11, "dur": 18, "tid": 1, "pid": "CPU functions", "args": {}},
    {"name": "matmul_add", "ph": "X", "ts": 10, "dur": 40, "tid": 1, "pid": "CPU functions", "args": {}}
  ])";
  const Profile p = workbook::parse_chrome_trace(legacy, "legacy.json");
  REQUIRE(p.size() == 3);
  CHECK(p[0].name == "matmul_add");
  CHECK(p[0].category == Category::user_annotation);
  CHECK(p.has_chain(0, {"aten::matmul", "aten::mm"}));
}

TEST_CASE("a UTF-8 byte order mark before the document is skipped, as JSON readers may (RFC 8259)") {
  const Profile p =
      workbook::parse_chrome_trace("\xef\xbb\xbf[{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"dur\": 2}]", "bom.json");
  REQUIRE(p.size() == 1);
  CHECK(p[0].name == "a");
}

TEST_CASE("bad traces are errors naming the source and the problem, never crashes") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"", "not valid JSON"},
      {"{\"traceEvents\": [", "not valid JSON"},
      {"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"dur\": 2}", "not valid JSON"},
      {"{\"foo\": 1}", "no \"traceEvents\""},
      {"{\"traceEvents\": 3}", "not an array"},
      {"[1, 2]", "event 0 is not an object"},
      {"[{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"dur\": 2},  ]", "a ',' right before ']'"},
      {"[{\"name\": \"a\"}]", "'ph' is missing"},
      {"[{\"ph\": \"X\", \"ts\": 1, \"dur\": 1}]", "'name' is missing"},
      {"[{\"ph\": \"X\", \"name\": \"a\", \"dur\": 1}]", "'ts' is missing or not a number"},
      {"[{\"ph\": \"X\", \"name\": \"a\", \"ts\": \"soon\", \"dur\": 1}]", "'ts' is missing or not a number"},
      {"[{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1}]", "'dur' is missing"},
      {"[{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"dur\": -5}]", "negative duration"},
      {"[{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1e300, \"dur\": 1}]", "out of range"},
      {"\x1f\x8b\x08\x00", "gzip data is cut short"},
      {"{\"traceEvents\": [], \"traceEvents\": []}", "two \"traceEvents\" members"},
      {"\xef\xbb\xbf\xef\xbb\xbf[]", "not valid JSON"},
      {"\xef\xbb[]", "not valid JSON"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    CHECK_THROWS_WITH_AS(workbook::parse_chrome_trace(c.text, "bad.json"), doctest::Contains(c.message), TraceError);
    CHECK_THROWS_WITH_AS(workbook::parse_chrome_trace(c.text, "bad.json"), doctest::Contains("bad.json: "), TraceError);
  }
  CHECK_THROWS_WITH_AS(workbook::load_chrome_trace("/nonexistent/t.json"), doctest::Contains("/nonexistent/t.json"),
                       TraceError);
}

TEST_CASE("a gzip-compressed trace reads as the same profile as its JSON, from a file or from memory") {
  // Compressed by gzip itself (tests/data/traces/README.md), not by this toolkit.
  const std::string dir = WORKBOOK_TEST_DATA "/traces/";
  const Profile plain = workbook::load_chrome_trace(dir + "rocm_minitoy_train.json");
  const Profile packed = workbook::load_chrome_trace(dir + "rocm_minitoy_train.pt.trace.json.gz");
  REQUIRE(plain.size() > 10);
  CHECK(workbook::KeyAverages(packed).to_json() == workbook::KeyAverages(plain).to_json());
  CHECK(workbook::to_chrome_trace(packed) == workbook::to_chrome_trace(plain));
  const std::string bytes = workbook::read_file(dir + "rocm_minitoy_train.pt.trace.json.gz");
  CHECK(workbook::to_chrome_trace(workbook::parse_chrome_trace(bytes, "in memory")) ==
        workbook::to_chrome_trace(plain));
}

TEST_CASE("a gzip trace cut short, or expanding past the limit, fails naming the file") {
  const auto dir = std::filesystem::temp_directory_path() / ("wb-gz-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string packed = workbook::gzip_compress(workbook::to_chrome_trace(gpu_profile()));
  workbook::write_file_atomically(dir / "cut.json.gz", packed.substr(0, packed.size() - 10));
  CHECK_THROWS_WITH_AS(workbook::load_chrome_trace(dir / "cut.json.gz"),
                       doctest::Contains(((dir / "cut.json.gz").string() + ": the gzip data is cut short").c_str()),
                       TraceError);
  // A file's name does not decide: gzip data under any name is decompressed, JSON under .gz is read.
  workbook::write_file_atomically(dir / "named.json", packed);
  CHECK(workbook::load_chrome_trace(dir / "named.json").size() == gpu_profile().size());
  workbook::write_file_atomically(dir / "bomb.json.gz", workbook::gzip_compress("[" + std::string(4 << 20, ' ') + "]"));
  CHECK_THROWS_WITH_AS(workbook::load_chrome_trace(dir / "bomb.json.gz", std::uint64_t(1) << 20),
                       doctest::Contains("gzip data that decompresses to longer than"), TraceError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("write_chrome_trace compresses a path ending in .gz") {
  const auto path = std::filesystem::temp_directory_path() / ("wb-trace-" + std::to_string(::getpid()) + ".json.gz");
  workbook::write_chrome_trace(gpu_profile(), path);
  CHECK(workbook::starts_gzip(workbook::read_file(path)));
  CHECK(workbook::to_chrome_trace(workbook::load_chrome_trace(path)) == workbook::to_chrome_trace(gpu_profile()));
  std::filesystem::remove(path);
}

TEST_CASE("write_chrome_trace writes atomically and loads back") {
  const auto path = std::filesystem::temp_directory_path() / ("wb-trace-" + std::to_string(::getpid()) + ".json");
  workbook::write_chrome_trace(gpu_profile(), path);
  CHECK(workbook::load_chrome_trace(path).size() == gpu_profile().size());
  std::filesystem::remove(path);
}

TEST_CASE("names with quotes, backslashes and control characters survive export and import") {
  const std::string name = "odd \"name\" \\ with\ttab and\nnewline";
  const Profile p({ev(name.c_str(), 0, 10)});
  const Profile back = workbook::parse_chrome_trace(workbook::to_chrome_trace(p));
  REQUIRE(back.size() == 1);
  CHECK(back[0].name == name);
  CHECK(workbook::parse_chrome_trace(workbook::to_chrome_trace(Profile{})).empty());
}

TEST_CASE("inputs the fuzzer (or a person) found hostile are rejected with TraceError or read, never crash") {
  // tests/data/fuzz-regressions: deep nesting, truncation, wrong types, huge and NaN numbers,
  // invalid UTF-8, flows, and every crash tests/fuzz/fuzz.sh ever found.
  int replayed = 0, rejected = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(WORKBOOK_TEST_DATA) / "fuzz-regressions")) {
    CAPTURE(entry.path().string());
    ++replayed;
    try {
      const Profile p = workbook::load_chrome_trace(entry.path());
      const workbook::KeyAverages averages(p);
      (void)averages.table();
      CHECK(averages.rows().size() <= p.size());
      CHECK(workbook::parse_chrome_trace(workbook::to_chrome_trace(p)).size() == p.size());
    } catch (const workbook::TraceError& e) {
      ++rejected;
      CHECK(std::string(e.what()).find(entry.path().filename().string()) != std::string::npos);
    }
  }
  CHECK(replayed >= 12);
  CHECK(rejected >= 1);
}

TEST_CASE("times are decimal text to integer ns: µs-epoch stamps keep every digit, overflow is an error") {
  // 1695835542514261.123 µs needs 19 significant digits: a double would round it to 0.25 µs.
  const Profile p = workbook::parse_chrome_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1695835542514261.123, "dur": 0.001},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1695835542514261.124, "dur": 1e-3},
    {"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 1695835542514261.1235, "dur": 0.0004}]})");
  REQUIRE(p.size() == 3);
  CHECK(p[p.find("a").at(0)].start_ns == 0);
  CHECK(p[p.find("a").at(0)].end_ns == 1);
  CHECK(p[p.find("b").at(0)].start_ns == 1);
  CHECK(p[p.find("c").at(0)].start_ns == 1);  // .1235 µs rounds half away from zero to 124 ns... relative 1
  CHECK(p[p.find("c").at(0)].duration_ns() == 0);
  for (const char* ts : {"9223372036854776", "1e17", "-9223372036854776"}) {
    CAPTURE(ts);
    const std::string doc = std::string(R"([{"ph": "X", "name": "a", "ts": )") + ts + R"(, "dur": 1}])";
    CHECK_THROWS_WITH_AS(workbook::parse_chrome_trace(doc, "big.json"), doctest::Contains("out of range"), TraceError);
  }
  // The largest time stamp whose ns fit in int64 is read.
  CHECK(workbook::parse_chrome_trace(R"([{"ph": "X", "name": "a", "ts": 9223372036854775.807, "dur": 0}])").size() ==
        1);
  // Start and end far apart: the ns difference overflows.
  CHECK_THROWS_WITH_AS(workbook::parse_chrome_trace(R"([{"ph": "X", "name": "a", "ts": -9223372036854775, "dur": 0},
    {"ph": "X", "name": "b", "ts": 9223372036854775, "dur": 0}])",
                                                    "far.json"),
                       doctest::Contains("out of range"), TraceError);
}

TEST_CASE("the importer reads a trace split across its read blocks, and a 100000-deep nesting") {
  std::string doc =
      R"({"meta": {"deep": )" + std::string(100000, '[') + std::string(100000, ']') + R"(}, "traceEvents": [)";
  for (int i = 0; i < 50000; ++i)
    doc += (i ? "," : "") + std::string(R"({"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":)") +
           std::to_string(i) + R"(,"dur":2,"args":{"Input Dims":[[64,64],[]]}})";
  doc += "]}";
  const auto path = std::filesystem::temp_directory_path() / ("wb-blocks-" + std::to_string(::getpid()) + ".json");
  workbook::write_file_atomically(path, doc);
  const Profile p = workbook::load_chrome_trace(path);
  std::filesystem::remove(path);
  CHECK(p.size() == 50000);
  CHECK(p[49999].input_shapes == std::vector<std::vector<std::int64_t>>{{64, 64}, {}});
}

TEST_CASE("strict UTF-8: surrogates, overlong forms and code points above U+10FFFF are rejected") {
  auto trace_named = [](const std::string& name) {
    return std::string(R"([{"ph": "X", "cat": "cpu_op", "name": ")") + name + R"(", "ts": 0, "dur": 1}])";
  };
  for (const char* bad : {"\xED\xA0\x80", "\xED\xBF\xBF", "\xC0\x80", "\xE0\x80\x80", "\xE0\x9F\xBF",
                          "\xF0\x80\x80\x80", "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80"}) {
    std::string bytes;
    for (const char* b = bad; *b; ++b) bytes += fmt::format("{:02X} ", static_cast<unsigned char>(*b));
    CAPTURE(bytes);
    CHECK_THROWS_WITH_AS(workbook::parse_chrome_trace(trace_named(bad), "u.json"), doctest::Contains("UTF-8"),
                         TraceError);
    // The same bytes after an escape take the decoding path.
    CHECK_THROWS_AS(workbook::parse_chrome_trace(trace_named(std::string("\\t") + bad)), TraceError);
  }
  // The edges that are allowed: U+D7FF, U+E000, U+FFFF, U+10000, U+10FFFF.
  for (const char* good : {"\xED\x9F\xBF", "\xEE\x80\x80", "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF"}) {
    const Profile p = workbook::parse_chrome_trace(trace_named(good));
    REQUIRE(p.size() == 1);
    CHECK(p[0].name == good);
    CHECK_NOTHROW((void)workbook::KeyAverages(p).to_json());  // nlohmann accepts what the importer accepts
  }
}

TEST_CASE("'B'/'E' pairs are complete events, paired per thread as Perfetto pairs them") {
  const Profile p = workbook::parse_chrome_trace(R"({"traceEvents": [
    {"ph": "E", "name": "stray end", "pid": 1, "tid": 1, "ts": 1},
    {"ph": "B", "cat": "user_annotation", "name": "step", "pid": 1, "tid": 1, "ts": 10},
    {"ph": "B", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 12},
    {"ph": "B", "cat": "cpu_op", "name": "other thread", "pid": 1, "tid": 2, "ts": 13},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 20},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 30},
    {"ph": "B", "cat": "cpu_op", "name": "never ends", "pid": 1, "tid": 1, "ts": 40}]})");
  REQUIRE(p.size() == 2);  // the stray "E" and the two "B"s never ended are not events
  const auto step = p.find("step").at(0), mm = p.find("aten::mm").at(0);
  CHECK(p[step].duration_ns() == 20000);
  CHECK(p[mm].duration_ns() == 8000);
  CHECK(p.parent(mm) == step);
  CHECK(p[step].category == Category::user_annotation);
  CHECK_THROWS_WITH_AS(workbook::parse_chrome_trace(R"([{"ph": "B", "name": "a", "ts": 5}, {"ph": "E", "ts": 4}])"),
                       doctest::Contains("ends before it begins"), TraceError);
}

TEST_CASE("pipes and devices are read as streams, and an endless one is cut at the limit") {
  CHECK_THROWS_WITH_AS(workbook::load_chrome_trace("/dev/zero"), doctest::Contains("not valid JSON"), TraceError);
  const auto fifo = std::filesystem::temp_directory_path() / ("wb-fifo-" + std::to_string(::getpid()));
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::signal(SIGPIPE, SIG_IGN);  // the reader may stop first: the writer then gets EPIPE, not a signal
  auto write_to_fifo = [&](std::string text) {
    return std::thread([&fifo, text = std::move(text)] {
      const int fd = ::open(fifo.c_str(), O_WRONLY);
      for (std::size_t at = 0; fd >= 0 && at < text.size();) {
        const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
        if (n <= 0) break;
        at += std::size_t(n);
      }
      if (fd >= 0) ::close(fd);
    });
  };
  std::thread writer =
      write_to_fifo(workbook::to_chrome_trace(Profile({ev("aten::mm", 0, 10), ev("aten::add", 20, 30)})));
  const Profile p = workbook::load_chrome_trace(fifo);
  writer.join();
  CHECK(p.size() == 2);
  writer = write_to_fifo("[" + std::string(std::size_t(1) << 20, ' '));
  CHECK_THROWS_WITH_AS(workbook::load_chrome_trace(fifo, 64 * 1024), doctest::Contains("stopped reading"), TraceError);
  writer.join();
  std::filesystem::remove(fifo);
}

TEST_CASE("device ids keep all 64 bits: GPU 4294967298 is not GPU 2") {
  const Profile p = workbook::parse_chrome_trace(R"([
    {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 0, "dur": 1, "args": {"device": 4294967298}},
    {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 2, "dur": 1, "args": {"device": 2}}])");
  REQUIRE(p.size() == 2);
  CHECK(p[p.find("k1").at(0)].device_index == 4294967298);
  CHECK(p[p.find("k2").at(0)].device_index == 2);
}

TEST_CASE("of two input-dims members in one event the last is kept, as json.load keeps a repeated key's last value") {
  const Profile p = workbook::parse_chrome_trace(
      R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":2,)"
      R"("args":{"Input Dims":[[1]],"Input dims":[[2],[3]]}},)"
      R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":4,"dur":2,)"
      R"("args":{"Input Dims":[[1]],"Input dims":null}}]})");
  REQUIRE(p.size() == 2);
  CHECK(p[0].input_shapes == std::vector<std::vector<std::int64_t>>{{2}, {3}});
  CHECK(p[1].input_shapes.empty());
}
