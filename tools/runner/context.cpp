#include "context.h"
#include "workbook/profiler/atomic_file.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "process.h"
#include "usage_error.h"

#include <unistd.h>

#include "blas_kernels.h"

namespace runner {
namespace fs = std::filesystem;

Context Context::from_environment() {
  const char* root = std::getenv("WORKBOOK_ROOT");
  const char* build = std::getenv("WORKBOOK_BUILD_DIR");
  if (!root || !build) throw std::runtime_error("start the runner through ./workbook (WORKBOOK_ROOT is not set)");
  // WORKBOOK_STATE_DIR: the suite's tests keep their progress apart from the learner's.
  const char* state_dir = std::getenv("WORKBOOK_STATE_DIR");
  if (state_dir && !*state_dir)
    throw UsageError("WORKBOOK_STATE_DIR is set but empty: unset it, or name the folder for the progress");
  const fs::path r = root, state = state_dir ? fs::path(state_dir) : r / ".workbook";
  // The build log lives with the progress unless .workbook/ is unusable.
  std::error_code ec;
  if (!fs::exists(state, ec)) fs::create_directories(state, ec);
  // (Decided after creating it: a state folder that cannot exist, under a file, is unusable too.
  // Commands that need the progress say so themselves.)
  const fs::path log = fs::is_directory(state, ec) ? state / "build.log" : fs::path(build) / "build.log";
  return Context{r, Manifest::load(r / "lessons" / "manifest.json"), Builder(r, build, log), ProgressStore(state)};
}

std::string first_pending(const Context& c) {
  const Progress p = c.progress.load();
  for (const auto& l : c.manifest.lessons())
    if (!p.done.count(l.number)) return l.number;
  return "";
}

namespace {

std::string blas_cache_key() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      model = line;
      break;
    }
  std::string library;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator("/usr/lib", ec)) {
    const fs::path candidate = dir.path() / "libblas.so.3";
    if (fs::exists(candidate, ec)) {
      library = fs::canonical(candidate, ec).string();
      break;
    }
  }
  return model + " " + library;
}

}  // namespace

void choose_blas_kernel(const Context& c) {
  if (std::getenv("OPENBLAS_CORETYPE")) return;
  const fs::path cache = c.progress.dir() / "blas-kernel.json";
  const std::string key = blas_cache_key();
  std::string choice;
  bool cached = false;
  std::error_code ec;
  std::ifstream in;
  if (fs::is_regular_file(fs::symlink_status(cache, ec))) in.open(cache);
  if (in) {
    const auto doc = nlohmann::json::parse(in, nullptr, false);
    // Data, never trusted: the right types, and a kernel name is letters and digits.
    if (doc.is_object() && doc.contains("key") && doc["key"].is_string() && doc["key"].get<std::string>() == key &&
        doc.contains("choice") && doc["choice"].is_string()) {
      choice = doc["choice"].get<std::string>();
      // Empty (OpenBLAS's own choice) or a kernel this CPU can run: any other name would either be
      // ignored by OpenBLAS or die with SIGILL, so the probe runs again.
      cached = choice.empty() || blas_kernel_runs_here(choice);
      if (!cached) choice.clear();
    }
  }
  if (!cached) {
    if (!c.builder.build({"workbook_blas_probe"}, {}, false)) return;  // the lessons run without it
    const auto [status, out] = capture_process({c.builder.program("tools/workbook_blas_probe").string(), "--choose"});
    if (status != 0) return;
    std::istringstream words(out);
    words >> choice;
    const auto kind = fs::symlink_status(cache, ec);
    if (fs::is_directory(c.progress.dir(), ec) && (!fs::exists(kind) || fs::is_regular_file(kind))) {
      try {
        workbook::write_file_atomically(cache, nlohmann::json{{"key", key}, {"choice", choice}}.dump() + "\n");
      } catch (const std::exception&) {
        // only a cache: the next run asks the probe again
      }
    }
    if (!choice.empty())
      fmt::print(
          stderr,
          "workbook: OpenBLAS's own kernel choice is slower here; using OPENBLAS_CORETYPE={} (self-test passed)\n",
          choice);
  }
  if (!choice.empty()) ::setenv("OPENBLAS_CORETYPE", choice.c_str(), 1);
}

}  // namespace runner
