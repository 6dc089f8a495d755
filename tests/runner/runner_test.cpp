// The runner's parts without a build: the manifest, the progress state, argument parsing, the
// build-error excerpt and the manifest-against-tree check.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>

#include "arguments.h"
#include "blas_kernels.h"
#include "build.h"
#include "dev_check.h"
#include "manifest.h"
#include "predictions.h"
#include "process.h"
#include "progress.h"
#include "usage_error.h"

namespace fs = std::filesystem;
using namespace runner;

namespace {

const char* const kTwoLessons = R"({"lessons": [
  {"number": "01", "slug": "01_first", "title": "First", "goal": "g", "needs_gpu": false,
   "quick_flags": "--size 16", "hints": ["idea", "api", "code"]},
  {"number": "02", "slug": "02_second", "title": "Second", "goal": "g", "needs_gpu": true,
   "quick_flags": "--size 8", "docs_flags": "--sizes 1,2", "figure": "sweep.svg", "hints": ["only"]}]})";

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A fresh folder under the system's temp folder, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path =
        fs::temp_directory_path() / ("runner_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

// A tree that agrees with kTwoLessons.
void complete_tree(const fs::path& root) {
  const Manifest m = Manifest::parse(kTwoLessons, "test");
  std::string readme = "# x\n\n| # | lesson | what you learn |\n|---|---|---|\n";
  for (const auto& l : m.lessons()) {
    for (const auto& f : lesson_files(l))
      write(root / f, f.rfind("docs/", 0) == 0 ? "# T {#lesson_" + l.slug + "}\n" : "x\n");
    readme += "| " + l.number + " | `" + l.slug + "` — " + l.title + " | stuff |\n";
  }
  write(root / "README.md", readme);
}

}  // namespace

TEST_SUITE("manifest") {
  TEST_CASE("a manifest is read with every field, defaults where a field is optional") {
    const Manifest m = Manifest::parse(kTwoLessons, "test");
    REQUIRE(m.lessons().size() == 2);
    CHECK(m.lessons()[0].quick_flags == std::vector<std::string>{"--size", "16"});
    CHECK(m.lessons()[0].docs_flags == m.lessons()[0].quick_flags);
    CHECK(m.lessons()[0].hints.size() == 3);
    CHECK(m.lessons()[1].needs_gpu);
    CHECK(m.lessons()[1].figure == "sweep.svg");
    CHECK(m.numbers() == "01 02");
  }

  TEST_CASE("a broken manifest is refused with the reason") {
    CHECK_THROWS_WITH(Manifest::parse("{", "m.json"), doctest::Contains("not valid JSON"));
    CHECK_THROWS_WITH(Manifest::parse(R"({"lessons": []})", "m.json"), doctest::Contains("non-empty list"));
    CHECK_THROWS_WITH(Manifest::parse(R"({"lessons": [{"number": "01"}]})", "m.json"), doctest::Contains("'slug'"));
    std::string semicolon = kTwoLessons;
    semicolon.replace(semicolon.find("First"), 5, "Fi;st");
    CHECK_THROWS_WITH(Manifest::parse(semicolon, "m.json"), doctest::Contains("';'"));
    std::string swapped = kTwoLessons;
    swapped.replace(swapped.find("\"02\""), 4, "\"00\"");
    swapped.replace(swapped.find("02_second"), 9, "00_second");
    CHECK_THROWS_WITH(Manifest::parse(swapped, "m.json"), doctest::Contains("out of order"));
    std::string bad_slug = kTwoLessons;
    bad_slug.replace(bad_slug.find("01_first"), 8, "first_01");
    CHECK_THROWS_WITH(Manifest::parse(bad_slug, "m.json"), doctest::Contains("slug"));
  }

  TEST_CASE("a lesson is found by its number written either way, anything else is a usage error") {
    const Manifest m = Manifest::parse(kTwoLessons, "test");
    CHECK(m.lesson("1").slug == "01_first");
    CHECK(m.lesson("02").slug == "02_second");
    CHECK_THROWS_AS(m.lesson("x"), UsageError);
    CHECK_THROWS_WITH(m.lesson("x"), doctest::Contains("'x' is not a lesson number (lessons: 01 02)"));
    CHECK_THROWS_WITH(m.lesson("-1"), doctest::Contains("not a lesson number"));
    CHECK_THROWS_WITH(m.lesson("99"), doctest::Contains("no lesson 99"));
  }
}

