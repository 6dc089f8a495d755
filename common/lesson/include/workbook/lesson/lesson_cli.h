#pragma once
/// \file
/// \brief The flags every lesson shares, validated with one-line errors.

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace workbook {

/// A lesson's own flag, taken as text; the lesson validates it (see usage_error).
struct ExtraFlag {
  std::string name;        ///< "--sizes"
  std::string help;        ///< one line for --help
  std::string* value;      ///< receives the text; keeps its value when the flag is absent
  bool is_switch = false;  ///< a flag without a value: sets *value to "1"
};

/// Defaults a lesson chooses for the shared flags.
struct LessonDefaults {
  /// A lesson's program name, slug, one-line description and default --size.
  LessonDefaults(std::string program_, std::string slug_, std::string description_, std::int64_t size_ = 64)
      : program(std::move(program_)), slug(std::move(slug_)), description(std::move(description_)), size(size_) {}

  std::string program;            ///< "lesson01": names the program in errors and help
  std::string slug;               ///< "01_matmul_add": the lesson's folder under `--out`
  std::string description;        ///< one line for --help
  std::int64_t size = 64;         ///< default --size
  std::int64_t max_size = 16384;  ///< largest --size accepted
  int steps = 3;                  ///< default --steps (recorded steps)
  int warmup = 1;                 ///< default --warmup
  std::string dtype;              ///< default --dtype; empty: float32 on CPU, bfloat16 on CUDA
  /// Why the lesson runs on the CPU only (empty: it runs anywhere). Then --device auto means the
  /// CPU, saying so in one line where a GPU is there, and --device cuda is an error.
  std::string cpu_only_reason;
  /// Why the lesson runs in float32 only (empty: any dtype). Then float32 is the default and any
  /// other --dtype is a usage error giving this reason.
  std::string float32_only_reason;
  std::vector<ExtraFlag> extra;  ///< the lesson's own flags
  /// Shared flags the lesson has no use for, each with why ("--size": "it sweeps --sizes"):
  /// giving one is a usage error, so it never silently does nothing or names a file it did not make.
  std::map<std::string, std::string> unused_flags;
};

/// The most recorded steps a lesson takes (--steps): each keeps its events until the run ends.
inline constexpr int kMaxRecordedSteps = 100;

/// The parsed flags: --size --dtype --device --steps --warmup --out --threads.
struct LessonOptions {
  std::int64_t size = 64;                                  ///< --size
  c10::ScalarType dtype = c10::ScalarType::Float;          ///< --dtype
  c10::Device device = c10::Device(c10::DeviceType::CPU);  ///< --device, resolved
  int steps = 3;                                           ///< recorded (active) steps
  int warmup = 1;                                          ///< warm-up steps before recording
  int threads = 1;                                         ///< intra-op threads in use
  std::filesystem::path out;                               ///< the lesson's own folder: `--out` / slug
  std::string slug;                                        ///< the lesson's slug, e.g. "01_matmul_add"

  /// "float32", "bfloat16", ...
  std::string dtype_name() const;
  /// "cpu" or "cuda".
  std::string device_name() const;
  /// File stem for outputs: "<size>_<dtype>_<device>", as in the articles.
  std::string tag() const;
};

/// Parses and validates the shared flags. On bad input prints one line naming the flag to
/// stderr and exits with status 2; on --help prints usage and exits 0. Creates the out folder
/// (checked writable) and applies --threads.
LessonOptions parse_lesson_flags(int argc, char** argv, const LessonDefaults& defaults);

/// Prints "<program>: <message>" to stderr and exits with status 2: the one way lessons reject input.
[[noreturn]] void usage_error(const std::string& program, const std::string& message);

/// Parses "16,32,64" into sizes, each in [1, max]; throws std::invalid_argument naming the bad item.
std::vector<std::int64_t> parse_sizes(const std::string& text, std::int64_t max);

/// Runs a lesson's body: an exception becomes one line "<program>: <what>" on stderr (LibTorch's
/// without its backtrace) and exit status 1 instead of a crash; std::invalid_argument (an output
/// path that is not a regular file) exits 2.
int run_reporting_errors(const std::string& program, const std::function<int()>& body);

/// Parses the text of a lesson's own size flag; on bad input prints "<program>: <flag>: <why>"
/// and exits with status 2.
std::int64_t size_flag(const std::string& program, const std::string& flag, const std::string& text, std::int64_t max);

/// Parses one size in [1, max]; throws std::invalid_argument naming the bad text.
std::int64_t parse_size(const std::string& text, std::int64_t max);

/// Refuses a run whose estimate of its memory (`bytes`, from its flags, before anything is
/// allocated) passes half of this machine's RAM: prints "<program>: <flags> need about X GiB, more
/// than half of this machine's memory (Y GiB)" and exits with status 2.
void require_memory(const std::string& program, const std::string& flags, double bytes);

/// Parses a dtype name (float32/float/fp32, float64/double, bfloat16/bf16, float16/half/fp16).
/// Throws std::invalid_argument listing the accepted names.
c10::ScalarType parse_dtype(const std::string& name);
/// The canonical name of a dtype ("float32", "bfloat16", ...).
std::string dtype_name(c10::ScalarType dtype);

}  // namespace workbook
