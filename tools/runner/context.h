#pragma once
/// \file
/// \brief What every runner command works with: the project, its manifest, the build tree and
/// the learner's progress.

#include <filesystem>
#include <string>
#include <vector>

#include "build.h"
#include "manifest.h"
#include "progress.h"

namespace runner {

/// The project the runner serves (WORKBOOK_ROOT and WORKBOOK_BUILD_DIR, set by ./workbook); the
/// progress lives in WORKBOOK_STATE_DIR if set (the suite's tests), else ROOT/.workbook.
struct Context {
  std::filesystem::path root;
  Manifest manifest;
  Builder builder;
  ProgressStore progress;

  /// From the environment the bootstrap script sets; throws std::runtime_error without it.
  static Context from_environment();
};

/// The first exercise not marked done, or "" when all are.
std::string first_pending(const Context& c);

/// Exports OPENBLAS_CORETYPE for the programs the runner starts when another kernel beats
/// OpenBLAS's own choice by more than 10 % (the probe's --choose), unless it is already set:
/// the user's or the machine's choice always stands. Cached per CPU and BLAS library.
void choose_blas_kernel(const Context& c);

}  // namespace runner
