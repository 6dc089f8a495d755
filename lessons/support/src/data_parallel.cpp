#include "workbook/support/data_parallel.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <torch/version.h>
#include <unistd.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

#if TORCH_VERSION_MAJOR < 2
#include <torch/csrc/distributed/c10d/Ops.hpp>
#endif

extern char** environ;

namespace workbook {
namespace {

// The variable's value as an int in [lowest, highest]; `fallback` when it is not set.
int int_variable(const char* name, int lowest, int highest, std::optional<int> fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') {
    if (fallback) return *fallback;
    throw std::invalid_argument(std::string(name) + " is not set (a launcher sets RANK and WORLD_SIZE together)");
  }
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < lowest || value > highest)
    throw std::invalid_argument(std::string(name) + "=" + text + " is not a number in [" + std::to_string(lowest) +
                                ", " + std::to_string(highest) + "]");
  return int(value);
}

// LibTorch >= 2.4 serves the store with libuv by default, and Debian's build has no libuv: the
// classic server instead (the field does not exist before 2.2).
template <typename Options>
auto without_libuv(Options& options, int) -> decltype(options.useLibUV = false, void()) {
  options.useLibUV = false;
}
template <typename Options>
void without_libuv(Options&, long) {}

}  // namespace

std::optional<RankEnv> rank_env_from_environment() {
  if (std::getenv("RANK") == nullptr) return std::nullopt;
  RankEnv env;
  env.world_size = int_variable("WORLD_SIZE", 1, 1 << 20, std::nullopt);
  env.rank = int_variable("RANK", 0, env.world_size - 1, std::nullopt);
  env.local_rank = int_variable("LOCAL_RANK", 0, env.world_size - 1, env.rank);
  env.master_port = int_variable("MASTER_PORT", 1, 65535, 29500);
  if (const char* addr = std::getenv("MASTER_ADDR"); addr != nullptr && *addr != '\0') env.master_addr = addr;
  return env;
}

std::vector<std::string> rank_environment(const RankEnv& env, const std::vector<std::string>& extra) {
  std::vector<std::string> settings = {"RANK=" + std::to_string(env.rank), "LOCAL_RANK=" + std::to_string(env.rank),
                                       "WORLD_SIZE=" + std::to_string(env.world_size), "MASTER_ADDR=" + env.master_addr,
                                       "MASTER_PORT=" + std::to_string(env.master_port)};
  settings.insert(settings.end(), extra.begin(), extra.end());
  std::vector<std::string> result;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const bool replaced = std::any_of(settings.begin(), settings.end(), [&](const std::string& s) {
      return entry.compare(0, s.find('=') + 1, s, 0, s.find('=') + 1) == 0;
    });
    if (!replaced) result.push_back(entry);
  }
  result.insert(result.end(), settings.begin(), settings.end());
  return result;
}

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("cannot open a socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;  // the kernel picks a free one
  socklen_t length = sizeof(address);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  const int error = errno;
  ::close(fd);
  if (!ok) throw std::runtime_error(std::string("cannot find a free port on 127.0.0.1: ") + std::strerror(error));
  return ntohs(address.sin_port);
}

// LibTorch 1.13's ProcessGroupGloo is itself a process group, called through c10d::ops to pass
// the dispatcher; from 2.0 a ProcessGroup holds backends, and its own methods dispatch.
struct Collectives::Group {
  int rank = 0, world_size = 1;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroup> process_group;
  Collectives::StartAllreduce stand_in;  // set instead of the above in a stand-in job
};

