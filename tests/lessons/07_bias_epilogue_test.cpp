// Checks of exercise 07 on the CPU: the epilogue a GEMM kernel runs before its one store. The
// same apply_epilogue runs inside a real kernel in the GPU suite (tests/gpu).
#include "workbook_doctest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <sys/mman.h>

#include "07_bias_epilogue.h"

namespace {

using exercises::Activation;
using exercises::BiasEpilogue;

std::vector<float> to_vector(const torch::Tensor& t) {
  const torch::Tensor c = t.contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

torch::Tensor from_vector(const std::vector<float>& v, std::int64_t rows, std::int64_t cols) {
  return torch::from_blob(const_cast<float*>(v.data()), {rows, cols}, torch::kFloat).clone();
}

// torch's own answer, the way nn::Linear and the articles' MLP compute it.
torch::Tensor reference(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, Activation activation) {
  const torch::Tensor y = torch::addmm(b, x, w.t());
  if (activation == Activation::relu) return torch::relu(y);
  if (activation == Activation::gelu_tanh) return torch::gelu(y, "tanh");
  return y;
}

// A buffer of `count` floats reserved, not filled: the pages a check writes are the only memory it
// takes (12 GiB reserved costs a few KiB). Fails the check when the system refuses the reservation.
class ReservedFloats {
 public:
  explicit ReservedFloats(std::size_t count) : bytes_(count * sizeof(float)) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : static_cast<float*>(p);
  }
  ~ReservedFloats() {
    if (data_) munmap(data_, bytes_);
  }
  ReservedFloats(const ReservedFloats&) = delete;
  ReservedFloats& operator=(const ReservedFloats&) = delete;
  float* data() const { return data_; }

 private:
  std::size_t bytes_;
  float* data_ = nullptr;
};

}  // namespace

TEST_CASE("the epilogue adds bias[col] exactly once, whatever the row") {
  const std::vector<float> bias{0.5f, -1.25f, 3.0f, 10.0f};
  const BiasEpilogue epilogue{bias.data(), Activation::none};
  REQUIRE_NOTHROW(exercises::apply_epilogue(0.0f, 0, 0, epilogue));
  for (int row : {0, 1, 7, 1000})
    for (int col = 0; col < int(bias.size()); ++col)
      CHECK(exercises::apply_epilogue(2.0f, row, col, epilogue) == doctest::Approx(2.0f + bias[col]));
}

TEST_CASE("K = 0: every accumulator is an empty sum, so each output is its activated bias (as addmm gives)") {
  const std::vector<float> bias{0.5f, -1.25f, 3.0f};
  const std::vector<float> none;  // X is [2, 0] and W is [3, 0]: no products at all
  const std::vector<float> y =
      exercises::gemm_with_epilogue(none, none, 2, 3, 0, BiasEpilogue{bias.data(), Activation::relu});
  REQUIRE(y.size() == 6);
  for (int row = 0; row < 2; ++row)
    for (int col = 0; col < 3; ++col) {
      CAPTURE(row);
      CAPTURE(col);
      CHECK(y[std::size_t(row * 3 + col)] == doctest::Approx(std::max(bias[std::size_t(col)], 0.0f)));
    }
  // With a residual: still added last, K = 0 or not (an empty sum changes nothing else).
  const std::vector<float> residual{10.0f, 20.0f, 30.0f, 40.0f, 50.0f, 60.0f};
  BiasEpilogue with_residual{bias.data(), Activation::relu};
  with_residual.residual = residual.data();
  with_residual.residual_stride = 3;
  const std::vector<float> y_residual = exercises::gemm_with_epilogue(none, none, 2, 3, 0, with_residual);
  REQUIRE(y_residual.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(y_residual[i] == doctest::Approx(std::max(bias[i % 3], 0.0f) + residual[i]));
  }
}

