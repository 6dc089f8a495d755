// The one doctest main of every test binary: compiled once, linked everywhere.
//
// `./workbook check N` sets WORKBOOK_EXERCISE=N: then failures are told to the learner in a few
// lines each (which check, what it wanted, what this run gave, where a hint is) instead of
// doctest's full report, which the suite keeps. WORKBOOK_TEST_SUITE_EXCLUDE=timing leaves out
// doctest suites by name (the sanitizer leg's test preset sets it). WORKBOOK_REPEAT=K runs the
// selected checks K times in one process and fails unless every run gives the first run's verdict
// (tests/lessons/repeat_verdicts.sh: LibTorch's load, ~0.7 s a process, is paid once per K runs).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <ostream>
#include <sstream>
#include <string>

namespace {

// The check binary's own path, for the command that shows where it crashed.
std::string& program_path() {
  static std::string path = "THE_CHECK_BINARY";
  return path;
}

// A LibTorch error's first line says what and where; the c10 backtrace below it is for the log.
std::string first_line(const std::string& text) {
  const auto end = text.find('\n');
  if (end == std::string::npos) return text;
  return text.substr(0, end) + " (backtrace left out: rerun the check binary without WORKBOOK_EXERCISE for it)";
}

struct LearnerReporter : doctest::IReporter {
  std::ostream& out;
  std::string exercise;
  const doctest::TestCaseData* current = nullptr;
  int failed_checks = 0, failed_cases = 0, cases = 0, shown = 0;
  bool case_failed = false;
  bool crashed = false;  // a check crashed: the ones after it never ran

  explicit LearnerReporter(const doctest::ContextOptions& options) : out(*options.cout) {
    const char* n = std::getenv("WORKBOOK_EXERCISE");
    exercise = n ? n : "N";
  }

  void header() {
    if (case_failed) return;
    case_failed = true;
    ++failed_cases;
    out << "\n✗ " << current->m_name << "\n";
  }

  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {
    if (crashed) {
      out << "\n"
          << failed_cases << " of the " << cases
          << " checks that ran fail, and the checks after the crash did not run. Stuck? ./workbook hint " << exercise
          << " shows the next hint.\n"
          << std::flush;
      return;
    }
    if (failed_cases == 0) {
      out << "all " << cases << " checks of exercise " << exercise << " pass\n";
      return;
    }
    out << "\n"
        << failed_cases << " of " << cases << " checks fail. Stuck? ./workbook hint " << exercise
        << " shows the next hint.\n"
        << std::flush;
  }
  void test_case_start(const doctest::TestCaseData& data) override {
    current = &data;
    case_failed = false;
    shown = 0;
    ++cases;
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException& e) override {
    header();
    if (e.is_crash) {
      // The process ends after this (doctest re-raises the signal): flush, or the buffered lines
      // of this report are lost; and no summary follows, so say here that the rest did not run.
      crashed = true;
      const std::string what = e.error_string.c_str();
      out << "  crashed: " << what << "\n";
      if (what.find("SIGABRT") != std::string::npos)
        out << "  what stopped it is named just above: UBSan's \"runtime error: ...\" with its file and line, or "
               "a failed assertion\n";
      else
        out << "  an invalid memory access (a dangling pointer or reference, an index past the end) or another "
               "signal; for its line: gdb -batch -ex run -ex bt --args "
            << program_path() << "\n";
      out << "  the checks after this one did not run\n" << std::flush;
      return;
    }
    out << "  stopped: " << first_line(e.error_string.c_str()) << "\n";
  }
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& a) override {
    if (!a.m_failed) return;
    header();
    ++failed_checks;
    if (++shown > 2) {
      if (shown == 3) out << "  (more checks in this case fail too)\n";
      return;
    }
    // What the check was looking at (CAPTURE / INFO), so a loop's failing case is named.
    for (int i = 0; i < doctest::IReporter::get_num_active_contexts(); ++i) {
      std::ostringstream context;
      doctest::IReporter::get_active_contexts()[i]->stringify(&context);
      // CAPTURE(x) reads "x := 3": the case it was checking; an INFO is a sentence of its own.
      const std::string text = context.str();
      out << (text.find(" := ") != std::string::npos ? "  for " : "  note: ") << text << "\n";
    }
    // CHECK_FALSE(x) wants x to be false: say so, or "wanted: x" reads as its opposite.
    if (a.m_at & doctest::assertType::is_false)
      out << "  wanted: not (" << a.m_expr << ")\n";
    else
      out << "  wanted: " << a.m_expr << "\n";
    const bool wants_exception = (a.m_at & doctest::assertType::is_throws) ||
                                 (a.m_at & doctest::assertType::is_throws_as) ||
                                 (a.m_at & doctest::assertType::is_throws_with);
    if (wants_exception && !a.m_threw) {
      out << "  expected an exception"
          << (a.m_exception_type && *a.m_exception_type ? std::string(" of type ") + a.m_exception_type : std::string())
          << ", none was thrown\n";
    } else if ((a.m_at & doctest::assertType::is_throws_as) && !a.m_threw_as) {
      out << "  it threw another kind of exception than " << a.m_exception_type << ": "
          << first_line(a.m_exception.c_str()) << "\n";
    } else if (a.m_threw) {
      out << "  but it threw: " << first_line(a.m_exception.c_str()) << "\n";
    } else {
      out << "  this run gave: " << a.m_decomp.c_str() << "\n";
    }
  }
  void log_message(const doctest::MessageData& m) override {
    if (!case_failed || shown > 2) return;
    out << "  note: " << m.m_string.c_str() << "\n";
  }
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_REPORTER("learner", 1, LearnerReporter);

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context;
  if (argc > 0) program_path() = argv[0];
  if (std::getenv("WORKBOOK_EXERCISE")) context.setOption("reporters", "learner");
  // The sanitizer leg's test preset leaves out the suites whose checks compare timings.
  if (const char* excluded = std::getenv("WORKBOOK_TEST_SUITE_EXCLUDE"))
    context.setOption("test-suite-exclude", excluded);
  context.applyCommandLine(argc, argv);
  const char* repeat = std::getenv("WORKBOOK_REPEAT");
  const int runs = repeat ? std::max(1, std::atoi(repeat)) : 1;
  const int first = context.run();
  for (int k = 2; k <= runs && !context.shouldExit(); ++k) {
    const int again = context.run();
    if ((again != 0) != (first != 0)) {
      std::fprintf(stderr, "run %d of %d in this process %s, the first %s\n", k, runs, again ? "failed" : "passed",
                   first ? "failed" : "passed");
      return 3;
    }
  }
  return first;
}
