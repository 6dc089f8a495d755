#pragma once
/// \file
/// \brief A small shared-memory tiled GEMM whose epilogue runs before the single store
/// (lesson 07). Readable rather than fast: one output element per thread.

#include <cstdint>

namespace workbook {

/// Edge of the square tiles the kernel stages through shared memory.
constexpr int kGemmTile = 16;

/// Y[M, N] = epilogue(X[M, K] · W[N, K]^T) in row-major storage (W in nn::Linear's layout).
/// Each thread accumulates one output in a register over K / kGemmTile tiles and hands the sum
/// to `epilogue(accumulator, row, col)` before its one store to Y: the bias (and any
/// activation) costs no extra pass over memory. Launch with tiled_gemm_grid/tiled_gemm_block.
template <class Epilogue>
__global__ void tiled_gemm(const float* x, const float* w, float* y, int m, int n, int k, Epilogue epilogue) {
  // +1 column: the inner loop reads w_tile down a column, and the padding keeps those reads on
  // different shared-memory banks.
  __shared__ float x_tile[kGemmTile][kGemmTile];
  __shared__ float w_tile[kGemmTile][kGemmTile + 1];
  const int row = blockIdx.y * kGemmTile + threadIdx.y;
  const int col = blockIdx.x * kGemmTile + threadIdx.x;
  const int w_row = blockIdx.x * kGemmTile + threadIdx.y;  // loads stay coalesced along K
  //! [tiled loop]
  float accumulator = 0.0f;
  for (int k0 = 0; k0 < k; k0 += kGemmTile) {
    const int kk = k0 + threadIdx.x;
    x_tile[threadIdx.y][threadIdx.x] = (row < m && kk < k) ? x[std::int64_t(row) * k + kk] : 0.0f;
    w_tile[threadIdx.y][threadIdx.x] = (w_row < n && kk < k) ? w[std::int64_t(w_row) * k + kk] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kGemmTile; ++i) accumulator += x_tile[threadIdx.y][i] * w_tile[threadIdx.x][i];
    __syncthreads();
  }
  // The epilogue: the bias (and activation) while the sum is still in a register, then one store.
  if (row < m && col < n) y[std::int64_t(row) * n + col] = epilogue(accumulator, row, col);
  //! [tiled loop]
}

/// The grid that covers an [M, N] output with kGemmTile² tiles.
inline dim3 tiled_gemm_grid(int m, int n) {
  return dim3((n + kGemmTile - 1) / kGemmTile, (m + kGemmTile - 1) / kGemmTile);
}

/// One thread per output element of a tile.
inline dim3 tiled_gemm_block() { return dim3(kGemmTile, kGemmTile); }

}  // namespace workbook
