// Checks of exercise 06: the compiled GeGLU MLP on real profiles, and its cache under what a
// training loop does (Dynamo's rules: metadata and identity are guarded, values are not).
#include "workbook_doctest.h"

#include "06_compile.h"
#include "workbook/profiler/session.h"

namespace nn = torch::nn;
using workbook::CacheOptions;

namespace {

struct Mlp {
  nn::Linear gate{nullptr}, up{nullptr}, down{nullptr};
  Mlp() {
    torch::manual_seed(3);
    gate = nn::Linear(nn::LinearOptions(16, 32).bias(false));
    up = nn::Linear(nn::LinearOptions(16, 32).bias(false));
    down = nn::Linear(nn::LinearOptions(32, 16).bias(false));
  }
  torch::Tensor eager(const torch::Tensor& x) {
    return down->forward(torch::gelu(gate->forward(x), "tanh") * up->forward(x));
  }
  exercises::CompiledGegluMlp compiled(CacheOptions options = {}) const { return {gate, up, down, options}; }
};

testing::Closeness same(const torch::Tensor& a, const torch::Tensor& b) { return testing::all_close(a, b); }

// Three compiled calls on `x`, each a ProfilerStep, recorded.
workbook::Profile three_calls(exercises::CompiledGegluMlp& compiled, const torch::Tensor& x) {
  workbook::Session session;
  for (int i = 0; i < 3; ++i) {
    torch::Tensor y = compiled.forward(x);
    session.step();
  }
  return session.finish();
}

// Each weight's gradient of run().square().sum(), taken alone (gradients cleared before and after):
// an undefined tensor where the backward never reached the weight.
template <class Run>
std::vector<torch::Tensor> weight_gradients(const std::vector<nn::Linear>& layers, Run run) {
  for (const auto& layer : layers) layer->weight.mutable_grad() = torch::Tensor();
  run().square().sum().backward();
  std::vector<torch::Tensor> gradients;
  for (const auto& layer : layers) {
    gradients.push_back(layer->weight.grad());
    layer->weight.mutable_grad() = torch::Tensor();
  }
  return gradients;
}

// The compiled call's gradients equal eager's, weight by weight (0 gate, 1 up, 2 down).
void check_same_gradients(const std::vector<torch::Tensor>& compiled, const std::vector<torch::Tensor>& eager) {
  for (std::size_t i = 0; i < compiled.size(); ++i) {
    CAPTURE(i);
    REQUIRE_MESSAGE(compiled[i].defined(), "the backward reached no weight");
    CHECK(same(compiled[i], eager[i]));
  }
}

}  // namespace

TEST_CASE("compiled forward: eager's values, and per call 3 aten::mm, one fused kernel, no aten::t") {
  torch::NoGradGuard no_grad;
  Mlp m;
  auto compiled = m.compiled();
  const auto x = torch::randn({8, 16});
  CHECK(same(compiled.forward(x), m.eager(x)));
  const auto p = three_calls(compiled, x);
  CHECK(p.count("aten::mm") == 9);
  CHECK(p.count("aten::matmul") == 0);  // bare GEMMs: matmul would dispatch to the same mm, one layer up
  CHECK(p.count("workbook::fused_gelu_mul") == 3);
  // The weights were transposed once, when the entry compiled: no call transposes them again,
  // under any name.
  for (const std::string transposing :
       {"aten::t", "aten::transpose", "aten::permute", "aten::contiguous", "aten::as_strided"}) {
    CAPTURE(transposing);
    CHECK(p.count(transposing) == 0);
  }
  CHECK(p.count("aten::gelu") == 0);
  CHECK(compiled.entries() == 1);
}

TEST_CASE("with grad on, a call is the same compiled path: 3 aten::mm, one fused_gelu_mul, no aten::t") {
  Mlp m;
  auto compiled = m.compiled();
  const auto x = torch::randn({8, 16});
  compiled.forward(x);  // the entry is compiled (its one-off transposes) before the recording
  const auto p = three_calls(compiled, x);
  CHECK(p.count("aten::mm") == 9);
  CHECK(p.count("workbook::fused_gelu_mul") == 3);
  CHECK(p.count("aten::t") == 0);
  // While autograd records, the fused op runs its differentiable twin beneath its own name: a gelu
  // may run, but only there.
  std::size_t gelus_outside = p.count("aten::gelu");
  for (auto fused : p.find("workbook::fused_gelu_mul")) gelus_outside -= p.count_under(fused, "aten::gelu");
  CHECK(gelus_outside == 0);
}

