#include "workbook/support/compile_bench.h"

#include <torch/nn/modules/linear.h>

#include <string>
#include <vector>

#include "workbook/lesson/timing.h"
#include "workbook/profiler/session.h"
#include "workbook/support/aot_inductor.h"
#include "workbook/support/compile.h"

namespace workbook {
namespace {

EagerVsCompiled paired(const std::function<void()>& eager, const std::function<void()>& compiled, int calls,
                       int rounds) {
  const auto t = interleaved_median_us({eager, compiled}, calls, rounds);
  return {t[0], t[1]};
}

double median_event_us(const Profile& p, const std::string& needle) {
  std::vector<double> us;
  for (const auto& e : p.events())
    if (e.name.find(needle) != std::string::npos) us.push_back(double(e.duration_ns()) / 1e3);
  return us.empty() ? 0 : median(us);
}

}  // namespace

// Grad mode stays on, as in a training step (and in Python by default): aten::t then also
// records its backward. At n = 64 the GEMM itself takes ~5 us here: not overhead-bound, so n = 16.
EagerVsCompiled bench_small_linear(int calls) {
  torch::nn::Linear linear(16, 16);
  const auto x = torch::randn({16, 16});
  const Guards guards(x, {linear->weight});
  const auto weight_t = linear->weight.t();
  return paired([&] { linear->forward(x); },
                [&] {
                  guards.check(x, {linear->weight});
                  torch::addmm(linear->bias, x, weight_t);
                },
                calls, 9);
}

EagerVsCompiled bench_geglu_mlp(std::int64_t tokens, std::int64_t dim, std::int64_t hidden) {
  torch::NoGradGuard inference;
  namespace nn = torch::nn;
  nn::Linear gate(nn::LinearOptions(dim, hidden).bias(false)), up(nn::LinearOptions(dim, hidden).bias(false)),
      down(nn::LinearOptions(hidden, dim).bias(false));
  const auto h = torch::randn({tokens, dim});
  const auto gate_t = gate->weight.t(), up_t = up->weight.t(), down_t = down->weight.t();
  return paired([&] { down->forward(torch::gelu(gate->forward(h), "tanh") * up->forward(h)); },
                [&] { torch::mm(fused_gelu_mul(torch::mm(h, gate_t), torch::mm(h, up_t)), down_t); }, 3, 5);
}

EagerVsCompiled bench_fused_gelu_mul(std::int64_t tokens, std::int64_t hidden) {
  torch::NoGradGuard inference;
  const auto a = torch::randn({tokens, hidden}), b = torch::randn({tokens, hidden});
  return paired([&] { torch::gelu(a, "tanh") * b; }, [&] { fused_gelu_mul(a, b); }, 5, 7);
}

AgainstInductor bench_against_inductor(std::int64_t tokens, std::int64_t dim, std::int64_t hidden) {
  torch::NoGradGuard inference;
  namespace nn = torch::nn;
  nn::Linear small(16, 16), gate(nn::LinearOptions(dim, hidden).bias(false)),
      up(nn::LinearOptions(dim, hidden).bias(false)), down(nn::LinearOptions(hidden, dim).bias(false));
  const auto x = torch::randn({16, 16}), h = torch::randn({tokens, dim});
  const auto packages = build_aoti_packages({16,
                                             16,
                                             tokens,
                                             dim,
                                             hidden,
                                             {{"linear.weight", small->weight},
                                              {"linear.bias", small->bias},
                                              {"mlp.gate.weight", gate->weight},
                                              {"mlp.up.weight", up->weight},
                                              {"mlp.down.weight", down->weight}}});
  AotiModel compiled_linear(packages.linear), compiled_mlp(packages.mlp);
  AgainstInductor r;
  const Guards guards(x, {small->weight});
  const auto small_t = small->weight.t();
  const auto linear = paired(
      [&] {
        guards.check(x, {small->weight});
        torch::addmm(small->bias, x, small_t);
      },
      [&] { compiled_linear.run(x); }, 200, 9);
  r.ours_linear_us = linear.eager_us;
  r.inductor_linear_us = linear.compiled_us;

  const auto gate_t = gate->weight.t(), up_t = up->weight.t(), down_t = down->weight.t();
  auto ours = [&] { torch::mm(fused_gelu_mul(torch::mm(h, gate_t), torch::mm(h, up_t)), down_t); };
  auto theirs = [&] { compiled_mlp.run(h); };
  const auto mlp = paired(ours, theirs, 3, 5);
  r.ours_mlp_us = mlp.eager_us;
  r.inductor_mlp_us = mlp.compiled_us;
  Session session;
  for (int i = 0; i < 5; ++i) {
    ours();
    theirs();
  }
  session.step();
  const auto profile = session.finish();
  r.ours_kernel_us = median_event_us(profile, "workbook::fused_gelu_mul");
  r.inductor_kernel_us = median_event_us(profile, "cpp_fused_gelu_mul");
  return r;
}

}  // namespace workbook