TEST_SUITE("progress") {
  TEST_CASE("progress is data: shell syntax in the file is a warning and a fresh state, never run") {
    std::string warning;
    const Progress p = parse_progress("ROOT[$(touch pwned)]", warning);
    CHECK(p.done.empty());
    CHECK(warning.find("fresh state") != std::string::npos);
    CHECK_FALSE(fs::exists("pwned"));
    for (const char* bad : {"abc", "[]", R"({"done": ["1; rm"]})", R"({"done": [1]})", R"({"hints_seen": {"01": -1}})",
                            R"({"hints_seen": {"x": 1}})", R"({"hints_seen": {"01": 4294967297}})"}) {
      CAPTURE(std::string(bad));
      warning.clear();
      parse_progress(bad, warning);
      CHECK_FALSE(warning.empty());
    }
  }

  TEST_CASE("a cached BLAS kernel is accepted only if this CPU can run it") {
    for (const std::string& kernel : runner::blas_kernel_candidates()) CHECK(runner::blas_kernel_runs_here(kernel));
    for (const char* bogus : {"Bogus", "Prescott", "skylakex", ""}) CHECK_FALSE(runner::blas_kernel_runs_here(bogus));
  }

  TEST_CASE("progress round-trips through its text") {
    Progress p;
    p.done = {"01", "03"};
    p.hints_seen = {{"02", 2}};
    std::string warning;
    const Progress back = parse_progress(progress_text(p), warning);
    CHECK(warning.empty());
    CHECK(back.done == p.done);
    CHECK(back.hints_seen == p.hints_seen);
  }

  TEST_CASE("predictions, scores and reminders round-trip; a bad prediction is a fresh state") {
    Progress p;
    p.predictions["01"] = {{"first_step_cold", "yes"}, {"ops_in_region", "2"}};
    p.scores["01"] = {1, 2};
    p.reminded = {"03"};
    std::string warning;
    const Progress back = parse_progress(progress_text(p), warning);
    CHECK(warning.empty());
    CHECK(back.predictions == p.predictions);
    CHECK(back.scores == p.scores);
    CHECK(back.reminded == p.reminded);
    for (const char* bad : {R"({"predictions": {"01": {"q": 3}}})", R"({"scores": {"01": [3, 2]}})",
                            R"({"predictions": {"1; rm": {}}})", R"({"reminded": ["x"]})"}) {
      CAPTURE(bad);
      std::string w;
      CHECK(parse_progress(bad, w).predictions.empty());
      CHECK_FALSE(w.empty());
    }
  }

  TEST_CASE("the store saves under its folder and refuses paths of the wrong kind") {
    TempDir t;
    const ProgressStore store(t.path / ".workbook");
    store.update([](Progress& p) { p.done.insert("02"); });
    CHECK(store.load().done == std::set<std::string>{"02"});
    CHECK(fs::is_regular_file(t.path / ".workbook" / "progress.json"));

    write(t.path / "file" / ".workbook", "not a folder");
    const ProgressStore on_file(t.path / "file" / ".workbook");
    CHECK_THROWS_WITH_AS(on_file.load(), doctest::Contains("is not a directory"), UsageError);

    fs::create_directories(t.path / "dir" / ".workbook" / "progress.json");
    const ProgressStore on_dir(t.path / "dir" / ".workbook");
    CHECK_THROWS_WITH_AS(on_dir.update([](Progress&) {}), doctest::Contains("is not a regular file"), UsageError);
  }
}

TEST_SUITE("arguments") {
  const CommandSpec hint{"hint", "hint N [--all]", "a lesson number and optionally --all", 1, 1, {"--all"}};
  const CommandSpec run{"run", "run N [-- FLAGS]", "a lesson number", 1, 1, {"--libtorch2"}, true};

  TEST_CASE("words, known flags and the words after -- are told apart") {
    const Arguments a = parse_arguments(run, {"3", "--libtorch2", "--", "--size", "16", "--libtorch2"});
    CHECK(a.words == std::vector<std::string>{"3"});
    CHECK(a.has("--libtorch2"));
    CHECK(a.passthrough == std::vector<std::string>{"--size", "16", "--libtorch2"});
  }

  TEST_CASE("an unknown option, a missing or extra word, a stray -- are usage errors") {
    CHECK_THROWS_WITH_AS(parse_arguments(hint, {"3", "--bogus"}),
                         doctest::Contains("unknown option '--bogus' for hint"), UsageError);
    CHECK_THROWS_WITH_AS(parse_arguments(hint, {}), doctest::Contains("hint takes a lesson number"), UsageError);
    CHECK_THROWS_WITH_AS(parse_arguments(hint, {"3", "4"}), doctest::Contains("(got '4')"), UsageError);
    CHECK_THROWS_WITH_AS(parse_arguments(hint, {"3", "--", "x"}), doctest::Contains("takes no '--'"), UsageError);
  }

  TEST_CASE("-h and --help ask for the command's usage, unless they follow --") {
    CHECK_THROWS_WITH_AS(parse_arguments(hint, {"3", "--help"}), doctest::Contains("usage: ./workbook hint N [--all]"),
                         HelpRequested);
    CHECK_THROWS_AS(parse_arguments(run, {"-h"}), HelpRequested);
    CHECK(parse_arguments(run, {"1", "--", "--help"}).passthrough == std::vector<std::string>{"--help"});
  }

  TEST_CASE("a negative number is a word, so that the lesson check can name it") {
    CHECK(parse_arguments(hint, {"-1"}).words == std::vector<std::string>{"-1"});
  }
}

