#include "workbook_doctest.h"

#include <torch/version.h>

#include "workbook/lesson/machine.h"

TEST_CASE("machine facts are filled in and on one line") {
  const workbook::MachineInfo m = workbook::machine_info();
  CHECK(m.cores >= 1);
  CHECK(m.torch_threads >= 1);
  CHECK(m.torch_version.rfind(std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR), 0) == 0);
  CHECK_FALSE(m.torch_library.empty());
  CHECK_FALSE(m.blas_name.empty());
  const std::string line = workbook::machine_line(m);
  CHECK(line.find("LibTorch " + m.torch_version) != std::string::npos);
  CHECK(line.find(m.kineto ? "Kineto: yes" : "Kineto: no") != std::string::npos);
}
