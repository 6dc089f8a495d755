#pragma once
/// \file
/// \brief Lesson 11's findings: what causal attention written four ways showed in this run.
///
/// The profile findings read the lesson's regions, one per recorded forward: "naive",
/// "naive_inplace", "sdpa_math" and (LibTorch >= 2) "sdpa_flash"; a missing region throws
/// std::invalid_argument. The memory findings take the peaks the lesson measured per forward.

#include <cstdint>
#include <string>
#include <vector>

#include "workbook/findings/finding.h"

namespace workbook::findings11 {

/// Every naive forward's aten::masked_fill copies its input first (an aten::clone with an
/// aten::copy_ beneath it), then fills the copy (aten::masked_fill_).
Finding out_of_place_mask_copies(const Profile& profile);

/// The in-place forwards run aten::masked_fill_ directly: no aten::clone and no aten::masked_fill
/// in any of them, and fewer ops per forward than the naive ones.
Finding in_place_drops_the_copy(const Profile& profile);

/// Every SDPA math forward with is_causal builds its mask again: an aten::ones and an aten::tril
/// beneath each one.
Finding math_rebuilds_the_mask(const Profile& profile);

/// Every SDPA math forward calls aten::_safe_softmax (LibTorch >= 2.5; 1.13 has a plain softmax).
Finding math_uses_safe_softmax(const Profile& profile);

/// Every SDPA flash forward runs one fused op (its name holds "flash_attention") and no aten::bmm,
/// aten::softmax or aten::_safe_softmax.
Finding flash_is_one_fused_op(const Profile& profile);

/// Peak bytes above a forward's start, per sequence length, for one variant.
struct MemoryBySeq {
  std::string variant;                                 ///< "naive", "sdpa_flash", ...
  std::vector<std::int64_t> seqs;                      ///< increasing, each twice the one before
  std::vector<std::int64_t> peak_bytes;                ///< one per seq
  std::vector<std::int64_t> largest_allocation_bytes;  ///< one per seq: the largest single allocation
};

/// From each seq to the next (twice as long) the peak grows at least 3x: the [seq, seq] scores
/// (4x) dominate.
Finding peak_grows_as_seq_squared(const MemoryBySeq& memory);

/// At the longest seq the variant's largest single allocation is smaller than one float32
/// [seq, seq] score matrix per batch and head (`batch_heads` of them): it never materialises the
/// scores. (At short seqs the CPU flash kernel's working buffer, one block per thread sized by seq,
/// head_dim and the thread count, can outweigh a tiny matrix.)
Finding no_seq_squared_buffer(const MemoryBySeq& memory, std::int64_t batch_heads);

/// What in place did to the peak per forward, said as this run shows it: alike at every seq (the
/// saving is the copy's allocation and traffic, not the peak), lower, or not lower.
std::string in_place_peak(const MemoryBySeq& naive, const MemoryBySeq& in_place);

/// A row whose every score is -inf: softmax gives NaN, _safe_softmax gives 0. `plain` and `safe`
/// are what this run's two softmaxes returned for such a row.
Finding safe_softmax_zeroes_masked_rows(const std::vector<float>& plain, const std::vector<float>& safe);

}  // namespace workbook::findings11