TEST_CASE("relu and gelu_tanh come after the bias, and keep a NaN as torch does") {
  const std::vector<float> bias{-3.0f, 0.0f, 1.0f};
  const torch::Tensor values = torch::linspace(-4.0, 4.0, 33);
  REQUIRE_NOTHROW(exercises::apply_epilogue(0.0f, 0, 0, {bias.data(), Activation::relu}));
  for (int col = 0; col < 3; ++col)
    for (std::int64_t i = 0; i < values.numel(); ++i) {
      const float acc = values[i].item<float>();
      const torch::Tensor v = torch::tensor(acc + bias[col]);
      CHECK(exercises::apply_epilogue(acc, 0, col, {bias.data(), Activation::relu}) ==
            doctest::Approx(torch::relu(v).item<float>()));
      // Within float's own rounding: a constant cut short (0.7979 for sqrt(2/pi)) is off by 5e-6.
      CHECK(exercises::apply_epilogue(acc, 0, col, {bias.data(), Activation::gelu_tanh}) ==
            doctest::Approx(torch::gelu(v, "tanh").item<float>()).epsilon(1e-6));
    }
  // A NaN accumulator stays NaN through every activation, as in torch::relu and torch::gelu.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  REQUIRE(std::isnan(torch::relu(torch::tensor(nan)).item<float>()));
  for (Activation activation : {Activation::none, Activation::relu, Activation::gelu_tanh}) {
    CAPTURE(int(activation));  // 0 none, 1 relu, 2 gelu_tanh
    CHECK(std::isnan(exercises::apply_epilogue(nan, 0, 1, {bias.data(), activation})));
  }
  // A NaN with its sign bit set (x86's default NaN, from 0 * inf or inf - inf) is a NaN too; and
  // relu and gelu_tanh of an infinity are what torch gives: relu 0 for -inf, +inf for +inf; gelu_tanh
  // +inf for +inf and NaN for -inf (the formula's 0.5 v (1 + tanh(..)) is -inf * 0 there: a gelu
  // that saturates to 0 past some |v| answers 0). bias[1] is 0.
  const float negative_nan = std::copysign(nan, -1.0f);
  REQUIRE(std::isnan(torch::relu(torch::tensor(negative_nan)).item<float>()));
  CHECK(std::isnan(exercises::apply_epilogue(negative_nan, 0, 1, {bias.data(), Activation::relu})));
  const float infinity = std::numeric_limits<float>::infinity();
  for (float acc : {-infinity, infinity}) {
    CAPTURE(acc);
    const float want = torch::relu(torch::tensor(acc)).item<float>();
    CHECK(exercises::apply_epilogue(acc, 0, 1, {bias.data(), Activation::relu}) == want);
    const float gelu_want = torch::gelu(torch::tensor(acc), "tanh").item<float>();
    REQUIRE(std::isnan(gelu_want) == (acc < 0));  // the test's premise, from torch itself
    const float gelu_got = exercises::apply_epilogue(acc, 0, 1, {bias.data(), Activation::gelu_tanh});
    if (acc < 0)
      CHECK(std::isnan(gelu_got));
    else
      CHECK(gelu_got == gelu_want);
  }
  // Large finite values are finite numbers too: torch's gelu_tanh gives v itself near FLT_MAX (v³
  // overflows inside tanh's argument, harmlessly), and -0 far below. Halving last, v·(1 + tanh)/2,
  // overflows to +inf past FLT_MAX / 2.
  const float largest = std::numeric_limits<float>::max();
  for (float acc : {2e38f, 3e38f, largest, -3e38f, -largest}) {
    CAPTURE(acc);
    const float want = torch::gelu(torch::tensor(acc), "tanh").item<float>();
    REQUIRE(std::isfinite(want));
    CHECK(exercises::apply_epilogue(acc, 0, 1, {bias.data(), Activation::gelu_tanh}) == want);
  }
}

TEST_CASE("gelu_tanh's tail is tiny but not 0 down to v = -5, as torch's float gelu (trial 33)") {
  // Between -5 and -4 gelu is -3e-7 to -7e-5: below the absolute 1e-6 the check above allows near 0,
  // so a gelu that saturates to 0 early passes it. Torch's float formula is still negative there, and
  // so is every faithful float version of it (and the exact sigmoid form). Their rounding differs by up
  // to a few ulps of tanh near -1 (2^-24 each, times 0.5·|v|): that much is allowed, 0 is not.
  const std::vector<float> zero_bias{0.0f};
  for (int i = 0; i <= 16; ++i) {
    const float v = -5.0f + float(i) / 16.0f;  // exact in float
    CAPTURE(v);
    const float want = torch::gelu(torch::tensor(v), "tanh").item<float>();
    REQUIRE(want < 0.0f);
    const float got = exercises::apply_epilogue(v, 0, 0, {zero_bias.data(), Activation::gelu_tanh});
    CHECK(got < 0.0f);
    CHECK(std::fabs(got - want) <= std::fabs(v) * std::ldexp(1.0f, -22));
  }
}

