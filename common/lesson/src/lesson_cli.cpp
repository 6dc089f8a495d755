#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/answers.h"
#include "workbook/lesson/lesson_output.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/cuda.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/chrome_trace.h"
#include "workbook/profiler/format.h"

namespace workbook {

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// 0 when everything printed reached stdout; else one line and 1: output cut short (a full disk, a
// closed pipe) must not look like success.
int stdout_status(const std::string& program) {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return 0;
  fmt::print(stderr, "{}: could not write the output\n", program);
  return 1;
}

}  // namespace

void usage_error(const std::string& program, const std::string& message) {
  fmt::print(stderr, "{}: {}\n", program, printable(message));
  std::exit(2);
}

std::vector<std::int64_t> parse_sizes(const std::string& text, std::int64_t max) {
  std::vector<std::int64_t> sizes;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    std::size_t used = 0;
    long long value = 0;
    try {
      // Decimal digits only: stoll alone takes " 16" and "+16".
      if (std::all_of(item.begin(), item.end(), [](unsigned char c) { return std::isdigit(c); }))
        value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || value < 1 || value > max)
      throw std::invalid_argument(fmt::format("'{}' is not a size between 1 and {}", item, max));
    sizes.push_back(value);
    at = comma + 1;
  }
  return sizes;
}

std::int64_t size_flag(const std::string& program, const std::string& flag, const std::string& text, std::int64_t max) {
  try {
    return parse_size(text, max);
  } catch (const std::invalid_argument& e) {
    usage_error(program, flag + ": " + e.what());
  }
}

int run_reporting_errors(const std::string& program, const std::function<int()>& body) {
  try {
    const int status = body() | stdout_status(program);
    if (status == 0) write_answers();  // for the runner's scoring of the learner's predictions
    const char* strict = std::getenv("WORKBOOK_STRICT_CLAIMS");
    if (status == 0 && claims_not_shown() > 0 && strict && std::string(strict) == "1") {
      fmt::print(stderr, "{}: {} of the lesson's claims were not shown by this run\n", program, claims_not_shown());
      return 3;
    }
    return status;
  } catch (const TraceError& e) {  // a trace given as input (lesson 02's --from-trace) that cannot be read
    fmt::print(stderr, "{}: {}\n", program, printable(e.what()));
    return 2;
  } catch (const std::invalid_argument& e) {  // bad input met while running: an output path that is not a file
    fmt::print(stderr, "{}: {}\n", program, printable(e.what()));
    return 2;
  } catch (const c10::Error& e) {
    // LibTorch's message runs on with a C++ backtrace: its first line says what went wrong.
    fmt::print(stderr, "{}: {}\n", program, printable(first_line(e.what_without_backtrace())));
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: {}\n", program, printable(first_line(e.what())));
    return 1;
  }
}

std::int64_t parse_size(const std::string& text, std::int64_t max) {
  const auto sizes = parse_sizes(text, max);
  if (sizes.size() != 1) throw std::invalid_argument(fmt::format("'{}' is not one size", text));
  return sizes.front();
}

namespace {

std::int64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? std::int64_t(pages) * page : std::int64_t(1) << 34;
}

}  // namespace

void require_memory(const std::string& program, const std::string& flags, double bytes) {
  const double limit = double(physical_memory_bytes()) / 2, gib = double(1 << 30);
  if (bytes > limit)
    usage_error(program, fmt::format("{} need about {:.1f} GiB, more than half of this machine's memory ({:.1f} GiB)",
                                     flags, bytes / gib, limit / gib));
}

c10::ScalarType parse_dtype(const std::string& name) {
  static const std::map<std::string, c10::ScalarType> names{
      {"float32", c10::ScalarType::Float}, {"float", c10::ScalarType::Float},
      {"fp32", c10::ScalarType::Float},    {"float64", c10::ScalarType::Double},
      {"double", c10::ScalarType::Double}, {"bfloat16", c10::ScalarType::BFloat16},
      {"bf16", c10::ScalarType::BFloat16}, {"float16", c10::ScalarType::Half},
      {"half", c10::ScalarType::Half},     {"fp16", c10::ScalarType::Half}};
  auto it = names.find(name);
  if (it == names.end())
    throw std::invalid_argument("unknown dtype '" + name + "' (use float32, float64, bfloat16 or float16)");
  return it->second;
}

