#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <thread>

#include "workbook/profiler/atomic_file.h"

namespace fs = std::filesystem;

TEST_CASE("writes, replaces, and leaves no temporary behind") {
  const fs::path dir = fs::temp_directory_path() / ("wb-atomic-" + std::to_string(::getpid()));
  const fs::path file = dir / "sub" / "out.txt";
  workbook::write_file_atomically(file, "first");
  workbook::write_file_atomically(file, "second");
  CHECK(workbook::read_file(file) == "second");
  int entries = 0;
  for (auto& e : fs::directory_iterator(file.parent_path())) entries += e.is_regular_file();
  CHECK(entries == 1);
  fs::remove_all(dir);
}

TEST_CASE("an impossible path is an error naming it") {
  CHECK_THROWS_WITH_AS(workbook::write_file_atomically("/proc/version/impossible.txt", "x"),
                       doctest::Contains("/proc/version"), std::runtime_error);
  CHECK_THROWS_WITH_AS(workbook::read_file("/nonexistent/file.json"), doctest::Contains("/nonexistent/file.json"),
                       std::runtime_error);
}

TEST_CASE("a target that is not a regular file is refused and left as it was") {
  const fs::path dir = fs::temp_directory_path() / ("wb-unsafe-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path real = dir / "real.txt", link = dir / "link.svg", fifo = dir / "pipe.svg", folder = dir / "folder";
  workbook::write_file_atomically(real, "kept");
  fs::create_symlink(real, link);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  fs::create_directories(folder);
  for (const auto& [target, kind] : {std::pair{link, "a symlink"}, {fifo, "a pipe"}, {folder, "a folder"}}) {
    CAPTURE(target.string());
    CHECK_THROWS_WITH_AS(workbook::write_file_atomically(target, "new"), doctest::Contains(kind),
                         workbook::UnsafeTarget);
    workbook::FileSet set;
    CHECK_THROWS_AS(set.stage(target, "new"), workbook::UnsafeTarget);
  }
  CHECK(fs::is_symlink(link));
  CHECK(fs::is_fifo(fifo));
  CHECK(fs::is_directory(folder));
  CHECK(workbook::read_file(real) == "kept");
  fs::remove_all(dir);
}

TEST_CASE("a read-only file is refused and left as it was, even for root") {
  const fs::path dir = fs::temp_directory_path() / ("wb-readonly-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "ro.svg";
  workbook::write_file_atomically(file, "precious");
  fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  CHECK_THROWS_WITH_AS(workbook::write_file_atomically(file, "new"), doctest::Contains("read-only"),
                       workbook::UnsafeTarget);
  workbook::FileSet set;
  CHECK_THROWS_AS(set.stage(file, "new"), workbook::UnsafeTarget);
  CHECK(workbook::read_file(file) == "precious");
  CHECK((fs::status(file).permissions() & fs::perms::owner_write) == fs::perms::none);
  fs::remove_all(dir);
}

TEST_CASE("a name too long for the file system is refused before any folder is created") {
  const fs::path dir = fs::temp_directory_path() / ("wb-longname-" + std::to_string(::getpid()));
  const fs::path target = dir / "n1" / "n2" / (std::string(300, 'a') + ".svg");
  CHECK_THROWS_WITH_AS(workbook::write_file_atomically(target, "x"), doctest::Contains("longer than 255 bytes"),
                       std::runtime_error);
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("a FileSet replaces its files together on commit, and none of them without it") {
  const fs::path dir = fs::temp_directory_path() / ("wb-set-" + std::to_string(::getpid()));
  const fs::path a = dir / "t.json", b = dir / "t.txt";
  workbook::write_file_atomically(a, "old a");
  workbook::write_file_atomically(b, "old b");
  {
    workbook::FileSet interrupted;
    interrupted.stage(a, "new a");
    interrupted.stage(b, "new b");
  }  // dropped before commit, as an exception between the writes would
  CHECK(workbook::read_file(a) == "old a");
  CHECK(workbook::read_file(b) == "old b");
  int entries = 0;
  for (auto& e : fs::directory_iterator(dir)) entries += e.is_regular_file();
  CHECK(entries == 2);  // no temporary left
  workbook::FileSet set;
  set.stage(a, "new a");
  set.stage(b, "new b");
  CHECK(workbook::read_file(a) == "old a");  // staged, not yet visible
  set.commit();
  CHECK(workbook::read_file(a) == "new a");
  CHECK(workbook::read_file(b) == "new b");
  fs::remove_all(dir);
}

TEST_CASE("a name of up to 255 bytes can be written: the temporary's name is cut to fit") {
  const fs::path dir = fs::temp_directory_path() / ("wb-long-" + std::to_string(::getpid()));
  const fs::path target = dir / (std::string(250, 'n') + ".svg");
  workbook::write_file_atomically(target, "long");
  CHECK(workbook::read_file(target) == "long");
  int entries = 0;
  for (auto& e : fs::directory_iterator(dir)) entries += e.is_regular_file();
  CHECK(entries == 1);
  fs::remove_all(dir);
}

TEST_CASE("two sets committed into one folder at once never interleave: each set lands whole") {
  const fs::path dir = fs::temp_directory_path() / ("wb-race-" + std::to_string(::getpid()));
  const std::vector<fs::path> files{dir / "t.json", dir / "t.txt", dir / "t.csv", dir / "t.svg"};
  for (const auto& f : files) workbook::write_file_atomically(f, "start");
  int mixed = 0;
  for (int round = 0; round < 100; ++round) {
    auto write_set = [&](const std::string& author) {
      workbook::FileSet set;
      for (const auto& f : files) set.stage(f, author);
      set.commit();
    };
    std::thread a(write_set, "a"), b(write_set, "b");
    a.join();
    b.join();
    const std::string first = workbook::read_file(files[0]);
    for (const auto& f : files) mixed += workbook::read_file(f) != first;
  }
  CHECK(mixed == 0);
  fs::remove_all(dir);
}
