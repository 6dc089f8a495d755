// workbook_runner: every command of ./workbook, in the spirit of rustlings. The bash script
// ./workbook only installs what is missing, configures, builds this program and hands over.
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "commands.h"
#include "predictions.h"
#include "usage_error.h"
#include "workbook/profiler/format.h"

namespace {

using runner::Arguments;
using runner::CommandSpec;
using runner::Context;

struct Command {
  CommandSpec spec;
  int (*run)(const Context&, const Arguments&);
  const char* summary;
};

const std::vector<Command>& commands() {
  static const std::vector<Command> table{
      {{"run", "run N [--libtorch2] [-- FLAGS]", "a lesson number", 1, 1, {"--libtorch2"}, true},
       runner::run_lesson,
       "build and run lesson N (FLAGS go to the lesson: --size 256 ...; -- --help lists them)"},
      {{"predict", "predict N [--answers A,B,...]", "a lesson number", 1, 1, {}, false, false, {"--answers"}},
       runner::predict,
       "guess what lesson N's run will show before running it; the next ./workbook run N scores each guess"},
      {{"check", "check [N] [--libtorch2]", "a lesson number", 0, 1, {"--libtorch2"}},
       runner::check_exercise,
       "check exercise N (default: the first one not done yet)"},
      {{"list", "list", "no arguments", 0, 0, {}}, runner::list_lessons, "lessons and exercise progress"},
      {{"hint", "hint N [--all]", "a lesson number and optionally --all", 1, 1, {"--all"}},
       runner::show_hint,
       "the next hint for exercise N (the idea, then the API, then nearly the code); --all shows every hint"},
      {{"solution", "solution N [--force]", "a lesson number", 1, 1, {"--force"}},
       runner::show_solution,
       "the reference solution, once your exercise N passes"},
      {{"watch", "watch [N] [--once]", "a lesson number", 0, 1, {"--once"}},
       runner::watch_exercise,
       "re-check exercise N every time you save it (--once: one check)"},
      {{"reset", "reset N", "a lesson number", 1, 1, {}},
       runner::reset_exercise,
       "put exercise N's stub back as shipped"},
      {{"test", "test [--libtorch2 | --sanitize]", "no arguments", 0, 0, {"--libtorch2", "--sanitize"}},
       runner::run_suite,
       "the whole suite (what CI runs); --libtorch2: on Debian 13's LibTorch 2.6 with Kineto (needs root); "
       "--sanitize: toolkit tests and solutions under ASan + UBSan"},
      {{"doctor", "doctor", "no arguments", 0, 0, {}},
       runner::run_doctor,
       "LibTorch, Kineto, CUDA, BLAS, threads, compiler"},
      {{"bench", "bench [--quick] [--libtorch2]", "no arguments", 0, 0, {"--quick", "--libtorch2"}},
       runner::run_bench,
       "performance figures against their goals (table + build/bench.json)"},
      {{"trace",
        "trace FILE [--sort KEY] [--limit N] [--under NAME] [--json] [--gpu] [--kernels] [--advise] [--svg OUT] "
        "[--out OUT]",
        "a trace file",
        1,
        0,
        {},
        false,
        true},
       runner::run_trace,
       "the statistics table of any chrome trace or .json.gz (--gpu: where a GPU's time went; --kernels: its "
       "kernels, decoded; --advise: the articles' cheat sheet on it)"},
      {{"report", "report FILE... -o OUT.html [--title TEXT]", "trace files", 1, 0, {}, false, true},
       runner::run_report,
       "one self-contained HTML page summarising traces: steps, operators, kernels, memory, flame graph, advice"},
      {{"docs", "docs", "no arguments", 0, 0, {}}, runner::build_docs, "the documentation site"},
      {{"fuzz", "fuzz [SECONDS]", "a number of SECONDS", 0, 1, {}},
       runner::run_fuzzer,
       "fuzz the trace importer with libFuzzer (default 300 s)"},
      {{"dev", "dev check", "the word check", 1, 1, {}},
       runner::dev_check,
       "for contributors: the lesson manifest against the tree"},
  };
  return table;
}

std::string names() {
  std::string out;
  for (const auto& c : commands()) out += (out.empty() ? "" : ", ") + c.spec.name;
  return out;
}

void print_help() {
  fmt::print("workbook — the LibTorch profiling workbook's runner\n\n");
  for (const auto& c : commands()) fmt::print("  ./workbook {:<34} {}\n", c.spec.usage, c.summary);
  fmt::print(
      "\nIt installs what is missing (scripts/setup-deps.sh), configures with CMake and builds only what the\n"
      "command needs. LIBTORCH=/path/to/libtorch uses another LibTorch; WORKBOOK_BUILD_DIR builds elsewhere\n"
      "than build/. Progress is kept in .workbook/progress.json.\n");
}

}  // namespace

int main(int argc, char** argv) {
  // Line by line, also into a pipe: the compiler's errors (stderr) and the verdict (stdout) must
  // reach a log in the order they were said.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // An ignored SIGCHLD survives exec and would make every wait for a child fail.
  std::signal(SIGCHLD, SIG_DFL);
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty() || args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
      print_help();
      return 0;
    }
    for (const auto& c : commands()) {
      if (c.spec.name != args[0]) continue;
      const Arguments a = runner::parse_arguments(c.spec, {args.begin() + 1, args.end()});
      return c.run(Context::from_environment(), a);
    }
    throw runner::UsageError(fmt::format("unknown command '{}' (commands: {})", args[0], names()));
  } catch (const runner::HelpRequested& e) {
    fmt::print("{}\n", e.what());
    return 0;
  } catch (const runner::UsageError& e) {
    // Messages quote what the learner typed: a newline or an escape in it stays one visible line.
    fmt::print(stderr, "workbook: {}\n", workbook::printable(e.what()));
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "workbook: {}\n", workbook::printable(e.what()));
    return 1;
  }
}
