// The programs the runner builds and starts: lessons, the suite, doctor, bench, trace, docs, fuzz.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

#include <sys/utsname.h>

#include "commands.h"
#include "predictions.h"
#include "process.h"
#include "usage_error.h"

namespace runner {
namespace fs = std::filesystem;
namespace {

std::string machine() {
  utsname u{};
  return ::uname(&u) == 0 ? u.machine : "x86_64";
}

std::string probe(const Context& c) { return c.builder.program("tools/workbook_blas_probe").string(); }

// "ok 182.3 1.2e-07 Zen" -> {182.3, "Zen"}
std::pair<double, std::string> probe_line(const std::string& line) {
  std::istringstream in(line);
  std::string verdict, error, core;
  double gflops = 0;
  in >> verdict >> gflops >> error >> core;
  return {gflops, core};
}

}  // namespace

void in_libtorch2(const Context& c, const std::string& verb, const Arguments& a) {
  std::vector<std::string> argv{"bash", (c.root / "scripts/ci/libtorch2.sh").string(), verb};
  argv.insert(argv.end(), a.words.begin(), a.words.end());
  for (const auto& f : a.flags)
    if (f != "--libtorch2") argv.push_back(f);
  if (!a.passthrough.empty()) {
    argv.push_back("--");
    argv.insert(argv.end(), a.passthrough.begin(), a.passthrough.end());
  }
  exec_process(argv);
}

int run_lesson(const Context& c, const Arguments& a) {
  const Lesson& l = c.manifest.lesson(a.words.at(0));
  if (a.has("--libtorch2")) in_libtorch2(c, "run", a);
  if (l.needs_gpu && !on_path("nvidia-smi")) {
    fmt::print("lesson {} needs a CUDA GPU; none here. It would show: {}\n", l.number, l.goal);
    return 0;
  }
  if (!c.builder.build({"lesson" + l.number}, {"lessons/" + l.slug + ".cpp"})) return 1;
  choose_blas_kernel(c);
  std::vector<std::string> argv{c.builder.program("lessons/lesson" + l.number).string()};
  argv.insert(argv.end(), a.passthrough.begin(), a.passthrough.end());
  return run_with_predictions(c, l, argv);
}

int run_suite(const Context& c, const Arguments& a) {
  if (a.has("--libtorch2") && a.has("--sanitize")) throw UsageError("test takes --libtorch2 or --sanitize, not both");
  if (a.has("--libtorch2")) exec_process({"bash", (c.root / "scripts/ci/libtorch2.sh").string()});
  if (a.has("--sanitize")) exec_process({"bash", (c.root / "scripts/ci/sanitize.sh").string()});
  if (!c.builder.build_all()) {
    fmt::print(stderr, "workbook: the build failed (its errors are above)\n");
    return 1;
  }
  choose_blas_kernel(c);
  exec_process({"ctest", "--test-dir", c.builder.dir().string(), "--output-on-failure", "-j", Builder::jobs()});
}

int run_doctor(const Context& c, const Arguments&) {
  if (!c.builder.build({"workbook_doctor", "workbook_blas_probe"})) return 1;
  const char* preset = std::getenv("OPENBLAS_CORETYPE");
  const std::string preset_core = preset ? preset : "";
  choose_blas_kernel(c);
  if (run_process({c.builder.program("tools/workbook_doctor").string()}) != 0) return 1;
  auto row = [](const char* key, const std::string& value) { fmt::print("  {:<18} {}\n", key, value); };
  const auto [alt_status, alternatives] =
      capture_process({"update-alternatives", "--query", "libblas.so.3-" + machine() + "-linux-gnu"});
  std::smatch value;
  const bool found = alt_status == 0 && std::regex_search(alternatives, value, std::regex("Value: (.*)"));
  row("BLAS alternative", found ? value[1].str() : "unknown");
  if (preset)
    row("OPENBLAS_CORETYPE", preset_core + " (set before the runner started: kept)");
  else if (const char* chosen = std::getenv("OPENBLAS_CORETYPE"))
    row("OPENBLAS_CORETYPE", chosen);
  else
    row("OPENBLAS_CORETYPE", "unset: the kernel OpenBLAS picks itself is the fastest");
  const auto [probe_status, line] = capture_process({probe(c), "2048"});
  const auto [gflops, core] = probe_line(line);
  row("matmul 2048",
      fmt::format("{:.1f} GFLOP/s with the {} kernel (self-test {})", gflops, core, probe_status == 0 ? "ok" : "bad"));
  const auto [kernels_status, kernels] = capture_process({probe(c), "--kernels"});
  std::istringstream in(kernels);
  std::string tried;
  for (std::string name, rate; in >> name >> rate;)
    tried += (tried.empty() ? "" : ", ") + name + " " + rate + " GFLOP/s";
  row("kernels tried", tried + " (n=2048, OPENBLAS_CORETYPE unset for these probes only)");
  const auto [cmake_status, cmake] = capture_process({"cmake", "--version"});
  row("cmake", cmake.substr(0, cmake.find('\n')));
  row("build folder", c.builder.dir().string());
  return 0;
}

// The trace tool reading a Kineto-style trace of `megabytes` MB (tests/reliability/big_trace.py)
// end to end, three times: the median speed in MB/s and peak memory as a share of the file, as
// bench's arguments; none when the trace cannot be written or read.
std::vector<std::pair<std::string, double>> trace_tool_cost(const Context& c, int megabytes) {
  const fs::path trace = c.builder.dir() / "bench-trace.json";
  const std::string script = (c.root / "tests/reliability/big_trace.py").string();
  if (run_quietly({"python3", script, std::to_string(megabytes), trace.string()}) != 0) return {};
  std::error_code ec;
  const double bytes = double(fs::file_size(trace, ec));
  std::vector<double> speeds, shares;
  for (int run = 0; run < 3 && !ec; ++run) {
    const RunCost cost = measure_process({c.builder.program("tools/workbook_trace").string(), trace.string()});
    if (cost.status != 0) break;
    speeds.push_back(bytes / 1e6 / cost.seconds);
    shares.push_back(double(cost.peak_bytes) / bytes);
  }
  fs::remove(trace, ec);
  if (speeds.size() < 3) return {};
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  return {{"--trace-mb-per-s", median(speeds)}, {"--trace-rss-share", median(shares)}, {"--trace-mb", bytes / 1e6}};
}

int run_bench(const Context& c, const Arguments& a) {
  if (a.has("--libtorch2")) in_libtorch2(c, "bench", a);
  if (!c.builder.build({"workbook_bench", "workbook_blas_probe", "workbook_trace", "check_01"})) return 1;
  const double current = probe_line(capture_process({probe(c), "2048"}).second).first;
  std::string best_kernel;
  double best = 0;
  std::istringstream kernels(capture_process({probe(c), "--kernels"}).second);
  for (std::string name; kernels >> name;) {
    double rate = 0;
    kernels >> rate;
    if (rate > best) best = rate, best_kernel = name;
  }
  // An edit -> check cycle, warm: touch exercise 01 and time the whole check, its progress kept
  // apart from the learner's (WORKBOOK_STATE_DIR).
  const fs::path state = c.builder.dir() / "bench-state";
  // The BLAS kernel is chosen once, as the learner's runs have it: a fresh state would probe it
  // again inside the timed check.
  choose_blas_kernel(c);
  std::error_code ec;
  fs::create_directories(state, ec);
  fs::copy_file(c.progress.dir() / "blas-kernel.json", state / "blas-kernel.json", fs::copy_options::overwrite_existing,
                ec);
  fs::last_write_time(c.root / "exercises/01_matmul_add.cpp", fs::file_time_type::clock::now());
  const auto start = std::chrono::steady_clock::now();
  // Through ./workbook itself: what a learner waits for, the bootstrap included.
  run_quietly({(c.root / "workbook").string(), "check", "1"}, {{"WORKBOOK_STATE_DIR", state.string()}});
  const double edit = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<std::string> argv{c.builder.program("tools/workbook_bench").string()};
  if (a.has("--quick")) argv.push_back("--quick");
  for (const auto& [name, value] : trace_tool_cost(c, a.has("--quick") ? 10 : 100)) {
    argv.push_back(name);
    argv.push_back(fmt::format("{:.3f}", value));
  }
  for (const auto& [name, v] : {std::pair<std::string, std::string>{"--matmul-current", fmt::format("{}", current)},
                                {"--matmul-best", fmt::format("{}", best)},
                                {"--best-kernel", best_kernel},
                                {"--edit-check", fmt::format("{:.2f}", edit)},
                                {"--json", c.builder.program("bench.json").string()}}) {
    argv.push_back(name);
    argv.push_back(v);
  }
  exec_process(argv);
}

int run_trace(const Context& c, const Arguments& a) {
  if (a.words.empty())
    throw UsageError(
        "usage: ./workbook trace FILE [--sort KEY] [--limit N] [--under NAME] [--json] [--gpu] [--kernels] [--advise] "
        "[--svg OUT] [--out OUT]");
  if (!c.builder.build({"workbook_trace"})) return 1;
  std::vector<std::string> argv{c.builder.program("tools/workbook_trace").string()};
  argv.insert(argv.end(), a.words.begin(), a.words.end());
  exec_process(argv);
}

int run_report(const Context& c, const Arguments& a) {
  if (a.words.empty()) throw UsageError("usage: ./workbook report FILE... -o OUT.html [--title TEXT]");
  if (!c.builder.build({"workbook_report"})) return 1;
  std::vector<std::string> argv{c.builder.program("tools/workbook_report").string()};
  argv.insert(argv.end(), a.words.begin(), a.words.end());
  exec_process(argv);
}

int build_docs(const Context& c, const Arguments& a) {
  if (!a.words.empty()) throw UsageError(fmt::format("docs takes no arguments (got '{}')", a.words[0]));
  if (!c.builder.build({"docs"})) return 1;
  fmt::print("docs: {}\n", (c.builder.dir() / "docs/html/index.html").string());
  return 0;
}

int run_fuzzer(const Context& c, const Arguments& a) {
  const std::string seconds = a.words.empty() ? "300" : a.words[0];
  if (!std::regex_match(seconds, std::regex("[1-9][0-9]{0,5}")))
    throw UsageError(fmt::format("fuzz: SECONDS must be a whole number from 1 to 999999 (got '{}')", seconds));
  exec_process({"bash", (c.root / "tests/fuzz/fuzz.sh").string(), c.builder.dir().string(), seconds});
}

}  // namespace runner
