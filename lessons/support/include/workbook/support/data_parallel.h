#pragma once
/// \file
/// \brief Data-parallel training by hand on c10d (lesson 12 and exercise 12): the job's ranks from
/// a launcher's environment, a Gloo process group, each rank's shard of the batch, and two ways of
/// averaging the gradients after backward (the third, overlapped with backward, is exercise 12).

#include <torch/types.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace workbook {

/// Where this process sits in a job: the variables a launcher such as torchrun sets.
struct RankEnv {
  int rank = 0;                           ///< RANK: this process, 0 .. world_size - 1
  int world_size = 1;                     ///< WORLD_SIZE: processes in the job
  int local_rank = 0;                     ///< LOCAL_RANK: this process among those on its machine
  std::string master_addr = "127.0.0.1";  ///< MASTER_ADDR: where rank 0 serves the rendezvous store
  int master_port = 29500;                ///< MASTER_PORT
};

/// RankEnv from RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT; std::nullopt when RANK
/// is not set (no launcher started this process). Throws std::invalid_argument naming a variable
/// whose value is not a number in range.
std::optional<RankEnv> rank_env_from_environment();

/// What a launcher hands the rank it starts: this process's environment ("NAME=value") with RANK,
/// LOCAL_RANK (= RANK), WORLD_SIZE, MASTER_ADDR and MASTER_PORT set from `env`, and each of `extra`
/// ("NAME=value"), in place of any value it had.
std::vector<std::string> rank_environment(const RankEnv& env, const std::vector<std::string>& extra = {});

/// A TCP port on 127.0.0.1 that nothing listens on now, chosen by the kernel (a launcher hands it
/// to its ranks as MASTER_PORT; another program may still take it before rank 0 does).
int free_local_port();

/// The job's ranks over Gloo: a TCPStore at master_addr:master_port for the rendezvous (rank 0
/// serves it, unless torchrun's agent does: TORCHELASTIC_USE_AGENT_STORE=True), then a process
/// group on the interface GLOO_SOCKET_IFNAME names (else the address the hostname resolves to),
/// whose collectives go through the dispatcher as Python's `dist.all_reduce` does: the profiler
/// records `c10d::allreduce_` on the caller's thread, and `gloo:all_reduce` on a Gloo worker thread
/// from the moment the worker starts the all-reduce until this rank has the sum.
class Collectives {
 public:
  /// Joins the job: blocks until every rank has joined. Every wait (the rendezvous, a collective)
  /// gives up after `timeout` with an exception, and so does a collective whose peer died.
  Collectives(const RankEnv& env, std::chrono::milliseconds timeout);
  /// How a stand-in job starts an all-reduce: what start_allreduce returns.
  using StartAllreduce = std::function<c10::intrusive_ptr<c10d::Work>(const torch::Tensor&)>;
  /// A stand-in job for tests: this process is `rank` of `world_size`, and every all-reduce is
  /// `start` (no process group, no store, no profiler records of its own). Its Work decides when
  /// the sum is in, so a test can make an earlier all-reduce finish after a later one.
  Collectives(int rank, int world_size, StartAllreduce start);
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  /// This process's rank.
  int rank() const;
  /// Ranks in the job.
  int world_size() const;
  /// Starts summing `tensor` in place over all ranks and returns at once; call `wait()` on the
  /// result before reading the tensor. Every rank must start the same all-reduces in the same order.
  c10::intrusive_ptr<c10d::Work> start_allreduce(const torch::Tensor& tensor);
  /// start_allreduce, then waits for it.
  void allreduce(const torch::Tensor& tensor);

 private:
  struct Group;
  std::unique_ptr<Group> group_;
};

/// This rank's rows of `batch`: rows [rank·B/n, (rank+1)·B/n) for B rows and n ranks. Throws
/// std::invalid_argument when B is not a multiple of n (the shards would differ in size, and their
/// mean losses would no longer average to the whole batch's).
torch::Tensor shard_rows(const torch::Tensor& batch, int rank, int world_size);

/// Way 1 — after backward, each parameter's gradient all-reduced on its own, waiting for each
/// before the next starts, then divided by the world size: one collective per parameter, none of
/// it overlapping computation.
void allreduce_each_gradient(Collectives& group, const std::vector<torch::Tensor>& parameters);

/// Way 2 — after backward, every gradient copied into one flat buffer, one all-reduce of it, then
/// copied back divided by the world size: one collective, still after backward.
void allreduce_one_flat_bucket(Collectives& group, const std::vector<torch::Tensor>& parameters);

/// Which parameters share a bucket, DDP-like: walking the parameters in reverse (the order backward
/// usually produces their gradients), each bucket takes parameters until the next would pass
/// `bucket_bytes` (a parameter larger than that gets a bucket of its own). Indices into
/// `parameters`; bucket 0 is usually the first whose gradients backward finishes. (DDP itself packs
/// up to its cap and reverses, splits by dtype and device, and after its first step rebuilds the
/// buckets in the order the gradients were really produced: 1 MiB first, then 25 MiB.)
std::vector<std::vector<std::size_t>> reverse_order_buckets(const std::vector<torch::Tensor>& parameters,
                                                            std::int64_t bucket_bytes);

}  // namespace workbook
