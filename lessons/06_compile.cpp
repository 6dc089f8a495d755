// Lesson 06 — compile-style transpose elimination and fusion, with guards (Part 2 of the
// articles). torch.compile does not exist in LibTorch; this lesson does by hand what it did:
// the transposed weight is prepared once and each call runs the GEMM directly (no aten::t); the
// specialisation is guarded; and the MLP's gelu * mul runs as one fused kernel.
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>

#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"
#include "workbook/lesson/timing.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"
#include "workbook/support/aot_inductor.h"
#include "workbook/support/compile.h"

namespace {

using namespace workbook;
namespace nn = torch::nn;
using Forward = std::function<torch::Tensor()>;

// Median over rounds of the mean time of `calls` calls, eager and compiled interleaved, in us.
std::pair<double, double> host_times_us(const Forward& eager, const Forward& compiled, int calls, int rounds = 9) {
  const auto t = interleaved_median_us({[&] { eager(); }, [&] { compiled(); }}, calls, rounds);
  return {t[0], t[1]};
}

Profile profile_calls(const std::string& region_name, const Forward& forward, int steps) {
  SessionOptions recording;
  recording.record_shapes = true;
  Session session(Schedule(1, 1, steps), recording);
  for (int step = 0; step < steps + 2; ++step) {
    {
      Region region(region_name);
      torch::Tensor y = forward();
    }
    session.step();
  }
  return session.finish();
}

// The ops one call ran (cpu_op events beneath its region), averaged over the recorded calls.
std::map<std::string, std::size_t> ops_per_call(const Profile& p, const std::string& region) {
  std::map<std::string, std::size_t> counts;
  const auto regions = p.find(region);
  for (auto r : regions)
    for (auto d : p.descendants(r))
      if (p[d].category == Category::cpu_op) ++counts[p[d].name];
  for (auto& [name, n] : counts) n /= std::max<std::size_t>(1, regions.size());
  return counts;
}

std::string joined(const std::map<std::string, std::size_t>& counts) {
  std::string out;
  for (const auto& [name, n] : counts) out += fmt::format(" {} x{}", name, n);
  return out;
}

std::size_t kernels_in(const std::map<std::string, std::size_t>& counts) {
  std::size_t n = 0;
  for (const auto& [name, count] : counts) n += name.find("cpp_fused") != std::string::npos ? count : 0;
  return n;
}

// The models at the lesson's shapes, compiled by AOTInductor (LibTorch >= 2.6), beside eager
// and the hand-made compile: ops, kernels, host time, MLP time and the generated code.
void show_real_compile(const LessonOptions& opt, const Forward& eager, const Forward& ours, nn::Linear& linear,
                       const torch::Tensor& x, const Forward& mlp_eager, const Forward& mlp_ours, nn::Linear& gate,
                       nn::Linear& up, nn::Linear& down, const torch::Tensor& h, int iterations) {
  fmt::print("\nThe real compiler: AOTInductor\n");
  if (!aot_inductor_built()) {
    fmt::print(
        "LibTorch {} has no AOTInductor; it needs LibTorch >= 2.6 and python3 with torch of the same "
        "version (`./workbook run 6 --libtorch2` runs this lesson on Debian 13's LibTorch 2.6).\n",
        libtorch_version());
    return;
  }
  AotiRequest request{x.size(0),
                      x.size(1),
                      h.size(0),
                      h.size(1),
                      gate->weight.size(0),
                      {{"linear.weight", linear->weight},
                       {"linear.bias", linear->bias},
                       {"mlp.gate.weight", gate->weight},
                       {"mlp.up.weight", up->weight},
                       {"mlp.down.weight", down->weight}}};
  AotiPackages packages;
  try {
    packages = build_aoti_packages(request);
  } catch (const std::runtime_error& e) {
    fmt::print("AOTInductor is not available here: {}\n", e.what());
    return;
  }
  fmt::print(
      "torch._inductor.aoti_compile_and_package (python3 torch {}) {} the Linear and the MLP at these shapes "
      "({}; {:.1f} s of compiling)\n",
      packages.python_torch, packages.cached ? "had compiled" : "compiled", packages.folder.string(),
      packages.compile_seconds);
  AotiModel aoti_linear(packages.linear), aoti_mlp(packages.mlp);
  const Forward real = [&] { return aoti_linear.run(x); };
  const Forward mlp_real = [&] { return aoti_mlp.run(h); };
  const double linear_diff = (real() - eager()).abs().max().item<double>();
  const double mlp_diff = (mlp_real() - mlp_eager()).abs().max().item<double>();
  const double mlp_scale = mlp_eager().abs().max().item<double>();

  const auto ops_eager = ops_per_call(profile_calls("eager", eager, opt.steps), "eager");
  const auto ops_ours = ops_per_call(profile_calls("ours", ours, opt.steps), "ours");
  const auto ops_real = ops_per_call(profile_calls("aoti", real, opt.steps), "aoti");
  const auto mlp_ops_real = ops_per_call(profile_calls("aoti_mlp", mlp_real, opt.steps), "aoti_mlp");
  const auto linear_us = interleaved_median_us({[&] { eager(); }, [&] { ours(); }, [&] { real(); }}, iterations, 9);
  const auto mlp_us = interleaved_median_us({[&] { mlp_eager(); }, [&] { mlp_ours(); }, [&] { mlp_real(); }}, 3, 5);
  auto count = [](const std::map<std::string, std::size_t>& ops, const char* name) {
    const auto it = ops.find(name);
    return it == ops.end() ? std::size_t(0) : it->second;
  };
  fmt::print("\n{:<24} {:>12} {:>12} {:>12}\n", "per call", "eager", "ours", "AOTInductor");
  fmt::print("{:<24} {:>12} {:>12} {:>12}\n", "Linear: aten::t", count(ops_eager, "aten::t"),
             count(ops_ours, "aten::t"), count(ops_real, "aten::t"));
  fmt::print("{:<24} {:>12.2f} {:>12.2f} {:>12.2f}\n", "Linear: host us", linear_us[0], linear_us[1], linear_us[2]);
  fmt::print("{:<24} {:>12.1f} {:>12.1f} {:>12.1f}\n", "MLP: us per forward", mlp_us[0], mlp_us[1], mlp_us[2]);
  fmt::print("AOTInductor's Linear ran:{}\nAOTInductor's MLP ran:   {}\n", joined(ops_real), joined(mlp_ops_real));
  claim(count(ops_real, "aten::t") == 0 && count(mlp_ops_real, "aten::t") == 0,
        "AOTInductor's compiled models run no aten::t: the transposed weights are strided views made at compile "
        "time, as in our hand-made version",
        fmt::format("aten::t per call: Linear {}, MLP {}", count(ops_real, "aten::t"), count(mlp_ops_real, "aten::t")));
  claim(linear_diff <= 1e-4 && mlp_diff <= 1e-4 * std::max(1.0, mlp_scale),
        "AOTInductor's outputs equal eager's (same weights: the lesson handed its own to the compile step)",
        fmt::format("largest difference: Linear {:.2e}, MLP {:.2e} (MLP outputs up to {:.2f})", linear_diff, mlp_diff,
                    mlp_scale));
  claim(
      kernels_in(mlp_ops_real) == 1 && count(mlp_ops_real, "aten::gelu") == 0 && count(mlp_ops_real, "aten::mul") == 0,
      "AOTInductor fused gelu and mul into one generated kernel (cpp_fused_*), as our hand-fused kernel does",
      fmt::format("generated kernels per MLP call: {}, aten::gelu {}, aten::mul {}", kernels_in(mlp_ops_real),
                  count(mlp_ops_real, "aten::gelu"), count(mlp_ops_real, "aten::mul")));
  fmt::print("\nThe MLP's generated code ({}), the lines that matter:\n", (packages.folder / "mlp_code.txt").string());
  for (const auto& line : code_lines_with(packages.mlp_code,
                                          {"reinterpret_tensor", "_mm_out", "cpp_fused", "#pragma omp for",
                                           "in_out_ptr0[", "tanh", "Vectorized", "std::move(buf"},
                                          20))
    fmt::print("  {}\n", line);
  std::size_t shim_gemms = 0;
  for (std::size_t at = packages.mlp_code.find("aoti_torch_cpu_mm_out("); at != std::string::npos;
       at = packages.mlp_code.find("aoti_torch_cpu_mm_out(", at + 1))
    ++shim_gemms;
  claim(shim_gemms == 3 && count(mlp_ops_real, "aten::mm") == 0,
        "the compiled MLP's three GEMMs leave no aten::mm in the profile: the generated code calls the C shim "
        "aoti_torch_cpu_mm_out, which calls the CPU kernel at::cpu::mm_out directly, past the dispatcher where "
        "the profiler's hooks sit (torchgen/gen_aoti_c_shim.py, gen_static_dispatch_backend_call)",
        fmt::format("aoti_torch_cpu_mm_out calls in the generated code: {}; aten::mm per call in the profile: {}",
                    shim_gemms, count(mlp_ops_real, "aten::mm")));
  const bool vectorised = packages.mlp_code.find("at::vec::Vectorized") != std::string::npos;
  const bool reuses = packages.mlp_code.find("// reuse") != std::string::npos;
  narrate(fmt::format(
      "In the lines above, reinterpret_tensor_wrapper(weight, 2, sizes, strides) is each transposed weight: "
      "sizes and strides fixed in the generated code over the weight's own storage, so no aten::t runs per "
      "call.{} The generated gelu * mul loop is {} (Inductor's vector ISA here: {}; it vectorises only for an "
      "ISA whose test build succeeds, torch/_inductor/cpu_vec_isa.py).",
      reuses ? " A buffer marked \"// reuse\" takes over an earlier one instead of a new allocation." : "",
      vectorised ? "vectorised with at::vec::Vectorized" : "scalar, std::tanh per element",
      packages.vector_isa.empty() ? "none" : packages.vector_isa));
}

// Feeds a compiled Linear what a training or serving loop feeds it and shows what the cache does.
void show_guards(nn::Linear& linear, const torch::Tensor& x) {
  SpecialisationCache cache;
  std::vector<torch::Tensor> prepared;  // per entry: the transposed weight, a view
  auto forward = [&](const torch::Tensor& input) {
    const auto entry = cache.lookup(input, {linear->weight});
    if (!entry) return linear->forward(input);  // past the cache size limit: eager
    if (*entry == prepared.size()) prepared.push_back(linear->weight.t());
    return torch::addmm(linear->bias, input, prepared[*entry]);
  };
  fmt::print("\n{:<44} {:>8} {:>13}  {}\n", "call", "entries", "equals eager", "why a new entry");
  bool all_equal = true;
  int after_update = -1, after_batch = -1, after_second_batch = -1, after_transposed = -1, after_replace = -1;
  auto call = [&](const std::string& what, const torch::Tensor& input) {
    const std::size_t before = cache.size();
    const bool equal = torch::allclose(forward(input), linear->forward(input), 1e-5, 1e-5);
    all_equal = all_equal && equal;
    fmt::print("{:<44} {:>8} {:>13}  {}\n", what, cache.size(), equal ? "yes" : "NO",
               cache.size() > before ? cache.last_reason() : "");
    return int(cache.size());
  };
  const std::int64_t n = x.size(1);
  call("first call", x);
  call("same input again", x);
  after_batch = call(fmt::format("batch {} instead of {}", x.size(0) / 2, x.size(0)), torch::randn({x.size(0) / 2, n}));
  after_second_batch = call(fmt::format("batch {}", x.size(0) / 4 + 1), torch::randn({x.size(0) / 4 + 1, n}));
  after_transposed = call("a transposed (non-contiguous) input", torch::randn({n, x.size(0)}).t());
  {
    torch::NoGradGuard no_grad;
    linear->weight.mul_(0.5);  // what an optimizer step does: in place
  }
  after_update = call("after an in-place update of the weight", x);
  linear->weight = torch::randn_like(linear->weight);  // a new tensor object
  after_replace = call("after replacing the weight", x);
  claim(all_equal, "every call returns what eager returns",
        "torch::allclose against linear->forward for each call above");
  claim(after_second_batch == after_batch, "a batch change recompiles once; then the batch dimension is dynamic",
        fmt::format("entries after the first new batch: {}, after another batch: {}", after_batch, after_second_batch));
  claim(after_transposed == after_second_batch + 1, "a transposed input needs an entry of its own (layout is guarded)",
        fmt::format("entries before it {}, after it {}", after_second_batch, after_transposed));
  claim(after_update == after_transposed && after_replace == after_update + 1,
        "our cache: an in-place update of the weight recompiles nothing; replacing the weight does",
        fmt::format("entries before the update {}, after it {}, after the replacement {}", after_transposed,
                    after_update, after_replace));
  narrate(
      "The lines above test our SpecialisationCache, not Dynamo. Like Dynamo (torch.compile's front end) it "
      "guards what its code assumed about the input: dtype, device, rank, sizes and layout. It also guards "
      "each parameter's identity, because its prepared w.t() views point at one tensor. Dynamo since PyTorch "
      "2.5 (inline_inbuilt_nn_modules, the default) passes parameters in as graph inputs on every call and "
      "guards their properties, not their identity: a like-shaped replacement weight does not recompile "
      "there. It guards a parameter's address only under freezing, which bakes the weights in as our cache "
      "does (torch/_dynamo/variables/builder.py: mark_static_input(value, guard=is_parameter_freezing())). "
      "Neither guards values or version counters: an optimizer updates weights in place every step, and a "
      "guard on that would recompile every step. The prepared w.t() is a view, so it sees in-place updates. "
      "A new batch size on a first compile does recompile; Dynamo then marks that dimension dynamic "
      "(automatic dynamic shapes), so further batch sizes reuse the entry. Each miss adds an entry, up to "
      "cache_size_limit (8), after which it warns and runs eager (torch/_dynamo/config.py: cache_size_limit, "
      "automatic_dynamic_shapes).");

  CacheOptions strict;
  strict.stance = RecompileStance::fail_on_recompile;
  SpecialisationCache no_recompiles(strict);
  no_recompiles.lookup(x, {linear->weight});
  try {
    no_recompiles.lookup(torch::randn({n, x.size(0)}).t(), {linear->weight});
  } catch (const GuardFailure& e) {
    fmt::print("\nwith the fail_on_recompile stance, a transposed input: {}\n", e.what());
  }
  narrate(
      "Raising instead of recompiling is an opt-in (torch.compiler.set_stance(\"fail_on_recompile\")): "
      "useful to prove a loop never recompiles. It is not the default; Part 2 of the articles describes "
      "a mismatch as an error, Part 1 notes that Dynamo re-checks every call and recompiles.");
}

int run(const LessonOptions& opt, int iterations, std::int64_t dim, std::int64_t hidden, std::int64_t tokens) {
  print_lesson_header("Lesson 06 · Compile-style transpose elimination and fusion, with guards");
  torch::manual_seed(0);
  torch::NoGradGuard inference;
  const std::int64_t n = opt.size;
  nn::Linear linear(n, n);
  const torch::Tensor x = torch::randn({n, n});

  // "Compile" the Linear: guards over the example, the transposed weight prepared once.
  const Guards guards(x, {linear->weight});
  const torch::Tensor weight_t = linear->weight.t();
  const Forward eager = [&] { return linear->forward(x); };
  const Forward compiled = [&] {
    guards.check(x, {linear->weight});
    return torch::addmm(linear->bias, x, weight_t);
  };
  (void)n;
  if (!torch::allclose(eager(), compiled(), 1e-5, 1e-5)) throw std::runtime_error("compiled Linear differs from eager");

  const Profile p_eager = profile_calls("eager_linear", eager, opt.steps);
  const Profile p_compiled = profile_calls("compiled_linear", compiled, opt.steps);
  fmt::print("\nnn::Linear({0}, {0}) on [{0}, {0}], one forward:\n  eager:   {1}\n  compiled:{2}\n", n,
             joined(ops_per_call(p_eager, "eager_linear")), joined(ops_per_call(p_compiled, "compiled_linear")));
  const auto linear_ops = [](const Profile& p, const std::string& region, const char* op) {
    std::size_t count = 0;
    for (auto r : p.find(region)) count += p.count_under(r, op);
    return count;
  };
  claim(linear_ops(p_compiled, "compiled_linear", "aten::t") == 0 &&
            linear_ops(p_compiled, "compiled_linear", "aten::addmm") == p_compiled.find("compiled_linear").size() &&
            linear_ops(p_eager, "eager_linear", "aten::t") == p_eager.find("eager_linear").size(),
        "the compiled forward runs the same aten::addmm with no aten::t; eager runs one aten::t per call",
        fmt::format("aten::t per forward: eager {}, compiled {}; aten::addmm in the compiled forwards: {}",
                    linear_ops(p_eager, "eager_linear", "aten::t") /
                        std::max<std::size_t>(1, p_eager.find("eager_linear").size()),
                    linear_ops(p_compiled, "compiled_linear", "aten::t"),
                    linear_ops(p_compiled, "compiled_linear", "aten::addmm")));
  narrate(
      "As in the articles, the GEMM is the same (aten::addmm either way); what compile removes is the "
      "CPU-side aten::t -> aten::transpose -> aten::as_strided chain: the strides of W^T were worked out "
      "once, so each call goes straight to the GEMM. The compiled code keeps the strided view w.t(), not "
      "a contiguous copy: no extra memory, and the BLAS reads W transposed in place.");

  const auto [eager_us, compiled_us] = host_times_us(eager, compiled, iterations);
  fmt::print(
      "host time per forward (median of 9 rounds of {} calls): eager {:.2f} us, compiled {:.2f} us -> "
      "compiled/eager = {:.2f}\n",
      iterations, eager_us, compiled_us, compiled_us / eager_us);
  narrate(fmt::format(
      "What the articles found: compiling a lone nn.Linear ran the same GEMM kernel and removed the CPU-side "
      "aten::t (Part 2). Part 1 measured what real compiled code adds around each call (TorchDynamo Cache "
      "Lookup, Torch-Compiled Region, AOTDispatcher Runtime Wrapper Prologue, Call CompiledFxGraph): about 2x "
      "the eager CPU time per step for a single op, more than the aten::t it removed, a tax that only "
      "amortises over larger compiled regions. Our emulation has no such wrappers: on this CPU at n={} the "
      "same thread dispatches and computes, and removing aten::t's dispatch saves {:.2f} us of {:.2f} per "
      "call here.",
      n, eager_us - compiled_us, eager_us));

  // The GeGLU MLP: eager (Linear layers, gelu, mul) vs compiled (3 bare mm + 1 fused kernel).
  nn::Linear gate(nn::LinearOptions(dim, hidden).bias(false)), up(nn::LinearOptions(dim, hidden).bias(false)),
      down(nn::LinearOptions(hidden, dim).bias(false));
  const torch::Tensor h = torch::randn({tokens, dim});
  const torch::Tensor gate_t = gate->weight.t(), up_t = up->weight.t(), down_t = down->weight.t();
  const Guards mlp_guards(h, {gate->weight, up->weight, down->weight});
  const Forward mlp_eager = [&] { return down->forward(torch::gelu(gate->forward(h), "tanh") * up->forward(h)); };
  const Forward mlp_compiled = [&] {
    mlp_guards.check(h, {gate->weight, up->weight, down->weight});
    return torch::mm(fused_gelu_mul(torch::mm(h, gate_t), torch::mm(h, up_t)), down_t);
  };
  if (!torch::allclose(mlp_eager(), mlp_compiled(), 1e-4, 1e-4)) throw std::runtime_error("compiled MLP differs");
  const Profile m_eager = profile_calls("eager_mlp", mlp_eager, opt.steps);
  const Profile m_compiled = profile_calls("compiled_mlp", mlp_compiled, opt.steps);
  fmt::print("\nGeGLU MLP (dim {}, hidden {}, {} tokens), one forward:\n  eager:   {}\n  compiled:{}\n", dim, hidden,
             tokens, joined(ops_per_call(m_eager, "eager_mlp")), joined(ops_per_call(m_compiled, "compiled_mlp")));
  const auto [mlp_eager_us, mlp_compiled_us] = host_times_us(mlp_eager, mlp_compiled, 3, 5);
  fmt::print(
      "MLP time per forward (median of 5 rounds of 3): eager {:.1f} us, compiled {:.1f} us -> "
      "compiled/eager = {:.2f}\n",
      mlp_eager_us, mlp_compiled_us, mlp_compiled_us / mlp_eager_us);
  const auto count_in = [](const Profile& p, const std::string& region, const char* op) {
    const auto regions = p.find(region);
    return regions.empty() ? std::size_t(0) : p.count_under(regions.front(), op);
  };
  claim(count_in(m_compiled, "compiled_mlp", "aten::mm") == 3 &&
            count_in(m_compiled, "compiled_mlp", "workbook::fused_gelu_mul") == 1 &&
            count_in(m_compiled, "compiled_mlp", "aten::gelu") == 0 &&
            count_in(m_compiled, "compiled_mlp", "aten::mul") == 0,
        "the compiled MLP runs 3 aten::mm and one fused gelu * mul, no separate aten::gelu or aten::mul",
        fmt::format("compiled forward: {} aten::mm, {} fused, {} aten::gelu, {} aten::mul",
                    count_in(m_compiled, "compiled_mlp", "aten::mm"),
                    count_in(m_compiled, "compiled_mlp", "workbook::fused_gelu_mul"),
                    count_in(m_compiled, "compiled_mlp", "aten::gelu"),
                    count_in(m_compiled, "compiled_mlp", "aten::mul")));
  narrate(
      "The articles' compiled MLP ran 3 bare aten::mm and one generated kernel for gelu * mul; so does "
      "this one. Count the passes over the [tokens, hidden] activations: eager's aten::gelu reads the gate "
      "and writes its output, then aten::mul reads that output back, reads up and writes the product: 5 "
      "passes. The fused kernel reads gate and up and writes the product: 3. It saves two passes, the "
      "intermediate's write and its read back (and one allocation). Whether that shows in the total "
      "depends on where the time goes: compare the two tables below. The GEMMs are untouched.");

  show_real_compile(opt, eager, compiled, linear, x, mlp_eager, mlp_compiled, gate, up, down, h, iterations);

  // Guards and the cache of specialisations, as Dynamo keeps them.
  show_guards(linear, x);

  for (const auto& [name, p] : {std::pair<std::string, const Profile*>{"eager", &m_eager}, {"compiled", &m_compiled}}) {
    fmt::print("\n{} MLP", name);
    report_profile(*p, false, opt.out, fmt::format("{}_mlp_{}x{}", name, tokens, dim), "Lesson 06 · " + name + " MLP",
                   12);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Default --size: the small Linear: n x n weight, n rows
  LessonDefaults defaults("lesson06", "06_compile",
                          "Lesson 06: compile-style transpose elimination, guards and a fused gelu * mul", 64);
  std::string iterations_text = "2000", dim_text = "512", hidden_text = "2048", tokens_text = "1024";
  defaults.extra = {{"--iterations", "calls per timing round of the small Linear", &iterations_text},
                    {"--dim", "MLP model dimension", &dim_text},
                    {"--hidden", "MLP hidden dimension", &hidden_text},
                    {"--tokens", "MLP rows (batch x sequence)", &tokens_text}};
  defaults.float32_only_reason = "its fused kernel is float32";
  defaults.cpu_only_reason = "its fused gelu * mul is a CPU kernel (lesson 07 writes GPU kernels)";
  defaults.unused_flags = {{"--warmup", "its timings run one warm-up round of their own"}};
  const LessonOptions opt = parse_lesson_flags(argc, argv, defaults);
  const std::int64_t iterations = size_flag(defaults.program, "--iterations", iterations_text, 1000000);
  const std::int64_t dim = size_flag(defaults.program, "--dim", dim_text, 16384);
  const std::int64_t hidden = size_flag(defaults.program, "--hidden", hidden_text, 65536);
  const std::int64_t tokens = size_flag(defaults.program, "--tokens", tokens_text, 1 << 20);
  // float32: the MLP's weights twice (eager's and the prepared ones), about five [tokens, hidden]
  // and two [tokens, dim] activations.
  const double t = double(tokens), d = double(dim), h = double(hidden);
  require_memory(defaults.program, fmt::format("--dim {} --hidden {} --tokens {}", dim, hidden, tokens),
                 4 * (6 * d * h + 5 * t * h + 2 * t * d));
  return workbook::run_reporting_errors(defaults.program,
                                        [&] { return run(opt, int(iterations), dim, hidden, tokens); });
}
