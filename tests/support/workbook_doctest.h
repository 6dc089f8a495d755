#pragma once
// Include this, never <doctest/doctest.h>, in tests that see LibTorch headers.
//
// LibTorch's headers define a global CHECK (glog's in Debian's build, c10's own elsewhere) that
// aborts the process when its condition is false. Whichever definition comes last wins, so a
// test that included doctest first would abort on its first failing CHECK instead of reporting
// it. Here LibTorch comes first, its CHECK family is removed, and doctest's takes the names.
// tests/support/failing_check_probe.cpp proves it.
#include <torch/types.h>

#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LE
#undef CHECK_LT
#undef CHECK_GE
#undef CHECK_GT
#undef CHECK_NOTNULL
#undef CHECK_STREQ
#undef CHECK_STRNE
#undef CHECK_STRCASEEQ
#undef CHECK_STRCASENE
#undef CHECK_DOUBLE_EQ
#undef CHECK_NEAR

#include <doctest/doctest.h>

#include <ostream>
#include <sstream>
#include <string>

namespace testing {

/// torch::allclose with its evidence: a failing CHECK(all_close(a, b)) prints the largest
/// difference and where it is, so a learner can tell a slightly-off formula from a wrong tensor.
struct Closeness {
  bool close = false;
  std::string evidence;  ///< "largest difference 0.03 at element 17 (tolerance 1e-4 + 1e-4 x |b|)"
  explicit operator bool() const { return close; }
};

inline std::ostream& operator<<(std::ostream& out, const Closeness& c) {
  return out << (c.close ? "close" : "not close") << ": " << c.evidence;
}

inline Closeness all_close(const torch::Tensor& a, const torch::Tensor& b, double rtol = 1e-4, double atol = 1e-4) {
  std::ostringstream evidence;
  if (a.sizes() != b.sizes()) {
    evidence << "shapes differ: " << a.sizes() << " vs " << b.sizes();
    return {false, evidence.str()};
  }
  // In complex double for complex tensors: a cast to a real dtype would drop the imaginary parts.
  const auto wide = a.is_complex() || b.is_complex() ? torch::kComplexDouble : torch::kDouble;
  const torch::Tensor difference = (a.to(wide) - b.to(wide)).abs().flatten();
  const auto at = difference.numel() > 0 ? difference.argmax().item<std::int64_t>() : 0;
  evidence << "largest difference " << (difference.numel() > 0 ? difference[at].item<double>() : 0.0) << " at element "
           << at << " of " << difference.numel() << " (tolerance " << atol << " + " << rtol << " x |b|)";
  return {torch::allclose(a, b, rtol, atol), evidence.str()};
}

}  // namespace testing
