#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

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
