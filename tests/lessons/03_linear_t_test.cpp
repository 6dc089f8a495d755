// Checks of exercise 03: view or copy, for eight operations, from the tensors and the profile.
#include "workbook_doctest.h"

#include <c10/core/CPUAllocator.h>

#include "03_linear_t.h"
#include "region_observer.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"

namespace {

using Op = std::function<torch::Tensor(const torch::Tensor&)>;

struct Case {
  const char* name;
  Op op;
  bool transposed_input;
  bool expect_view;
};

torch::Tensor input(bool transposed) {
  torch::manual_seed(4);
  return transposed ? torch::randn({64, 48}).t() : torch::randn({48, 64});
}

}  // namespace

TEST_CASE("eight operations: the verdict and its evidence") {
  const Case cases[] = {
      {"t", [](const torch::Tensor& x) { return x.t(); }, false, true},
      {"permute",
       [](const torch::Tensor& x) {
         return x.permute({1, 0});
       },
       false, true},
      {"narrow", [](const torch::Tensor& x) { return x.narrow(0, 5, 10); }, false, true},
      {"expand",
       [](const torch::Tensor& x) {
         return x.narrow(0, 0, 1).expand({8, 64});
       },
       false, true},
      {"expand to more elements than the input has",
       [](const torch::Tensor& x) {
         return x.unsqueeze(0).expand({4, 48, 64});
       },
       false, true},
      {"reshape of a contiguous input",
       [](const torch::Tensor& x) {
         return x.reshape({64, 48});
       },
       false, true},
      {"reshape of a transposed input",
       [](const torch::Tensor& x) {
         return x.reshape({64, 48});
       },
       true, false},
      {"contiguous of a contiguous input", [](const torch::Tensor& x) { return x.contiguous(); }, false, true},
      {"contiguous of a transposed input", [](const torch::Tensor& x) { return x.contiguous(); }, true, false},
      {"clone", [](const torch::Tensor& x) { return x.clone(); }, false, false},
  };
  for (const Case& c : cases) {
    const std::string operation = c.name;
    CAPTURE(operation);
    const torch::Tensor x = input(c.transposed_input);
    const exercises::ViewOrCopy v = exercises::view_or_copy(c.op, x);
    const torch::Tensor out = c.op(x);
    CHECK(v.is_view == c.expect_view);
    CHECK(v.shares_storage == c.expect_view);
    CHECK(v.out_strides == out.strides().vec());
    if (c.expect_view) {
      CHECK(v.copying_ops == 0);
      CHECK(v.bytes_allocated == 0);
    } else {
      CHECK(v.copying_ops >= 1);
      CHECK(v.bytes_allocated >= std::int64_t(out.numel() * out.element_size()));
    }
  }
}

TEST_CASE("the data pointer alone would mislead: narrow is a view that starts further in") {
  const torch::Tensor x = input(false);
  const auto v = exercises::view_or_copy([](const torch::Tensor& t) { return t.narrow(0, 5, 10); }, x);
  CHECK(v.is_view);
  CHECK_FALSE(v.same_data_ptr);
  const auto e = exercises::view_or_copy([](const torch::Tensor& t) { return t.narrow(0, 0, 1).expand({8, 64}); }, x);
  CHECK(e.out_strides == std::vector<std::int64_t>{0, 1});  // expand repeats a row by a zero stride
  const auto t = exercises::view_or_copy([](const torch::Tensor& a) { return a.t(); }, x);
  CHECK(t.same_data_ptr);
  CHECK(t.out_strides == std::vector<std::int64_t>{1, 64});
  // The same address, not the same offset: t() of an input that itself starts further in starts
  // where it does; a clone starts at offset 0 of a storage of its own, never at the input's address.
  const torch::Tensor inner = x.narrow(0, 5, 10);
  CHECK(exercises::view_or_copy([](const torch::Tensor& a) { return a.t(); }, inner).same_data_ptr);
  CHECK_FALSE(exercises::view_or_copy([](const torch::Tensor& a) { return a.clone(); }, x).same_data_ptr);
  // The op runs once: its profile is the call's, not two calls'.
  int calls = 0;
  (void)exercises::view_or_copy(
      [&calls](const torch::Tensor& a) {
        ++calls;
        return a.t();
      },
      x);
  CHECK(calls == 1);
}

