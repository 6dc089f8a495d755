#include "workbook/support/aot_inductor.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/session.h"

#if WORKBOOK_HAVE_AOTI
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#endif

namespace workbook {

namespace fs = std::filesystem;

bool aot_inductor_built() { return WORKBOOK_HAVE_AOTI != 0; }

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// FNV-1a over bytes: the cache key only has to tell different requests apart.
struct Fnv1a {
  std::uint64_t value = 1469598103934665603ull;
  void add(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) value = (value ^ p[i]) * 1099511628211ull;
  }
  void add(const std::string& text) { add(text.data(), text.size()); }
};

// Holds an exclusive lock on a file for its lifetime (the cache is shared by concurrent runs).
class FileLock {
 public:
  explicit FileLock(const fs::path& path) : fd_(::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) throw std::runtime_error("cannot lock " + path.string());
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

std::string without_local_suffix(const std::string& version) { return version.substr(0, version.find('+')); }

std::string last_line(const std::string& text) {
  std::istringstream lines(text);
  std::string line, last;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  return last;
}

AotiPackages read_entry(const fs::path& folder, bool cached) {
  const auto result = nlohmann::json::parse(read_text(folder / "result.json"));
  AotiPackages p;
  p.folder = folder;
  p.linear = folder / "linear.pt2";
  p.mlp = folder / "mlp.pt2";
  p.linear_code = read_text(folder / "linear_code.txt");
  p.mlp_code = read_text(folder / "mlp_code.txt");
  p.compile_seconds = result["seconds"]["linear"].get<double>() + result["seconds"]["mlp"].get<double>();
  p.python_torch = result["torch"].get<std::string>();
  p.vector_isa = result.value("vector_isa", "");
  p.cached = cached;
  return p;
}

}  // namespace

AotiPackages build_aoti_packages(const AotiRequest& request) {
  if (!aot_inductor_built())
    throw std::runtime_error(fmt::format(
        "LibTorch {} has no AOTInductor package loader (it needs LibTorch 2.6 or later)", libtorch_version()));
  const fs::path script = WORKBOOK_AOTI_SCRIPT;
  const char* cache_env = std::getenv("WORKBOOK_AOTI_CACHE");
  const fs::path cache = cache_env && *cache_env ? fs::path(cache_env) : fs::path(WORKBOOK_AOTI_CACHE_DIR);

  nlohmann::json description;
  description["linear"] = {{"rows", request.rows}, {"features", request.features}};
  description["mlp"] = {{"tokens", request.tokens}, {"dim", request.dim}, {"hidden", request.hidden}};
  std::string weights;
  for (const auto& [name, tensor] : request.weights) {
    const torch::Tensor t = tensor.detach().to(torch::kFloat).contiguous();
    description["tensors"].push_back({{"name", name}, {"shape", t.sizes().vec()}});
    weights.append(static_cast<const char*>(t.data_ptr()), std::size_t(t.numel()) * sizeof(float));
  }
  Fnv1a key;
  key.add(libtorch_version());
  key.add(description.dump());
  key.add(weights);
  key.add(read_text(script));
  const fs::path entry = cache / fmt::format("{:016x}", key.value);

  fs::create_directories(cache);
  const FileLock lock(cache / ".lock");
  if (fs::exists(entry / "result.json")) return read_entry(entry, true);

  if (std::system("command -v python3 >/dev/null 2>&1") != 0)
    throw std::runtime_error("no python3 on PATH: AOTInductor compiles from Python (python3 with torch " +
                             without_local_suffix(libtorch_version()) + ")");
  const fs::path work = cache / fmt::format("{:016x}.tmp.{}", key.value, ::getpid());
  fs::remove_all(work);
  fs::create_directories(work);
  write_file_atomically(work / "request.json", description.dump(2));
  write_file_atomically(work / "weights.bin", weights);
  const fs::path log = cache / fmt::format("{:016x}.log", key.value);
  // Kernel profiling makes each generated kernel record itself (RECORD_FUNCTION) in the profile.
  const std::string command = fmt::format("TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE=1 python3 '{}' '{}' >'{}' 2>&1",
                                          script.string(), work.string(), log.string());
  if (std::system(command.c_str()) != 0) {
    fs::remove_all(work);
    throw std::runtime_error(
        fmt::format("the AOTInductor compile failed (log: {}): {}", log.string(), last_line(read_text(log))));
  }
  const auto result = nlohmann::json::parse(read_text(work / "result.json"));
  const std::string python_torch = result["torch"].get<std::string>();
  if (without_local_suffix(python_torch) != without_local_suffix(libtorch_version())) {
    fs::remove_all(work);
    throw std::runtime_error(
        fmt::format("python3's torch is {}, this LibTorch {}: a package runs only on the version "
                    "that compiled it",
                    python_torch, libtorch_version()));
  }
  fs::rename(work, entry);
  return read_entry(entry, false);
}

#if WORKBOOK_HAVE_AOTI
struct AotiModel::Loader {
  explicit Loader(const fs::path& package) : loader(package.string()) {}
  torch::inductor::AOTIModelPackageLoader loader;
};

AotiModel::AotiModel(const fs::path& package) : loader_(std::make_unique<Loader>(package)) {}

torch::Tensor AotiModel::run(const torch::Tensor& x) { return loader_->loader.run({x}).at(0); }
#else
struct AotiModel::Loader {};

AotiModel::AotiModel(const fs::path&) {
  throw std::runtime_error(fmt::format("LibTorch {} has no AOTInductor package loader", libtorch_version()));
}

torch::Tensor AotiModel::run(const torch::Tensor&) { throw std::logic_error("AotiModel: no loader"); }
#endif

AotiModel::~AotiModel() = default;

std::vector<std::string> code_lines_with(const std::string& code, const std::vector<std::string>& needles,
                                         std::size_t limit) {
  std::vector<std::string> found;
  std::istringstream lines(code);
  std::string line;
  for (std::size_t number = 1; std::getline(lines, line) && found.size() < limit; ++number)
    for (const std::string& needle : needles)
      if (line.find(needle) != std::string::npos) {
        const auto start = line.find_first_not_of(' ');
        found.push_back(fmt::format("{:5}  {}", number, start == std::string::npos ? line : line.substr(start)));
        break;
      }
  return found;
}

}  // namespace workbook
