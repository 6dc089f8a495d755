#pragma once
/// \file
/// \brief Lesson 06's real compiler: models compiled ahead of time by Python's AOTInductor
/// (`torch._inductor.aoti_compile_and_package`), loaded and run from C++ with LibTorch 2.6's
/// `torch::inductor::AOTIModelPackageLoader`.

#include <torch/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace workbook {

/// Whether this build can load AOTInductor packages (LibTorch 2.6 or later with the loader).
bool aot_inductor_built();

/// The two models lesson 06 compiles: its Linear(features, features) run on [rows, features], and
/// the GeGLU MLP (bias-free gate, up: dim -> hidden, down: hidden -> dim) run on [tokens, dim].
struct AotiRequest {
  std::int64_t rows = 0;      ///< the Linear's input rows
  std::int64_t features = 0;  ///< the Linear's width
  std::int64_t tokens = 0;    ///< the MLP's input rows
  std::int64_t dim = 0;       ///< the MLP's width
  std::int64_t hidden = 0;    ///< the MLP's hidden width
  /// The weights, by name: "linear.weight", "linear.bias", "mlp.gate.weight", "mlp.up.weight",
  /// "mlp.down.weight" (float32). The packages are compiled with exactly these.
  std::vector<std::pair<std::string, torch::Tensor>> weights;
};

/// What the compile step left in its cache folder.
struct AotiPackages {
  std::filesystem::path folder;  ///< the cache entry
  std::filesystem::path linear;  ///< linear.pt2
  std::filesystem::path mlp;     ///< mlp.pt2
  std::string linear_code;       ///< the generated C++ of the Linear's package
  std::string mlp_code;          ///< the generated C++ of the MLP's package
  double compile_seconds = 0;    ///< Python's time for both (when they were compiled)
  bool cached = false;           ///< found in the cache, not compiled by this call
  std::string python_torch;      ///< torch.__version__ of the python3 that compiled them
  std::string vector_isa;        ///< the ISA Inductor vectorised for ("avx2"), empty for none
};

/// Compiles both models with python3's torch (lessons/support/aoti/compile_models.py) into a cache
/// keyed by the LibTorch version, the shapes and the weights' bytes (the build folder's
/// aoti-cache, or $WORKBOOK_AOTI_CACHE), or finds them there. One process compiles at a time (a
/// lock file). Throws std::runtime_error with one line saying what is missing: the loader, a
/// python3 with torch of this LibTorch's version, or a compile that failed (naming its log).
AotiPackages build_aoti_packages(const AotiRequest& request);

/// A package loaded for running (one input tensor, one output).
class AotiModel {
 public:
  /// Loads the package; throws std::runtime_error when this build has no loader.
  explicit AotiModel(const std::filesystem::path& package);
  ~AotiModel();
  AotiModel(const AotiModel&) = delete;
  AotiModel& operator=(const AotiModel&) = delete;
  /// Runs the compiled model on `x` (the shape it was compiled for).
  torch::Tensor run(const torch::Tensor& x);

 private:
  struct Loader;
  std::unique_ptr<Loader> loader_;
};

/// The lines of generated code worth reading: each line containing one of `needles`, with its
/// number, at most `limit` lines.
std::vector<std::string> code_lines_with(const std::string& code, const std::vector<std::string>& needles,
                                         std::size_t limit = 12);

}  // namespace workbook