TEST_CASE("a view that reinterprets the dtype starts at the same address, at another element offset") {
  // Rows 5..14 of a [48, 64] float tensor start at element 320; viewed as bytes the same start is
  // element 1280. The address is the same, the offsets in elements are not.
  const torch::Tensor inner = input(false).narrow(0, 5, 10);
  const auto v = exercises::view_or_copy([](const torch::Tensor& t) { return t.view(torch::kByte); }, inner);
  CHECK(v.shares_storage);
  CHECK(v.same_data_ptr);
  CHECK(v.is_view);
  CHECK(v.out_strides == std::vector<std::int64_t>{256, 1});
}

TEST_CASE("the op's own region named op is inside the call's: what lies beneath it counts once") {
  // The op opens a region of its own, also named "op" (nothing in the contract forbids it), after
  // a t() so that the profile keeps it (an only child of the same name folds into its parent, as
  // Python's tree does): the clone beneath both regions is one clone, counted as the same op
  // without the inner region is.
  const torch::Tensor x = input(false);
  const auto plain = exercises::view_or_copy([](const torch::Tensor& t) { return t.t().clone(); }, x);
  const auto nested = exercises::view_or_copy(
      [](const torch::Tensor& t) {
        const torch::Tensor transposed = t.t();
        workbook::Region inner("op");
        return transposed.clone();
      },
      x);
  REQUIRE(plain.copying_ops > 0);
  CHECK(nested.copying_ops == plain.copying_ops);
  CHECK(nested.bytes_allocated == plain.bytes_allocated);
  CHECK_FALSE(nested.is_view);
  // The copy made before the op opens its region is beneath the call too: the call's region is
  // the outermost one, not the last one named "op".
  const auto copied_first = exercises::view_or_copy(
      [](const torch::Tensor& t) {
        const torch::Tensor copy = t.t().clone();
        workbook::Region inner("op");
        return copy;
      },
      x);
  CHECK(copied_first.copying_ops == plain.copying_ops);
  CHECK(copied_first.bytes_allocated == plain.bytes_allocated);
  CHECK_FALSE(copied_first.is_view);
  // An inner "op" region one level further down (op -> phase -> op) is still inside the call's.
  const auto deeper = exercises::view_or_copy(
      [](const torch::Tensor& t) {
        const torch::Tensor transposed = t.t();
        workbook::Region phase("phase");
        workbook::Region inner("op");
        return transposed.clone();
      },
      x);
  CHECK(deeper.copying_ops == plain.copying_ops);
  CHECK(deeper.bytes_allocated == plain.bytes_allocated);
}

TEST_CASE("a free beneath the call is no allocation: a view that drops an older tensor is a view") {
  // The first call keeps a copy while memory is recorded; the second drops it and returns t(). Its
  // profile holds that free (negative bytes), and nothing beneath it copies or allocates.
  const torch::Tensor x = input(false);
  torch::Tensor held;
  (void)exercises::view_or_copy(
      [&held](const torch::Tensor& t) {
        held = t.clone();
        return t.t();
      },
      x);
  const auto dropped = exercises::view_or_copy(
      [&held](const torch::Tensor& t) {
        held = torch::Tensor();
        return t.t();
      },
      x);
  CHECK(dropped.copying_ops == 0);
  CHECK(dropped.bytes_allocated == 0);
  CHECK(dropped.is_view);
}

TEST_CASE("bytes are counted in 64 bits: a view returned beside a 4 GiB scratch buffer is no view") {
  // torch::empty reserves the buffer's pages without touching them: 4 GiB of address space, not of
  // memory. Counted in 32 bits the allocation wraps to 0 and the call looks free.
  const std::int64_t four_gib = std::int64_t(1) << 32;
  const auto v = exercises::view_or_copy(
      [four_gib](const torch::Tensor& t) {
        const torch::Tensor scratch = torch::empty({four_gib}, torch::kUInt8);
        return t.t();
      },
      input(false));
  CHECK(v.bytes_allocated >= four_gib);
  CHECK(v.shares_storage);
  CHECK_FALSE(v.is_view);
}