TEST_SUITE("build errors") {
  TEST_CASE("the learner's own errors come first, with the lines under them") {
    const std::string log =
        "[ 10%] Building CXX object tests/CMakeFiles/checks_05.dir/x.cpp.o\n"
        "/src/common/lesson/include/workbook/lesson/timing.h:3:1: error: something in the toolkit\n"
        "In file included from /src/exercises/05_mlp.cpp:1:\n"
        "/src/exercises/05_mlp.cpp:12:3: error: expected ';' before '}' token\n"
        "   12 |   return x\n"
        "      |          ^\n"
        "      |          ;\n"
        "make[2]: *** [x] Error 1\n";
    const std::string excerpt = build_error_excerpt(log, {"exercises/05_mlp.cpp"});
    CHECK(excerpt.rfind("/src/exercises/05_mlp.cpp:12:3: error: expected ';'", 0) == 0);
    CHECK(excerpt.find("   12 |   return x") != std::string::npos);
    CHECK(excerpt.find("timing.h:3:1") > excerpt.find("05_mlp.cpp:12:3"));
    CHECK(excerpt.find("make[2]") == std::string::npos);
  }

  TEST_CASE("a link error or a log without a diagnostic still shows what failed") {
    CHECK(build_error_excerpt("x.o: in function f:\nx.cpp:(.text+0x1): undefined reference to `g()'\n", {})
              .find("undefined reference to `g()'") != std::string::npos);
    CHECK(build_error_excerpt("line one\nthe last line\n", {}).find("the last line") != std::string::npos);
  }

  TEST_CASE("nvcc's diagnostics count as the learner's own too; a very long line is passed over") {
    const std::string log =
        std::string(5000, 'x') + " error: not a diagnostic\n" +
        "/src/other.cpp:1:1: error: elsewhere\n/src/exercises/07_bias.cu(12): error: identifier \"z\" is undefined\n";
    const std::string excerpt = build_error_excerpt(log, {"exercises/07_bias.cu"});
    CHECK(excerpt.rfind("/src/exercises/07_bias.cu(12): error:", 0) == 0);
    CHECK(excerpt.find("xxxxx") == std::string::npos);
  }

  TEST_CASE("the excerpt stays short") {
    std::string log;
    for (int i = 0; i < 100; ++i) log += "/src/exercises/01.cpp:" + std::to_string(i + 1) + ":1: error: e\n";
    const std::string excerpt = build_error_excerpt(log, {"exercises/01.cpp"}, 30);
    CHECK(std::count(excerpt.begin(), excerpt.end(), '\n') == 30);
  }
}

TEST_SUITE("dev check") {
  TEST_CASE("a tree that matches its manifest has no problems") {
    TempDir t;
    complete_tree(t.path);
    CHECK(manifest_problems(Manifest::parse(kTwoLessons, "test"), t.path).empty());
  }

  TEST_CASE("a missing file, an orphan, a page without its anchor and a stale README table are each named") {
    TempDir t;
    complete_tree(t.path);
    fs::remove(t.path / "solutions/02_second.cpp");
    write(t.path / "exercises/03_orphan.cpp", "x\n");
    write(t.path / "lessons/02_second_gpu.cu", "x\n");  // a lesson's own extra file: fine
    write(t.path / "docs/lessons/01_first.md", "# no anchor\n");
    std::string readme;
    {
      std::ifstream in(t.path / "README.md");
      readme.assign(std::istreambuf_iterator<char>(in), {});
    }
    readme.replace(readme.find("— Second"), 8, "— Secnod");
    write(t.path / "README.md", readme);
    const auto problems = manifest_problems(Manifest::parse(kTwoLessons, "test"), t.path);
    auto mentions = [&](const std::string& text) {
      for (const auto& p : problems)
        if (p.find(text) != std::string::npos) return true;
      return false;
    };
    CHECK(problems.size() == 4);
    CHECK(mentions("lesson 02 has no solutions/02_second.cpp"));
    CHECK(mentions("exercises/03_orphan.cpp belongs to no lesson"));
    CHECK(mentions("has no anchor {#lesson_01_first}"));
    CHECK(mentions("Secnod"));
  }
}

