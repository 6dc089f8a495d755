#include "workbook/findings/11_attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace workbook::findings11 {
namespace {

// Every region named `region`; throws when there is none, so a missing variant is never "zero ops".
std::vector<EventId> forwards(const Profile& p, std::string_view region) {
  auto ids = p.find(region);
  if (ids.empty()) throw std::invalid_argument("no event named '" + std::string(region) + "' in this profile");
  return ids;
}

// How many of the forwards named `region` satisfy `holds`.
template <typename Predicate>
std::size_t forwards_where(const Profile& p, std::string_view region, Predicate holds) {
  const auto ids = forwards(p, region);
  return std::size_t(std::count_if(ids.begin(), ids.end(), holds));
}

// cpu ops beneath one forward.
std::size_t ops_in(const Profile& p, EventId forward) {
  std::size_t n = 0;
  for (EventId d : p.descendants(forward)) n += p[d].category == Category::cpu_op;
  return n;
}

double mean_ops(const Profile& p, std::string_view region) {
  const auto ids = forwards(p, region);
  double sum = 0;
  for (EventId id : ids) sum += double(ops_in(p, id));
  return sum / double(ids.size());
}

// Each peak over the one before (seqs doubling); empty when fewer than two.
std::vector<double> growth(const MemoryBySeq& m) {
  std::vector<double> out;
  for (std::size_t k = 1; k < m.peak_bytes.size() && k < m.seqs.size(); ++k)
    out.push_back(m.peak_bytes[k - 1] > 0 ? double(m.peak_bytes[k]) / double(m.peak_bytes[k - 1]) : 0.0);
  return out;
}

std::string growth_evidence(const MemoryBySeq& m) {
  std::string out = m.variant + ":";
  for (std::size_t k = 0; k < m.seqs.size() && k < m.peak_bytes.size(); ++k)
    out += fmt::format(" seq {} {:.1f} KiB", m.seqs[k], double(m.peak_bytes[k]) / 1024.0);
  for (double g : growth(m)) out += fmt::format(", x{:.2f}", g);
  return out;
}

}  // namespace

Finding out_of_place_mask_copies(const Profile& p) {
  const std::size_t n = forwards(p, "naive").size();
  const std::size_t copying = forwards_where(p, "naive", [&](EventId f) {
    for (EventId fill : p.under(f, "aten::masked_fill"))
      for (EventId clone : p.under(fill, "aten::clone"))
        if (p.count_under(clone, "aten::copy_") >= 1 && p.count_under(fill, "aten::masked_fill_") >= 1) return true;
    return false;
  });
  return {
      n > 0 && copying == n,
      "the out-of-place masked_fill copies the scores first (aten::clone -> aten::copy_), then fills the copy "
      "in place (aten::masked_fill_): the hidden copy Part 3 found as a sixth kernel",
      fmt::format("naive forwards with aten::masked_fill -> aten::clone -> aten::copy_ and a masked_fill_: {} of {}",
                  copying, n)};
}

Finding in_place_drops_the_copy(const Profile& p) {
  const std::size_t n = forwards(p, "naive_inplace").size();
  const std::size_t clean = forwards_where(p, "naive_inplace", [&](EventId f) {
    return p.count_under(f, "aten::clone") == 0 && p.count_under(f, "aten::masked_fill") == 0 &&
           p.count_under(f, "aten::masked_fill_") == 1;
  });
  const double naive = mean_ops(p, "naive"), in_place = mean_ops(p, "naive_inplace");
  return {clean == n && in_place < naive,
          "masked_fill_ in place removes the copy: no aten::clone, and fewer ops per forward",
          fmt::format("in-place forwards without clone or masked_fill: {} of {}; ops per forward: naive {:.0f}, "
                      "in-place {:.0f}",
                      clean, n, naive, in_place)};
}

Finding math_rebuilds_the_mask(const Profile& p) {
  const std::size_t n = forwards(p, "sdpa_math").size();
  const std::size_t rebuilt = forwards_where(p, "sdpa_math", [&](EventId f) {
    return p.count_under(f, "aten::ones") >= 1 && p.count_under(f, "aten::tril") >= 1;
  });
  return {rebuilt == n,
          "SDPA's math path builds the causal mask again on every call (aten::ones -> aten::tril beneath each "
          "forward), though the mask never changes",
          fmt::format("math forwards with an aten::ones and an aten::tril: {} of {}", rebuilt, n)};
}