TEST_CASE("a training loop's in-place steps never recompile, a replaced weight does") {
  Mlp m;
  auto compiled = m.compiled();
  const auto x = torch::randn({8, 16});
  for (int step = 0; step < 4; ++step) {
    torch::NoGradGuard no_grad;
    CHECK(same(compiled.forward(x), m.eager(x)));
    m.up->weight.sub_(0.01 * torch::ones_like(m.up->weight));  // SGD-like, in place
  }
  CHECK(compiled.entries() == 1);
  torch::NoGradGuard no_grad;
  const torch::Tensor original = m.down->weight;
  m.down->weight = torch::randn_like(m.down->weight);
  CHECK(same(compiled.forward(x), m.eager(x)));
  CHECK(compiled.entries() == 2);
  // The original weight put back: the first entry serves again, with its own prepared weights.
  m.down->weight = original;
  CHECK(same(compiled.forward(x), m.eager(x)));
  CHECK(compiled.entries() == 2);
}

TEST_CASE("trained through: with grad on, every weight gets eager's gradient, step after step, from one entry") {
  Mlp m;
  auto compiled = m.compiled();
  const auto x = torch::randn({8, 16}) * 4;
  const std::vector<nn::Linear> layers{m.gate, m.up, m.down};
  for (int step = 0; step < 3; ++step) {
    CAPTURE(step);
    const auto eager = weight_gradients(layers, [&] { return m.eager(x); });
    const auto ours = weight_gradients(layers, [&] { return compiled.forward(x); });
    check_same_gradients(ours, eager);
    torch::NoGradGuard no_grad;
    for (std::size_t i = 0; i < layers.size(); ++i) layers[i]->weight.sub_(0.01 * ours[i]);  // SGD, in place
  }
  CHECK(compiled.entries() == 1);
}

TEST_CASE("an evaluation first, then training: the grad-off entry never serves a call with grad on") {
  Mlp m;
  auto compiled = m.compiled();
  const auto x = torch::randn({8, 16}) * 4;
  torch::Tensor evaluated;
  {
    torch::NoGradGuard no_grad;  // e.g. a validation pass before the first training step
    evaluated = compiled.forward(x);
    CHECK(same(evaluated, m.eager(x)));
  }
  // Eager's output under NoGradGuard is an ordinary tensor: a later computation with grad on may
  // save it for backward. An inference tensor (c10::InferenceMode) would be refused there.
  CHECK(!evaluated.is_inference());
  CHECK_NOTHROW((evaluated * m.gate->weight.sum()).sum().backward());
  m.gate->weight.mutable_grad() = torch::Tensor();
  const std::vector<nn::Linear> layers{m.gate, m.up, m.down};
  const auto eager = weight_gradients(layers, [&] { return m.eager(x); });
  const auto ours = weight_gradients(layers, [&] { return compiled.forward(x); });
  check_same_gradients(ours, eager);
  CHECK(compiled.entries() == 2);  // grad mode is guarded: one entry for each
}

TEST_CASE("an input that requires grad is another specialisation, as Dynamo guards it, and gets eager's gradient") {
  Mlp m;
  auto compiled = m.compiled();
  const auto x = torch::randn({8, 16});
  compiled.forward(x);
  const auto ours = x.clone().requires_grad_(true);
  compiled.forward(ours).square().sum().backward();
  CHECK(compiled.entries() == 2);
  const auto eager = x.clone().requires_grad_(true);
  m.eager(eager).square().sum().backward();
  REQUIRE_MESSAGE(ours.grad().defined(), "the backward reached no input");
  CHECK(same(ours.grad(), eager.grad()));
}

TEST_CASE("past the size limit the eager call is trained through too: every weight gets eager's gradient") {
  Mlp m;
  CacheOptions one_entry;
  one_entry.cache_size_limit = 1;
  one_entry.warn_at_limit = false;  // reached on purpose: a passing check prints no warning
  auto compiled = m.compiled(one_entry);
  compiled.forward(torch::randn({8, 16})).sum().backward();  // the one entry, for a contiguous input
  const auto x = (torch::randn({16, 8}) * 4).t();            // another layout: past the limit, eager
  const std::vector<nn::Linear> layers{m.gate, m.up, m.down};
  const auto eager = weight_gradients(layers, [&] { return m.eager(x); });
  const auto ours = weight_gradients(layers, [&] { return compiled.forward(x); });
  CHECK(compiled.eager_fallbacks() == 1);
  check_same_gradients(ours, eager);
}