TEST_CASE("storage, not the input's own elements, decides: a view of a view may start past them") {
  // The input is a narrow (every row's columns 8..15 of a [64, 16] base); selecting its row 40
  // gives a view that starts at the base's element 648, past the input's first 512 elements.
  torch::manual_seed(4);
  const torch::Tensor base = torch::randn({64, 16});
  const torch::Tensor columns = base.narrow(1, 8, 8);
  const auto v = exercises::view_or_copy([](const torch::Tensor& t) { return t.select(0, 40); }, columns);
  CHECK(v.shares_storage);
  CHECK(v.is_view);
}

TEST_CASE("storage decides, not autograd's view tracking: detach() shares the storage and is no autograd view") {
  const torch::Tensor x = input(false).requires_grad_(true);
  REQUIRE_FALSE(x.detach().is_view());  // what makes Tensor::is_view() the wrong evidence
  const auto v = exercises::view_or_copy([](const torch::Tensor& t) { return t.detach(); }, x);
  CHECK(v.shares_storage);
  CHECK(v.same_data_ptr);
  CHECK(v.is_view);
}

TEST_CASE("an empty tensor's copy shares no storage, though both data pointers are null") {
  const torch::Tensor empty = torch::empty({0, 64});
  const auto copy = exercises::view_or_copy([](const torch::Tensor& t) { return t.clone(); }, empty);
  CHECK_FALSE(copy.shares_storage);
  CHECK_FALSE(copy.same_data_ptr);  // null == null, but in two storages: no same start
  CHECK_FALSE(copy.is_view);
  const auto view = exercises::view_or_copy([](const torch::Tensor& t) { return t.t(); }, empty);
  CHECK(view.shares_storage);
  CHECK(view.same_data_ptr);
  CHECK(view.is_view);  // no elements, but a view all the same: shared, nothing copied or allocated
}

TEST_CASE("the call runs once inside one region named op, as the contract says") {
  const testing::RegionObserver observer("op", "", {});
  (void)exercises::view_or_copy([](const torch::Tensor& a) { return a.t(); }, input(false));
  CHECK(observer.steps() == 1);
}

TEST_CASE("the profile tells what the tensors cannot: a hidden copy beside a view, two copies in a row") {
  const torch::Tensor x = input(false);
  // The result is a view of the input, yet the call copied the whole input on the way.
  const auto hidden = exercises::view_or_copy(
      [](const torch::Tensor& t) {
        const torch::Tensor scratch = t.clone();
        return t.t();
      },
      x);
  CHECK(hidden.shares_storage);
  CHECK(hidden.copying_ops >= 1);
  CHECK(hidden.bytes_allocated >= std::int64_t(x.numel() * x.element_size()));
  CHECK_FALSE(hidden.is_view);
  // Each kind of evidence counts on its own: an allocation without a copy, a copy without an
  // allocation (into a buffer made before the call) — the result is a view both times, the call is not.
  const auto allocates = exercises::view_or_copy(
      [](const torch::Tensor& t) {
        const torch::Tensor scratch = torch::empty_like(t);
        return t.t();
      },
      x);
  CHECK(allocates.shares_storage);
  CHECK(allocates.copying_ops == 0);
  CHECK(allocates.bytes_allocated >= std::int64_t(x.numel() * x.element_size()));
  CHECK_FALSE(allocates.is_view);
  // A view allocates nothing: a scratch buffer far smaller than the output is an allocation too.
  const auto small_scratch = exercises::view_or_copy(
      [](const torch::Tensor& t) {
        const torch::Tensor scratch = torch::empty({4}, t.options());
        return t.t();
      },
      x);
  CHECK(small_scratch.shares_storage);
  CHECK(small_scratch.bytes_allocated > 0);
  CHECK_FALSE(small_scratch.is_view);
  torch::Tensor buffer = torch::empty_like(x);
  const auto copies = exercises::view_or_copy(
      [&buffer](const torch::Tensor& t) {
        buffer.copy_(t);
        return t.t();
      },
      x);
  CHECK(copies.shares_storage);
  CHECK(copies.copying_ops >= 1);
  CHECK(copies.bytes_allocated == 0);
  CHECK_FALSE(copies.is_view);
  // Any op's allocation counts, not only an aten::empty*'s: a product made and thrown away
  // (allocated beneath aten::mul) beside a view. And the input itself handed back, after a hidden
  // copy, is no view either (trial 19).
  const auto product = exercises::view_or_copy(
      [](const torch::Tensor& t) {
        const torch::Tensor scratch = t * 2;
        return t.t();
      },
      x);
  CHECK(product.bytes_allocated >= std::int64_t(x.numel() * x.element_size()));
  CHECK_FALSE(product.is_view);
  // An allocation beneath the call outside every op (the allocator called directly, as a custom
  // kernel or an extension does): beneath the call too (trial 41).
  const auto raw = exercises::view_or_copy(
      [](const torch::Tensor& t) {
        const c10::DataPtr scratch = c10::GetCPUAllocator()->allocate(4096);
        return t.t();
      },
      x);
  CHECK(raw.bytes_allocated >= 4096);
  CHECK_FALSE(raw.is_view);
  const auto itself = exercises::view_or_copy(
      [](const torch::Tensor& t) {
        const torch::Tensor scratch = t.clone();
        return t;
      },
      x);
  CHECK(itself.shares_storage);
  CHECK(itself.copying_ops >= 1);
  CHECK_FALSE(itself.is_view);
  // Two copies show twice the copying ops and twice the bytes of one: counted, not inferred.
  const auto once = exercises::view_or_copy([](const torch::Tensor& t) { return t.clone(); }, x);
  const auto twice = exercises::view_or_copy([](const torch::Tensor& t) { return t.clone().clone(); }, x);
  REQUIRE(once.copying_ops >= 1);
  CHECK(twice.copying_ops == 2 * once.copying_ops);
  CHECK(twice.bytes_allocated == 2 * once.bytes_allocated);
}