std::string dtype_name(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::Float:
      return "float32";
    case c10::ScalarType::Double:
      return "float64";
    case c10::ScalarType::BFloat16:
      return "bfloat16";
    case c10::ScalarType::Half:
      return "float16";
    default:
      return c10::toString(dtype);
  }
}

std::string LessonOptions::dtype_name() const { return workbook::dtype_name(dtype); }
std::string LessonOptions::device_name() const { return device.is_cuda() ? "cuda" : "cpu"; }
std::string LessonOptions::tag() const { return fmt::format("{}_{}_{}", size, dtype_name(), device_name()); }

LessonOptions parse_lesson_flags(int argc, char** argv, const LessonDefaults& d) {
  remove_partial_files_on_interrupt();
  CLI::App app(d.description, d.program);
  std::int64_t size = d.size;
  std::string dtype_text = d.float32_only_reason.empty() ? d.dtype : "float32", device_text = "auto",
              out_text = "traces";
  int steps = d.steps, warmup = d.warmup;
  // LibTorch's own choice (1 on a 2-core machine), not every core: OpenBLAS runs its own thread
  // pool, and extra OpenMP workers beside it made lesson 04's GEMMs 1.5x slower on 2 cores.
  int threads = at::get_num_threads();
  // Whole decimal numbers without leading zeros: CLI11 alone reads "0x10" and "020" as 16 and
  // takes " 16".
  const CLI::Validator decimal(
      [](std::string& text) {
        const bool digits = !text.empty() && text.size() <= 18 && (text.size() == 1 || text[0] != '0') &&
                            std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
        return digits ? std::string() : fmt::format("'{}' is not a whole decimal number", printable(text));
      },
      "DIGITS");
  app.add_option("--size", size, fmt::format("matrix size n (1..{})", d.max_size))
      ->capture_default_str()
      ->check(decimal);
  app.add_option("--dtype", dtype_text,
                 "float32 | float64 | bfloat16 | float16 (default: float32 on CPU, bfloat16 on CUDA)");
  app.add_option("--device", device_text, "auto | cpu | cuda")->capture_default_str();
  app.add_option("--steps", steps, "recorded (active) profiler steps")->capture_default_str()->check(decimal);
  app.add_option("--warmup", warmup, "warm-up steps before recording")->capture_default_str()->check(decimal);
  app.add_option("--out", out_text, "folder for traces; the lesson writes into <out>/<slug>")->capture_default_str();
  app.add_option("--threads", threads, "intra-op threads (default: LibTorch's choice)")
      ->capture_default_str()
      ->check(decimal);
  bool report = false;
  app.add_flag("--report", report, "also write each profile's one-page HTML report beside its trace (<tag>.html)");
  for (const ExtraFlag& flag : d.extra) {
    if (flag.is_switch) {
      app.add_flag_callback(
          flag.name, [value = flag.value] { *value = "1"; }, flag.help);
    } else {
      app.add_option(flag.name, *flag.value, flag.help);
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    std::exit(stdout_status(d.program));
  } catch (const CLI::ParseError& e) {
    usage_error(d.program, e.what());
  }
  // A flag given with an empty value is a mistake, never "the default".
  std::vector<std::pair<std::string, const std::string*>> texts{{"--dtype", &dtype_text}, {"--out", &out_text}};
  for (const ExtraFlag& flag : d.extra)
    if (!flag.is_switch) texts.emplace_back(flag.name, flag.value);
  for (const auto& [flag, text] : texts)
    if (app.count(flag) > 0 && text->empty()) usage_error(d.program, flag + " needs a value (got an empty one)");
  for (const auto& [flag, why] : d.unused_flags)
    if (app.count(flag) > 0) usage_error(d.program, fmt::format("{}: this lesson does not use it ({})", flag, why));

  LessonOptions o;
  o.slug = d.slug;
  if (size < 1 || size > d.max_size)
    usage_error(d.program, fmt::format("--size must be between 1 and {} (got {})", d.max_size, size));
  // Each recorded step keeps its events until the end (the articles record 3 to 5): 1000 steps of
  // the larger lessons reached 10 GB.
  if (steps < 1 || steps > kMaxRecordedSteps)
    usage_error(d.program, fmt::format("--steps must be between 1 and {} (got {})", kMaxRecordedSteps, steps));
  if (warmup < 0 || warmup > 1000)
    usage_error(d.program, fmt::format("--warmup must be between 0 and 1000 (got {})", warmup));
  // More threads than 4x the cores only measures the scheduler (and 1024 of them ate the machine).
  const int max_threads = 4 * std::max(1, int(std::thread::hardware_concurrency()));
  if (threads < 1 || threads > max_threads)
    usage_error(d.program, fmt::format("--threads must be between 1 and {} (4x this machine's cores; got {})",
                                       max_threads, threads));
  o.size = size;
  o.steps = steps;
  o.warmup = warmup;

  if (!d.cpu_only_reason.empty() && device_text == "cuda")
    usage_error(d.program, "--device cuda: this lesson runs on the CPU only: " + d.cpu_only_reason);
  if (!d.cpu_only_reason.empty() && device_text == "auto") {
    if (torch::cuda::is_available())
      fmt::print("{}: running on the CPU although a GPU is here: {}\n", d.program, d.cpu_only_reason);
    o.device = c10::Device(c10::DeviceType::CPU);
  } else if (device_text == "auto") {
    o.device = torch::cuda::is_available() ? c10::Device(c10::DeviceType::CUDA, 0) : c10::Device(c10::DeviceType::CPU);
  } else if (device_text == "cpu") {
    o.device = c10::Device(c10::DeviceType::CPU);
  } else if (device_text == "cuda") {
    if (!torch::cuda::is_available())
      usage_error(d.program,
                  "--device cuda: no CUDA GPU is usable here (LibTorch without CUDA, or no device); use --device cpu");
    o.device = c10::Device(c10::DeviceType::CUDA, 0);
  } else {
    usage_error(d.program, fmt::format("--device must be auto, cpu or cuda (got '{}')", device_text));
  }
  try {
    o.dtype = dtype_text.empty() ? (o.device.is_cuda() ? c10::ScalarType::BFloat16 : c10::ScalarType::Float)
                                 : parse_dtype(dtype_text);
  } catch (const std::invalid_argument& e) {
    usage_error(d.program, std::string("--dtype: ") + e.what());
  }
  if (!d.float32_only_reason.empty() && o.dtype != c10::ScalarType::Float)
    usage_error(d.program, "--dtype: this lesson runs in float32 (" + d.float32_only_reason + ")");
  // A dtype whose GEMM the device lacks (float16 on 1.13's CPU) is bad input: said in one line now,
  // not as LibTorch's backtrace in the middle of the run.
  try {
    const auto probe = at::ones({2, 2}, at::TensorOptions().dtype(o.dtype).device(o.device));
    (void)at::addmm(probe, probe, probe);
  } catch (const c10::Error& e) {
    usage_error(d.program,
                fmt::format("--dtype {}: this LibTorch cannot multiply {} matrices on the {} ({})", dtype_text,
                            dtype_name(o.dtype), o.device_name(), first_line(e.what_without_backtrace())));
  }
  // Three n x n operands plus results must fit comfortably in memory.
  require_memory(d.program, fmt::format("--size {}", size),
                 4.0 * double(size) * double(size) * double(c10::elementSize(o.dtype)));

  o.out = std::filesystem::path(out_text) / d.slug;
  // A name the file system cannot hold (each part at most NAME_MAX bytes, the whole path with the
  // lesson's file names below PATH_MAX) fails the first write after the whole run: refused now.
  for (const std::filesystem::path& part : o.out)
    if (part.native().size() > NAME_MAX)
      usage_error(d.program,
                  fmt::format("--out {}: a name in it is longer than {} bytes", printable(out_text), NAME_MAX));
  if (std::filesystem::absolute(o.out).native().size() + 256 > PATH_MAX)
    usage_error(d.program, fmt::format("--out {}: the path is too long for the files the lesson writes under it",
                                       printable(out_text)));
  // Checked without writing anything (no file of a fixed name, which could be the learner's, and no
  // folder, which a later flag's error would leave behind): the nearest part of the path that
  // exists must be a folder we may write in. The first write creates the rest.
  std::error_code ec;
  std::filesystem::path existing = o.out;
  while (!existing.empty() && !std::filesystem::exists(existing, ec)) existing = existing.parent_path();
  if (existing.empty()) existing = ".";
  if (!std::filesystem::is_directory(existing, ec))
    usage_error(d.program, fmt::format("--out {}: not writable ({} is not a folder)", printable(out_text),
                                       printable(existing.string())));
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    usage_error(d.program,
                fmt::format("--out {}: not writable ({})", printable(out_text), std::string(std::strerror(errno))));
  at::set_num_threads(threads);
  write_html_reports(report);
  o.threads = at::get_num_threads();
  return o;
}

}  // namespace workbook