Collectives::Collectives(const RankEnv& env, std::chrono::milliseconds timeout) : group_(std::make_unique<Group>()) {
  group_->rank = env.rank;
  group_->world_size = env.world_size;
  c10d::TCPStoreOptions store_options;
  store_options.port = std::uint16_t(env.master_port);
  // Under torchrun's static rendezvous its agent already serves the store on MASTER_PORT and says so
  // in TORCHELASTIC_USE_AGENT_STORE: every rank then connects as a client (torch/distributed/rendezvous.py).
  const char* agent_store = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  store_options.isServer = env.rank == 0 && !(agent_store != nullptr && std::string(agent_store) == "True");
  store_options.numWorkers = std::size_t(env.world_size);
  store_options.timeout = timeout;
  without_libuv(store_options, 0);
  group_->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  // As Python's binding does (torch/csrc/distributed/c10d/init.cpp): GLOO_SOCKET_IFNAME names the
  // network interface; without it Gloo binds to the address this machine's hostname resolves to
  // (falling back to loopback), which across machines must be one the others can reach.
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface != nullptr && *interface != '\0')
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
  else
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  auto gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(group_->store, env.rank, env.world_size, options);
#if TORCH_VERSION_MAJOR < 2
  group_->process_group = gloo;
#else
  auto process_group = c10::make_intrusive<c10d::ProcessGroup>(group_->store, env.rank, env.world_size);
  process_group->setDefaultBackend(c10d::ProcessGroup::BackendType::GLOO);
  process_group->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO, gloo);
  group_->process_group = process_group;
#endif
}

Collectives::Collectives(int rank, int world_size, StartAllreduce start) : group_(std::make_unique<Group>()) {
  if (world_size < 1 || rank < 0 || rank >= world_size || !start)
    throw std::invalid_argument("a stand-in job needs 0 <= rank < world_size and a way to start an all-reduce");
  group_->rank = rank;
  group_->world_size = world_size;
  group_->stand_in = std::move(start);
}

Collectives::~Collectives() = default;

int Collectives::rank() const { return group_->rank; }

int Collectives::world_size() const { return group_->world_size; }

c10::intrusive_ptr<c10d::Work> Collectives::start_allreduce(const torch::Tensor& tensor) {
  if (group_->stand_in) return group_->stand_in(tensor);
  std::vector<at::Tensor> tensors{tensor};
#if TORCH_VERSION_MAJOR < 2
  return c10d::ops::allreduce(group_->process_group, tensors);
#else
  return group_->process_group->allreduce(tensors);
#endif
}

void Collectives::allreduce(const torch::Tensor& tensor) { start_allreduce(tensor)->wait(); }

torch::Tensor shard_rows(const torch::Tensor& batch, int rank, int world_size) {
  const std::int64_t rows = batch.size(0);
  if (world_size < 1 || rank < 0 || rank >= world_size)
    throw std::invalid_argument("rank " + std::to_string(rank) + " is not in a job of " + std::to_string(world_size));
  if (rows % world_size != 0)
    throw std::invalid_argument(std::to_string(rows) + " rows do not split evenly over " + std::to_string(world_size) +
                                " ranks");
  const std::int64_t share = rows / world_size;
  return batch.narrow(0, rank * share, share);
}

void allreduce_each_gradient(Collectives& group, const std::vector<torch::Tensor>& parameters) {
  for (const auto& p : parameters) {
    group.allreduce(p.grad());
    p.grad().div_(group.world_size());
  }
}

void allreduce_one_flat_bucket(Collectives& group, const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> gradients;
  for (const auto& p : parameters) gradients.push_back(p.grad().reshape(-1));
  const torch::Tensor flat = torch::cat(gradients);
  group.allreduce(flat);
  flat.div_(group.world_size());
  std::int64_t offset = 0;
  for (const auto& p : parameters) {
    p.grad().copy_(flat.narrow(0, offset, p.numel()).view_as(p));
    offset += p.numel();
  }
}

std::vector<std::vector<std::size_t>> reverse_order_buckets(const std::vector<torch::Tensor>& parameters,
                                                            std::int64_t bucket_bytes) {
  std::vector<std::vector<std::size_t>> buckets;
  std::int64_t filled = 0;
  for (std::size_t k = parameters.size(); k-- > 0;) {
    const std::int64_t bytes = parameters[k].numel() * std::int64_t(parameters[k].element_size());
    if (buckets.empty() || filled + bytes > bucket_bytes) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(k);
    filled += bytes;
  }
  return buckets;
}

}  // namespace workbook