TEST_CASE("gelu_tanh just below saturation, v in [4, 6]: a few ulps from torch's, not v itself") {
  // 1 - tanh there is 1e-5 to 1e-10, so gelu(v) falls short of v by up to 5e-6 at 4.5: ten ulps of
  // the result, more than the relative 1e-6 above allows for at |v| = 4.5. Faithful float versions
  // (and the exact sigmoid form) stay within |v|·2^-22 of torch's, as in the tail below -4.
  const std::vector<float> zero_bias{0.0f};
  for (int i = 0; i <= 128; ++i) {
    const float v = 4.0f + float(i) / 64.0f;  // exact in float
    CAPTURE(v);
    const float want = torch::gelu(torch::tensor(v), "tanh").item<float>();
    const float got = exercises::apply_epilogue(v, 0, 0, {zero_bias.data(), Activation::gelu_tanh});
    CHECK(std::fabs(got - want) <= v * std::ldexp(1.0f, -22));
  }
}

TEST_CASE("a GEMM with the epilogue matches torch's addmm (and its activations)") {
  torch::manual_seed(7);
  const std::vector<float> one{1.0f};
  REQUIRE_NOTHROW(exercises::gemm_with_epilogue(one, one, 1, 1, 1, {one.data(), Activation::none}));
  struct Shape {
    int m, n, k;
  };
  // k with every remainder modulo 4 and 8 (an unrolled loop must finish the leftover elements).
  for (const Shape shape : std::initializer_list<Shape>{
           {1, 1, 1}, {5, 3, 17}, {4, 5, 18}, {3, 2, 19}, {2, 7, 66}, {6, 3, 15}, {33, 20, 64}}) {
    const int m = shape.m, n = shape.n, k = shape.k;
    const torch::Tensor x = torch::randn({m, k}), w = torch::randn({n, k}), b = torch::randn({n});
    const std::vector<float> bias = to_vector(b);
    for (Activation activation : {Activation::none, Activation::relu, Activation::gelu_tanh}) {
      INFO("m=" << m << " n=" << n << " k=" << k << " activation=" << int(activation));
      const std::vector<float> y =
          exercises::gemm_with_epilogue(to_vector(x), to_vector(w), m, n, k, {bias.data(), activation});
      REQUIRE(y.size() == std::size_t(m) * std::size_t(n));
      CHECK(testing::all_close(from_vector(y, m, n), reference(x, w, b, activation)));
    }
  }
}

TEST_CASE("each call reads the values given now: the same buffers changed in place give a new result (trial 46)") {
  std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f}, w{3.0f, 4.0f, -1.0f, 0.5f}, bias{0.5f, -0.25f};
  const auto torch_answer = [&] {
    return reference(from_vector(x, 2, 2), from_vector(w, 2, 2), from_vector(bias, 1, 2).view({2}), Activation::none);
  };
  const std::vector<float> first = exercises::gemm_with_epilogue(x, w, 2, 2, 2, {bias.data(), Activation::none});
  CHECK(testing::all_close(from_vector(first, 2, 2), torch_answer()));
  x[0] = 10.0f;  // the same vectors, the same sizes, new values
  w[3] = -2.0f;
  bias[1] = 7.0f;
  const std::vector<float> second = exercises::gemm_with_epilogue(x, w, 2, 2, 2, {bias.data(), Activation::none});
  CHECK(testing::all_close(from_vector(second, 2, 2), torch_answer()));
}

TEST_CASE("a residual is added last, per row and column: y = act(x W^T + b) + r") {
  torch::manual_seed(8);
  const int m = 6, n = 5, k = 12;
  const torch::Tensor x = torch::randn({m, k}), w = torch::randn({n, k}), b = torch::randn({n}),
                      r = torch::randn({m, n});
  const std::vector<float> bias = to_vector(b), residual = to_vector(r);
  for (Activation activation : {Activation::none, Activation::relu, Activation::gelu_tanh}) {
    INFO("activation=" << int(activation));
    BiasEpilogue epilogue{bias.data(), activation, residual.data(), n};
    const std::vector<float> y = exercises::gemm_with_epilogue(to_vector(x), to_vector(w), m, n, k, epilogue);
    CHECK(testing::all_close(from_vector(y, m, n), reference(x, w, b, activation) + r));
  }
  // A residual with a row stride wider than N (a slice of a larger tensor).
  const torch::Tensor wide = torch::randn({m, n + 3});
  const std::vector<float> wide_values = to_vector(wide);
  BiasEpilogue strided{bias.data(), Activation::relu, wide_values.data(), n + 3};
  const std::vector<float> y = exercises::gemm_with_epilogue(to_vector(x), to_vector(w), m, n, k, strided);
  CHECK(testing::all_close(from_vector(y, m, n), reference(x, w, b, Activation::relu) + wide.narrow(1, 0, n)));
  // A row stride of 0 repeats one row, as a stride-0 (expanded) torch view does: never read as "packed".
  const torch::Tensor one_row = torch::randn({1, n});
  const std::vector<float> one_row_values = to_vector(one_row);
  BiasEpilogue repeated{bias.data(), Activation::none, one_row_values.data(), 0};
  const std::vector<float> y0 = exercises::gemm_with_epilogue(to_vector(x), to_vector(w), m, n, k, repeated);
  CHECK(testing::all_close(from_vector(y0, m, n), reference(x, w, b, Activation::none) + one_row.expand({m, n})));
  // Without a residual nothing is added.
  CHECK(exercises::apply_epilogue(1.0f, 3, 0, {bias.data(), Activation::none}) == doctest::Approx(1.0f + bias[0]));
}

