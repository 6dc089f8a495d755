#pragma once
/// \file
/// \brief Wall-clock timing the way the articles measure: warm-up first, interleaved rounds,
/// medians. The one place lessons, checks and the benchmark time things.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <vector>

namespace workbook {

/// The median (the mean of the two middle values for an even count). Throws
/// std::invalid_argument for no values.
template <class T>
double median(std::vector<T> values) {
  if (values.empty()) throw std::invalid_argument("median of no values");
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(mid), values.end());
  const double upper = double(values[mid]);
  if (values.size() % 2 == 1) return upper;
  const double lower = double(*std::max_element(values.begin(), values.begin() + std::ptrdiff_t(mid)));
  return (lower + upper) / 2;
}

/// Microseconds one call of `work` takes, averaged over `calls` calls in a row.
inline double mean_call_us(const std::function<void()>& work, int calls = 1) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) work();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  return std::chrono::duration<double, std::micro>(elapsed).count() / std::max(calls, 1);
}

/// Times several pieces of work against each other: one warm-up round, then `rounds` rounds
/// that run each of them once (`calls` calls in a row), interleaved so all see the same machine
/// state. Returns, per piece of work in order, its µs per call in each round (round r of one
/// piece ran beside round r of the others: compare them pairwise).
inline std::vector<std::vector<double>> interleaved_rounds_us(const std::vector<std::function<void()>>& work, int calls,
                                                              int rounds) {
  std::vector<std::vector<double>> times(work.size());
  for (int round = -1; round < rounds; ++round)
    for (std::size_t w = 0; w < work.size(); ++w) {
      const double us = mean_call_us(work[w], calls);
      if (round >= 0) times[w].push_back(us);
    }
  return times;
}

/// The median µs per call of each piece of work over interleaved rounds (interleaved_rounds_us).
inline std::vector<double> interleaved_median_us(const std::vector<std::function<void()>>& work, int calls,
                                                 int rounds) {
  std::vector<double> medians;
  for (auto& t : interleaved_rounds_us(work, calls, rounds)) medians.push_back(median(std::move(t)));
  return medians;
}

}  // namespace workbook