TEST_CASE("past the size limit the eager call uses the weights as they are now, not an entry's prepared ones") {
  // Trial 31: an eager fallback that reused entry 0's transposed weights passed every check above.
  CacheOptions one_entry;
  one_entry.cache_size_limit = 1;
  one_entry.warn_at_limit = false;  // reached on purpose: a passing check prints no warning
  const auto x = torch::randn({8, 16}) * 4;
  {
    // A weight replaced once the one entry is taken: its guard misses, the cache is full, and the
    // call runs eager with the new weight.
    Mlp m;
    auto compiled = m.compiled(one_entry);
    torch::NoGradGuard no_grad;
    compiled.forward(x);
    m.down->weight = torch::randn_like(m.down->weight);
    CHECK(same(compiled.forward(x), m.eager(x)));
    CHECK(compiled.eager_fallbacks() == 1);
  }
  // The one entry taken by an evaluation (grad off), then a training call past the limit: trained
  // through to every weight, although the entry's weights were prepared without autograd.
  Mlp m;
  auto compiled = m.compiled(one_entry);
  {
    torch::NoGradGuard no_grad;
    compiled.forward(x);
  }
  const std::vector<nn::Linear> layers{m.gate, m.up, m.down};
  const auto eager = weight_gradients(layers, [&] { return m.eager(x); });
  const auto ours = weight_gradients(layers, [&] { return compiled.forward(x); });
  CHECK(compiled.eager_fallbacks() == 1);
  check_same_gradients(ours, eager);
}

TEST_CASE("calls that alternate between two compiled entries transpose nothing: each entry keeps its own weights") {
  torch::NoGradGuard no_grad;
  Mlp m;
  auto compiled = m.compiled();
  const auto x = torch::randn({8, 16});
  const torch::Tensor original = m.down->weight, replaced = torch::randn_like(m.down->weight);
  CHECK(same(compiled.forward(x), m.eager(x)));  // entry 0
  m.down->weight = replaced;
  CHECK(same(compiled.forward(x), m.eager(x)));  // entry 1
  REQUIRE(compiled.entries() == 2);
  std::vector<torch::Tensor> outputs;
  workbook::Session session;
  for (int i = 0; i < 4; ++i) {
    m.down->weight = i % 2 == 0 ? original : replaced;
    outputs.push_back(compiled.forward(x));
    session.step();
  }
  const auto p = session.finish();
  CHECK(p.count("aten::mm") == 12);
  for (const std::string transposing : {"aten::t", "aten::transpose", "aten::contiguous", "aten::item"}) {
    CAPTURE(transposing);
    CHECK(p.count(transposing) == 0);
  }
  CHECK(compiled.entries() == 2);
  for (int i = 0; i < 4; ++i) {
    m.down->weight = i % 2 == 0 ? original : replaced;
    CHECK(same(outputs[std::size_t(i)], m.eager(x)));
  }
}

TEST_CASE("a weight replaced before the first call: the first entry is compiled from the weights it guards") {
  torch::NoGradGuard no_grad;
  Mlp m;
  auto compiled = m.compiled();
  m.gate->weight = torch::randn_like(m.gate->weight);
  const auto x = torch::randn({8, 16});
  CHECK(same(compiled.forward(x), m.eager(x)));
  CHECK(compiled.entries() == 1);
}

TEST_CASE(
    "a replaced weight that is a transposed view is read by its strides, as the Linear reads it, step after step") {
  torch::NoGradGuard no_grad;
  Mlp m;
  auto compiled = m.compiled();
  const auto x = torch::randn({8, 16});
  CHECK(same(compiled.forward(x), m.eager(x)));
  m.down->weight = torch::randn({32, 16}).t();  // [16, 32] with strides (1, 16): not row-major
  m.gate->weight = torch::randn({16, 32}).t();  // [32, 16] with strides (1, 32)
  CHECK(same(compiled.forward(x), m.eager(x)));
  CHECK(compiled.entries() == 2);
  // A training step on those strided weights, in place: the same entry serves the next call and
  // sees the new values (a copy packed when the entry was compiled would not).
  m.down->weight.mul_(-3);
  m.gate->weight.add_(1);
  CHECK(same(compiled.forward(x), m.eager(x)));
  CHECK(compiled.entries() == 2);
}