TEST_CASE("apply_epilogue itself adds the residual: the GPU kernel calls it, not the CPU loop") {
  const std::vector<float> bias{0.5f, -1.0f, 2.0f};
  std::vector<float> residual(4 * 5);
  for (std::size_t i = 0; i < residual.size(); ++i) residual[i] = 10.0f * float(i);
  const BiasEpilogue epilogue{bias.data(), Activation::relu, residual.data(), 5};  // rows 5 apart, 3 used
  for (int row = 0; row < 4; ++row)
    for (int col = 0; col < 3; ++col) {
      CAPTURE(row);
      CAPTURE(col);
      CHECK(exercises::apply_epilogue(1.0f, row, col, epilogue) ==
            doctest::Approx(std::max(1.0f + bias[std::size_t(col)], 0.0f) + residual[std::size_t(row * 5 + col)]));
    }
}

TEST_CASE("the residual pointer says whether there is one: a one-row residual may have stride 0") {
  const std::vector<float> bias{0.5f, -1.0f, 2.0f};
  const std::vector<float> row{10.0f, 20.0f, 30.0f};
  // One row broadcast down the columns' rows by a stride of 0: still a residual, added.
  const BiasEpilogue one_row{bias.data(), Activation::none, row.data(), 0};
  for (int r = 0; r < 3; ++r)
    for (int col = 0; col < 3; ++col) {
      CAPTURE(r);
      CAPTURE(col);
      CHECK(exercises::apply_epilogue(1.0f, r, col, one_row) ==
            doctest::Approx(1.0f + bias[std::size_t(col)] + row[std::size_t(col)]));
    }
  // No residual, whatever the stride says: nothing is read or added.
  const BiasEpilogue none{bias.data(), Activation::none, nullptr, 5};
  CHECK(exercises::apply_epilogue(1.0f, 2, 1, none) == doctest::Approx(1.0f + bias[1]));
}

namespace {

// Five residual rows `stride` elements apart in reserved memory (each row's first two values set,
// and the element before each row a sentinel an offset rounded down would read): apply_epilogue
// must read every row where row * stride says.
void check_rows_read_where_the_stride_says(int stride) {
  constexpr int rows = 5;
  const ReservedFloats buffer((rows - 1) * std::size_t(stride) + 2);
  REQUIRE_MESSAGE(buffer.data() != nullptr, "this check reserves "
                                                << (rows - 1) * std::size_t(stride) * 4 / (1 << 20)
                                                << " MiB of address space (5 pages used); mmap refused");
  const std::vector<float> bias{0.5f, -1.0f};
  for (int row = 0; row < rows; ++row) {
    const std::size_t start = std::size_t(row) * stride;
    if (row > 0) buffer.data()[start - 1] = -1000.0f;
    for (int col = 0; col < 2; ++col) buffer.data()[start + col] = 100.0f * float(row) + float(col);
  }
  const BiasEpilogue epilogue{bias.data(), Activation::none, buffer.data(), stride};
  for (int row = 0; row < rows; ++row)
    for (int col = 0; col < 2; ++col) {
      CAPTURE(row);
      CAPTURE(col);
      CHECK(exercises::apply_epilogue(1.0f, row, col, epilogue) ==
            doctest::Approx(1.0f + bias[std::size_t(col)] + 100.0f * float(row) + float(col)));
    }
}

}  // namespace

TEST_CASE("a residual's rows may lie far apart: row * stride past 2^31 and 2^32 elements is read where it says") {
  // Rows 2^30 elements apart in one 16 GiB reservation (a view of a few rows of a large tensor):
  // row 2 starts at element 2^31, one past what an int holds, and row 4 at 2^32, one past what 32
  // unsigned bits hold (an index in unsigned wraps back to row 0 there).
  check_rows_read_where_the_stride_says(1 << 30);
}

TEST_CASE("an odd row stride is read exactly: row * stride is an integer index, exact past 2^24 (trial 33)") {
  // A float holds every integer only up to 2^24: with a stride of 2^24 + 1, row 1's offset rounds to
  // 2^24 in float and reads the element before it (320 MiB reserved).
  check_rows_read_where_the_stride_says((1 << 24) + 1);
}