TEST_CASE("copying ops are counted as the contract names them, and a new tensor is no view") {
  const torch::Tensor x = input(false);
  // The test's own count of aten::copy_, aten::clone and aten::_to_copy beneath each call.
  auto counted = [&](const Op& op) {
    workbook::Session session;
    {
      workbook::Region region("op");
      op(x);
    }
    const auto p = session.finish();
    std::int64_t n = 0;
    for (auto r : p.find("op"))
      for (const char* name : {"aten::copy_", "aten::clone", "aten::_to_copy"})
        n += std::int64_t(p.count_under(r, name));
    return n;
  };
  for (const auto& [name, op] : std::vector<std::pair<std::string, Op>>{
           {"clone", [](const torch::Tensor& t) { return t.clone(); }},
           // aten::contiguous itself copies nothing: the clone and the copy_ beneath it do.
           {"contiguous of a transpose", [](const torch::Tensor& t) { return t.t().contiguous(); }},
           {"to float64", [](const torch::Tensor& t) { return t.to(torch::kDouble); }},
           // aten::to to the dtype it has returns the input itself: no aten::_to_copy, nothing copied.
           {"to its own dtype", [](const torch::Tensor& t) { return t.to(t.scalar_type()); }},
           // A name with "copy" in it is not one of the three: copysign computes a new tensor.
           {"copysign", [](const torch::Tensor& t) { return t.copysign(t); }}}) {
    CAPTURE(name);
    CHECK(exercises::view_or_copy(op, x).copying_ops == counted(op));
  }
  CHECK(exercises::view_or_copy([](const torch::Tensor& t) { return t.to(t.scalar_type()); }, x).is_view);
  // x * 1 and empty_like make a new tensor without any copying op, and a tensor that already
  // existed shares nothing with the input and costs nothing: none of them is a view of it.
  const torch::Tensor unrelated = torch::randn({4, 4});
  for (const auto& [name, op] : std::vector<std::pair<std::string, Op>>{
           {"x * 1", [](const torch::Tensor& t) { return t * 1; }},
           {"empty_like", [](const torch::Tensor& t) { return torch::empty_like(t); }},
           {"another tensor", [&unrelated](const torch::Tensor&) { return unrelated; }}}) {
    CAPTURE(name);
    const auto v = exercises::view_or_copy(op, x);
    CHECK_FALSE(v.shares_storage);
    CHECK_FALSE(v.is_view);
  }
}