TEST_CASE("a new batch recompiles once and then the batch is dynamic; a new layout recompiles") {
  torch::NoGradGuard no_grad;
  Mlp m;
  auto compiled = m.compiled();
  const auto x = torch::randn({8, 16});
  CHECK(same(compiled.forward(x), m.eager(x)));
  CHECK(compiled.entries() == 1);
  for (std::int64_t batch : {5, 3, 11}) {
    const auto other = torch::randn({batch, 16});
    CHECK(same(compiled.forward(other), m.eager(other)));
  }
  CHECK(compiled.entries() == 2);
  const auto transposed = torch::randn({16, 8}).t();
  CHECK(same(compiled.forward(transposed), m.eager(transposed)));
  CHECK(compiled.entries() == 3);
  CHECK(same(compiled.forward(x), m.eager(x)));  // the first entry still serves the first input
  CHECK(compiled.entries() == 3);
  // A dtype change: the whole model in float64 now (Module::to keeps the parameters' identity).
  for (auto* linear : {&m.gate, &m.up, &m.down}) (*linear)->to(torch::kDouble);
  const auto wide = torch::randn({8, 16}, torch::kDouble);
  CHECK(same(compiled.forward(wide), m.eager(wide)));
  CHECK(compiled.entries() == 4);
}

TEST_CASE("fail_on_recompile names the guard, and past the size limit calls run eager") {
  torch::NoGradGuard no_grad;
  Mlp m;
  CacheOptions strict;
  strict.stance = workbook::RecompileStance::fail_on_recompile;
  auto no_recompiles = m.compiled(strict);
  no_recompiles.forward(torch::randn({8, 16}));
  CHECK_THROWS_WITH_AS(no_recompiles.forward(torch::randn({16, 8}).t()), doctest::Contains("'strides'"),
                       workbook::GuardFailure);
  CacheOptions small;
  small.cache_size_limit = 2;
  small.warn_at_limit = false;  // reached on purpose: a passing check prints no warning
  auto limited = m.compiled(small);
  limited.forward(torch::randn({8, 16}));
  limited.forward(torch::randn({16, 8}).t());
  // Another batch (both entries are static in it): a third entry would be needed. Scaled by 8 so that the gate's values reach where
  // gelu's tanh form and its exact (erf) form differ most (|x| ~ 2.7, by 4.7e-4): an exact gelu on
  // the eager path misses by far more than the tolerance, not by a hair.
  const auto third = torch::randn({4, 16}) * 8;
  CHECK(same(limited.forward(third), m.eager(third)));
  workbook::Session session;
  CHECK(same(limited.forward(third), m.eager(third)));
  const auto p = session.finish();
  CHECK(limited.entries() == 2);
  CHECK(limited.eager_fallbacks() == 2);  // one per call that ran eager
  // The eager path is the contract's: torch::gelu then the multiply (the eager call beside it adds
  // one of each), never the compiled entries' fused kernel.
  CHECK(p.count("aten::gelu") == 2);
  CHECK(p.count("workbook::fused_gelu_mul") == 0);
  // Counted per model: another model that never fell back has none.
  auto other = m.compiled(small);
  other.forward(torch::randn({8, 16}));
  CHECK(other.eager_fallbacks() == 0);
  CHECK(limited.eager_fallbacks() == 2);
}

TEST_CASE("every weight is guarded: replacing gate or up recompiles, as replacing down does") {
  torch::NoGradGuard no_grad;
  Mlp m;
  auto compiled = m.compiled();
  const auto x = torch::randn({8, 16});
  CHECK(same(compiled.forward(x), m.eager(x)));
  m.gate->weight = torch::randn_like(m.gate->weight);
  CHECK(same(compiled.forward(x), m.eager(x)));  // not the old prepared gate
  CHECK(compiled.entries() == 2);
  m.up->weight = torch::randn_like(m.up->weight);
  CHECK(same(compiled.forward(x), m.eager(x)));
  CHECK(compiled.entries() == 3);
}

TEST_CASE("a batch of one is compiled too: one entry, the fused kernel, no aten::t per call") {
  torch::NoGradGuard no_grad;
  Mlp m;
  auto compiled = m.compiled();
  const auto x = torch::randn({1, 16});
  CHECK(same(compiled.forward(x), m.eager(x)));
  const auto p = three_calls(compiled, x);
  CHECK(p.count("aten::mm") == 9);
  CHECK(p.count("workbook::fused_gelu_mul") == 3);
  CHECK(p.count("aten::t") == 0);
  CHECK(p.count("aten::gelu") == 0);
  CHECK(compiled.entries() == 1);
  CHECK(compiled.eager_fallbacks() == 0);
}
