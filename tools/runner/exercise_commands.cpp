// The exercise loop: check, watch, hint, solution, reset, list.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include "commands.h"
#include "process.h"
#include "text_file.h"
#include "usage_error.h"
#include "workbook/profiler/atomic_file.h"

namespace runner {
namespace fs = std::filesystem;
namespace {

// The lesson named, or the first one not done yet; none when every exercise is done (then it
// says so).
const Lesson* lesson_or_first_pending(const Context& c, const Arguments& a) {
  if (!a.words.empty()) return &c.manifest.lesson(a.words[0]);
  const std::string n = first_pending(c);
  if (!n.empty()) return &c.manifest.lesson(n);
  fmt::print("every exercise is done. Well done!\n");
  return nullptr;
}

// The files a learner edits: their compiler errors are shown first.
std::vector<std::string> learner_files(const Lesson& l) {
  return {"exercises/" + l.slug + ".cpp", "exercises/" + l.slug + ".h"};
}

void print_hint_pointer(const Context& c, const Lesson& l) {
  const int seen = c.progress.load().hints_seen.count(l.number) ? c.progress.load().hints_seen.at(l.number) : 0;
  fmt::print("stuck? ./workbook hint {} shows a hint ({} of {} seen so far).\n", l.number, seen, l.hints.size());
}

void set_done(const Context& c, const Lesson& l, bool done) {
  c.progress.update([&](Progress& p) {
    if (done)
      p.done.insert(l.number);
    else
      p.done.erase(l.number);
  });
}

// An exercise with GPU checks (tests/gpu/<slug>_gpu_test.cpp) also runs them where a GPU and a
// CUDA build are; elsewhere its CPU checks decide, and one line says what was left out.
bool gpu_checks_pass(const Context& c, const Lesson& l) {
  if (!fs::exists(c.root / "tests" / "gpu" / (l.slug + "_gpu_test.cpp"))) return true;
  const std::string target = "gpu_check_" + l.number;
  const bool toolkit = c.builder.has_target(target);
  // Wherever the CUDA Toolkit is, the exercise is compiled for the device too, GPU or not: code
  // only a host can run (an exception, most of std::) fails here, not on the learner's first GPU.
  if (toolkit && !c.builder.build({target}, learner_files(l))) {
    fmt::print(
        "exercise {} runs on the CPU but does not compile for the GPU (nvcc's errors above): its function "
        "must run unchanged inside a kernel\n",
        l.number);
    return false;
  }
  if (!on_path("nvidia-smi")) {
    fmt::print("(exercise {}'s GPU checks need a CUDA GPU; none here, so the CPU checks above decide{})\n", l.number,
               toolkit ? "; nvcc compiled your code for the GPU, but none of it ran there" : "");
    return true;
  }
  if (!toolkit) {
    fmt::print("(exercise {}'s GPU checks need a build with the CUDA Toolkit: nvcc on PATH, WORKBOOK_CUDA not OFF)\n",
               l.number);
    return true;
  }
  const int status = c.builder.run_built({c.builder.program("tests/" + target).string()});
  return status == 0 || status == 77;
}

int check_lesson(const Context& c, const Lesson& l) {
  fmt::print("checking exercise {} ({}): exercises/{}.cpp\n", l.number, l.slug, l.slug);
  std::fflush(stdout);
  // A failed build stops here: never an older binary in place of a source that does not compile.
  if (!c.builder.build({"check_" + l.number}, learner_files(l))) {
    fmt::print("\nexercise {} does not compile yet: the compiler's first errors are above.\n", l.number);
    print_hint_pointer(c, l);
    set_done(c, l, false);
    return 1;
  }
  choose_blas_kernel(c);
  const int status =
      c.builder.run_built({c.builder.program("tests/check_" + l.number).string()}, {{"WORKBOOK_EXERCISE", l.number}});
  if (status == 0 && gpu_checks_pass(c, l)) {
    set_done(c, l, true);
    const std::string next = first_pending(c);
    if (next.empty())
      fmt::print("\nexercise {} passes — and that was the last one.\n", l.number);
    else
      fmt::print("\nexercise {} passes. Next: ./workbook run {}, then ./workbook check {}\n", l.number, next, next);
    return 0;
  }
  set_done(c, l, false);
  // The CPU checks may all have passed while the GPU part failed (nvcc's build, or a GPU check):
  // the line says which.
  fmt::print("\nexercise {} is not done yet: {}\n", l.number,
             status != 0 ? "fix the failing checks above." : "its CPU checks pass; fix what the GPU part says above.");
  print_hint_pointer(c, l);
  return 1;
}

// The exercise's files as they are now: a change to either starts a new check.
std::string exercise_stamp(const Context& c, const Lesson& l) {
  std::string all;
  for (const char* ext : {".h", ".cpp"}) all += read_file(c.root / "exercises" / (l.slug + ext)).value_or("") + '\0';
  return std::to_string(std::hash<std::string>{}(all)) + ":" + std::to_string(all.size());
}

}  // namespace

int check_exercise(const Context& c, const Arguments& a) {
  const Lesson* l = lesson_or_first_pending(c, a);
  if (!l) return 0;
  if (a.has("--libtorch2")) in_libtorch2(c, "check", a);
  return check_lesson(c, *l);
}

int watch_exercise(const Context& c, const Arguments& a) {
  const Lesson* found = lesson_or_first_pending(c, a);
  if (!found) return 0;
  const Lesson& l = *found;
  fmt::print("watching exercises/{}.cpp — save it to re-check, Ctrl-C to stop\n", l.slug);
  std::string last;
  for (;;) {
    const std::string now = exercise_stamp(c, l);
    if (now != last) {
      last = now;
      const int status = check_lesson(c, l);
      if (a.has("--once")) return status;
      fmt::print("-- waiting for changes to exercises/{}.cpp\n", l.slug);
      std::fflush(stdout);
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

int show_hint(const Context& c, const Arguments& a) {
  const Lesson& l = c.manifest.lesson(a.words.at(0));
  const int total = int(l.hints.size());
  const Progress p = c.progress.load();
  const int seen = p.hints_seen.count(l.number) ? p.hints_seen.at(l.number) : 0;
  const bool all = a.has("--all");
  const int show = all ? total : std::min(seen + 1, total);
  // Saved first: a state that cannot be saved is one line and exit 2, not a hint and then an error
  // (the count would not advance, and the same hint would show again).
  c.progress.update([&](Progress& q) { q.hints_seen[l.number] = std::max(show, q.hints_seen[l.number]); });
  // Earlier hints are not repeated: the newest one is the one to read.
  for (int k = all ? 1 : show; k <= show; ++k)
    fmt::print("hint {} of {} (exercise {}): {}\n", k, total, l.number, l.hints[std::size_t(k - 1)]);
  if (show < total) fmt::print("(run it again for the next hint, or ./workbook hint {} --all)\n", l.number);
  return 0;
}

int show_solution(const Context& c, const Arguments& a) {
  const Lesson& l = c.manifest.lesson(a.words.at(0));
  if (!c.progress.load().done.count(l.number) && !a.has("--force")) {
    fmt::print("exercise {} is not done yet: the reference solution opens once ./workbook check {} passes.\n", l.number,
               l.number);
    fmt::print("(./workbook hint {} helps; ./workbook solution {} --force shows it anyway.)\n", l.number, l.number);
    return 1;
  }
  const auto text = read_file(c.root / "solutions" / (l.slug + ".cpp"));
  if (!text) throw UsageError(fmt::format("cannot read solutions/{}.cpp", l.slug));
  fmt::print("reference solution of exercise {} (solutions/{}.cpp); compare it with exercises/{}.cpp:\n\n", l.number,
             l.slug, l.slug);
  fmt::print("{}", *text);
  return 0;
}

namespace {

// Copies the learner's exercise into the state folder's backup/ (named with the time) before a
// reset overwrites it, unless it is the stub already; returns the copy's path, or none.
fs::path keep_learners_version(const Context& c, const fs::path& exercise, const std::string& slug,
                               const std::string& stub) {
  const auto mine = read_file(exercise);
  std::error_code ec;
  if (!mine && fs::exists(exercise, ec))
    throw UsageError(
        fmt::format("not reset: cannot read {} to keep your version first (make it readable, or move "
                    "it away)",
                    exercise.string()));
  if (!mine || *mine == stub) return {};
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  // A name no earlier backup has (two resets in one second get .2, .3, ...): a backup is never replaced.
  const fs::path folder = c.progress.dir() / "backup";
  try {
    fs::create_directories(folder);
    for (int n = 1; n < 1000; ++n) {
      const fs::path backup = folder / (slug + "." + stamp + (n > 1 ? "." + std::to_string(n) : "") + ".cpp");
      const int fd = ::open(backup.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
      if (fd < 0 && errno == EEXIST) continue;
      if (fd < 0) throw std::runtime_error(fmt::format("{}: {}", backup.string(), std::strerror(errno)));
      ::close(fd);
      workbook::write_file_atomically(backup, *mine);
      return backup;
    }
    throw std::runtime_error("a thousand backups in one second");
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("not reset: could not keep your version first ({})", e.what()));
  }
}

}  // namespace

int reset_exercise(const Context& c, const Arguments& a) {
  const Lesson& l = c.manifest.lesson(a.words.at(0));
  const std::string file = "exercises/" + l.slug + ".cpp";
  const fs::path path = c.root / file;
  std::error_code ec;
  if (fs::exists(fs::symlink_status(path, ec)) && !fs::is_regular_file(fs::symlink_status(path, ec)))
    throw UsageError(fmt::format("{} is not a regular file: move it away first", file));
  const std::string git_dir = c.root.string();
  std::string rev;
  for (const char* candidate : {"origin/HEAD", "HEAD"})
    if (capture_process({"git", "-C", git_dir, "rev-parse", "--verify", "-q", candidate}).first == 0) {
      rev = candidate;
      break;
    }
  if (rev.empty()) throw UsageError("reset needs the workbook's git history (clone it with git)");
  const auto [status, text] = capture_process({"git", "-C", git_dir, "show", rev + ":" + file});
  if (status != 0) throw UsageError(fmt::format("{} is not in {}", file, rev));
  const fs::path kept = keep_learners_version(c, path, l.slug, text);
  try {
    workbook::write_file_atomically(path, text);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  set_done(c, l, false);
  fmt::print("exercise {} reset: {} is the stub again\n", l.number, file);
  if (!kept.empty()) fmt::print("your version is kept in {}\n", kept.string());
  return 0;
}

int list_lessons(const Context& c, const Arguments&) {
  const Progress p = c.progress.load();
  // Columns as wide as their longest entry (in characters, not bytes), so no title runs into the status.
  const auto characters = [](const std::string& s) {
    return std::size_t(std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xC0) != 0x80; }));
  };
  std::size_t slug_width = 4, title_width = 5;
  for (const auto& l : c.manifest.lessons()) {
    slug_width = std::max(slug_width, characters(l.slug));
    title_width = std::max(title_width, characters(l.title));
  }
  const auto row = [&](const std::string& n, const std::string& slug, const std::string& title,
                       const std::string& status) {
    fmt::print("{:<4} {}{} {}{} {}\n", n, slug, std::string(slug_width - characters(slug), ' '), title,
               std::string(title_width - characters(title), ' '), status);
  };
  row("#", "slug", "title", "exercise");
  for (const auto& l : c.manifest.lessons()) {
    std::string status = p.done.count(l.number) ? "done" : "pending";
    if (l.needs_gpu) status += " (needs GPU)";
    if (const auto score = p.scores.find(l.number); score != p.scores.end())
      status += fmt::format(" · predictions {}/{}", score->second.first, score->second.second);
    row(l.number, l.slug, l.title, status);
  }
  return 0;
}

}  // namespace runner