TEST_SUITE("predictions") {
  const Question yes_no{"cold", "Cold?", "yes_no", 0, "why"};
  const Question count{"ops", "How many?", "number", 0, "why"};
  const Question about{"ratio", "About how much?", "number", 0.5, "why"};

  TEST_CASE("a prediction is made canonical, or refused when it is not one of its kind") {
    CHECK(canonical_prediction(yes_no, " Y ") == "yes");
    CHECK(canonical_prediction(yes_no, "NO") == "no");
    CHECK_FALSE(canonical_prediction(yes_no, "maybe").has_value());
    CHECK(canonical_prediction(count, "2") == "2");
    CHECK(canonical_prediction(count, "2.50") == "2.5");
    CHECK_FALSE(canonical_prediction(count, "two").has_value());
    CHECK_FALSE(canonical_prediction(count, "2x").has_value());
    CHECK_FALSE(canonical_prediction(count, "inf").has_value());
  }

  TEST_CASE("right means the same word, or a number within the question's tolerance") {
    CHECK(prediction_is_right(yes_no, "yes", "yes"));
    CHECK_FALSE(prediction_is_right(yes_no, "no", "yes"));
    CHECK(prediction_is_right(count, "2", "2"));
    CHECK_FALSE(prediction_is_right(count, "3", "2"));
    CHECK(prediction_is_right(about, "2.4", "2"));
    CHECK_FALSE(prediction_is_right(about, "2.6", "2"));
  }

  TEST_CASE("each prediction is scored against the run's answer; unasked or unanswered ones are left out") {
    Lesson l;
    l.number = "01";
    l.questions = {yes_no, count, about};
    const std::string answers = R"({"cold": {"value": "yes", "why": "first 40 us, later 1 us"},
                                    "ops": {"value": "2", "why": "2 ops"}})";
    const auto verdicts = score_predictions(l, {{"cold", "no"}, {"ops", "2"}, {"ratio", "1"}}, answers);
    REQUIRE(verdicts.size() == 2);
    CHECK(verdicts[0].question == "cold");
    CHECK_FALSE(verdicts[0].right);
    CHECK(verdicts[0].measured == "yes");
    CHECK(verdicts[0].why == "first 40 us, later 1 us");
    CHECK(verdicts[1].right);
    CHECK_THROWS(score_predictions(l, {{"cold", "no"}}, R"({"cold": {"value": 1}})"));
    CHECK_THROWS(score_predictions(l, {{"cold", "no"}}, "[]"));
  }

  TEST_CASE("a question in the manifest needs its fields, a known kind and a unique id") {
    const auto with = [](const std::string& questions) {
      return R"({"lessons": [{"number": "01", "slug": "01_a", "title": "t", "goal": "g", "needs_gpu": false,
                 "quick_flags": "", "hints": ["h"], "questions": )" +
             questions + "}]}";
    };
    const Manifest m = Manifest::parse(with(R"([{"id": "a", "ask": "A?", "kind": "yes_no", "explain": "e"},
                 {"id": "b", "ask": "B?", "kind": "number", "tolerance": 1, "explain": "e"}])"),
                                       "test");
    REQUIRE(m.lessons()[0].questions.size() == 2);
    CHECK(m.lessons()[0].questions[1].tolerance == 1);
    CHECK_THROWS_WITH(Manifest::parse(with(R"([{"id": "a", "ask": "A?", "kind": "maybe", "explain": "e"}])"), "t"),
                      doctest::Contains("kind 'maybe'"));
    CHECK_THROWS_WITH(Manifest::parse(with(R"([{"id": "a", "ask": "A?", "kind": "yes_no"}])"), "t"),
                      doctest::Contains("'explain'"));
    CHECK_THROWS_WITH(Manifest::parse(with(R"([{"id": "a", "ask": "A?", "kind": "yes_no", "explain": "e"},
                                              {"id": "a", "ask": "B?", "kind": "yes_no", "explain": "e"}])"),
                                      "t"),
                      doctest::Contains("listed twice"));
  }
}

TEST_SUITE("process") {
  TEST_CASE("a program run quietly writes nowhere, and its exit status comes back (bench's children)") {
    CHECK(runner::run_quietly({"sh", "-c", "echo to stdout; echo to stderr >&2; exit 3"}) == 3);
    CHECK(runner::run_quietly({"sh", "-c", "exit 0"}) == 0);
  }

  TEST_CASE("a measured run gives its own exit status, time and peak memory") {
    const runner::RunCost cost = runner::measure_process({"sh", "-c", "echo discarded; exit 5"});
    CHECK(cost.status == 5);
    CHECK(cost.seconds > 0);
    CHECK(cost.peak_bytes > 0);
  }
}