Finding math_uses_safe_softmax(const Profile& p) {
  const std::size_t n = forwards(p, "sdpa_math").size();
  const std::size_t safe =
      forwards_where(p, "sdpa_math", [&](EventId f) { return p.count_under(f, "aten::_safe_softmax") >= 1; });
  return {safe == n, "SDPA's math path calls aten::_safe_softmax, not a plain softmax",
          fmt::format("math forwards with aten::_safe_softmax: {} of {}", safe, n)};
}

Finding flash_is_one_fused_op(const Profile& p) {
  const std::size_t n = forwards(p, "sdpa_flash").size();
  const std::size_t fused = forwards_where(p, "sdpa_flash", [&](EventId f) {
    std::size_t flash = 0;
    for (EventId d : p.descendants(f)) flash += p[d].name.find("flash_attention") != std::string::npos;
    return flash == 1 && p.count_under(f, "aten::bmm") == 0 && p.count_under(f, "aten::softmax") == 0 &&
           p.count_under(f, "aten::_safe_softmax") == 0;
  });
  return {fused == n, "SDPA's flash path is one fused op per forward: no separate GEMM (aten::bmm) and no softmax op",
          fmt::format("flash forwards with one flash_attention op and no bmm or softmax: {} of {}", fused, n)};
}

Finding peak_grows_as_seq_squared(const MemoryBySeq& m) {
  const auto g = growth(m);
  const bool holds = !g.empty() && std::all_of(g.begin(), g.end(), [](double x) { return x >= 3.0; });
  return {holds,
          m.variant + "'s peak memory per forward grows about 4x when seq doubles: the [seq, seq] scores dominate",
          growth_evidence(m)};
}

Finding no_seq_squared_buffer(const MemoryBySeq& m, std::int64_t batch_heads) {
  const std::size_t n = std::min(m.seqs.size(), m.largest_allocation_bytes.size());
  std::string evidence = m.variant + "'s largest allocation:";
  for (std::size_t k = 0; k < n; ++k)
    evidence += fmt::format(" seq {} {:.1f} KiB of {:.1f} KiB scores", m.seqs[k],
                            double(m.largest_allocation_bytes[k]) / 1024.0,
                            double(4 * batch_heads * m.seqs[k] * m.seqs[k]) / 1024.0);
  // Decided at the longest seq: at short ones a kernel's blocks can outweigh a tiny matrix.
  const bool holds = n > 0 && n == m.seqs.size() &&
                     m.largest_allocation_bytes[n - 1] < 4 * batch_heads * m.seqs[n - 1] * m.seqs[n - 1];
  return {holds,
          m.variant +
              " never allocates the [seq, seq] scores: at the longest seq its largest allocation is below one "
              "score matrix (at short ones its working buffer, one block per thread sized by seq, head_dim and the "
              "thread count, can be larger)",
          evidence};
}

std::string in_place_peak(const MemoryBySeq& naive, const MemoryBySeq& in_place) {
  if (naive.peak_bytes.empty() || naive.peak_bytes.size() != in_place.peak_bytes.size())
    throw std::invalid_argument("in_place_peak: the two variants were not measured at the same seqs");
  if (naive.peak_bytes == in_place.peak_bytes)
    return "Here the two peak alike at every seq: the in-place version saves the copy's allocation and its pass "
           "over memory, not the peak";
  const std::size_t last = naive.peak_bytes.size() - 1;
  const double saved_kib = double(naive.peak_bytes[last] - in_place.peak_bytes[last]) / 1024.0;
  if (saved_kib > 0)
    return fmt::format("Here the in-place version peaks {:.1f} KiB lower at seq {}", saved_kib, naive.seqs[last]);
  return fmt::format("Here the in-place version does not peak lower: {:.1f} KiB against {:.1f} at seq {}",
                     double(in_place.peak_bytes[last]) / 1024.0, double(naive.peak_bytes[last]) / 1024.0,
                     naive.seqs[last]);
}

Finding safe_softmax_zeroes_masked_rows(const std::vector<float>& plain, const std::vector<float>& safe) {
  const bool plain_nan =
      !plain.empty() && std::all_of(plain.begin(), plain.end(), [](float x) { return std::isnan(x); });
  const bool safe_zero = !safe.empty() && std::all_of(safe.begin(), safe.end(), [](float x) { return x == 0.0f; });
  auto row = [](const std::vector<float>& r) {
    std::string out;
    for (float x : r) out += fmt::format("{}{}", out.empty() ? "" : ", ", x);
    return "[" + out + "]";
  };
  return {plain_nan && safe_zero,
          "on a row whose every score is -inf, softmax gives NaN and _safe_softmax gives 0 (a query with nothing "
          "to attend to contributes nothing instead of poisoning the output)",
          fmt::format("softmax {}, _safe_softmax {}", row(plain), row(safe))};
}

}  // namespace workbook::findings11
