// Lesson 11 — attention is all you profile (Part 3 of the articles).
//
// Causal attention over q, k, v [batch, heads, seq, head_dim], written four ways and profiled
// side by side: naive (an out-of-place masked_fill), naive in place, and scaled-dot-product
// attention pinned to its math and (LibTorch >= 2.4 here) flash backends. Per forward: the ops, the copy
// the out-of-place mask hides, the mask the math path rebuilds, host time, and peak memory as seq
// doubles: the [seq, seq] scores against none.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "workbook/findings/11_attention.h"
#include "workbook/lesson/answers.h"
#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"
#include "workbook/lesson/timing.h"
#include "workbook/profiler/memory_timeline.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"

// Which attention entry points this LibTorch has is decided by CMake (cmake/Attention.cmake).
#if !WORKBOOK_HAVE_SDPA_BACKENDS && !WORKBOOK_HAVE_PRIVATE_SDPA
#error "lesson 11 runs on LibTorch 1.13 (the private SDPA) or >= 2.4 (the public one with pinned backends)"
#endif

namespace {

using namespace workbook;

/// The attention's sizes but seq.
struct AttentionShape {
  std::int64_t batch, heads, head_dim;
};

// The workload: q, k, v and the causal mask, precomputed once as the articles' module does
// (true where a key comes after its query).
struct Inputs {
  torch::Tensor q, k, v, later;
  Inputs(const AttentionShape& s, std::int64_t seq)
      : q(torch::randn({s.batch, s.heads, seq, s.head_dim})),
        k(torch::randn({s.batch, s.heads, seq, s.head_dim})),
        v(torch::randn({s.batch, s.heads, seq, s.head_dim})),
        later(torch::ones({seq, seq}, torch::kBool).triu(1)) {}
  double scale() const { return 1.0 / std::sqrt(double(q.size(3))); }
};

const double minus_infinity = -std::numeric_limits<double>::infinity();

// Part 3's naive module: masked_fill returns a new tensor, so it copies the scores first.
torch::Tensor naive(const Inputs& x) {
  torch::Tensor scores = torch::matmul(x.q, x.k.transpose(-2, -1)) * x.scale();
  scores = scores.masked_fill(x.later, minus_infinity);
  return torch::matmul(torch::softmax(scores, -1), x.v);
}

// The same with masked_fill_: it fills the scores where they lie (safe only without autograd).
torch::Tensor naive_inplace(const Inputs& x) {
  torch::Tensor scores = torch::matmul(x.q, x.k.transpose(-2, -1)) * x.scale();
  scores.masked_fill_(x.later, minus_infinity);
  return torch::matmul(torch::softmax(scores, -1), x.v);
}

#if WORKBOOK_HAVE_SDPA_BACKENDS
enum class Backend { math, flash };

// Enables one SDPA backend only, as torch.nn.attention.sdpa_kernel(...) does, for its lifetime.
class PinnedBackend {
 public:
  explicit PinnedBackend(Backend b)
      : flash_(ctx().userEnabledFlashSDP()),
        efficient_(ctx().userEnabledMemEfficientSDP()),
        math_(ctx().userEnabledMathSDP()),
        cudnn_(ctx().userEnabledCuDNNSDP()) {
    ctx().setSDPUseFlash(b == Backend::flash);
    ctx().setSDPUseMath(b == Backend::math);
    ctx().setSDPUseMemEfficient(false);
    ctx().setSDPUseCuDNN(false);
  }
  ~PinnedBackend() {
    ctx().setSDPUseFlash(flash_);
    ctx().setSDPUseMemEfficient(efficient_);
    ctx().setSDPUseMath(math_);
    ctx().setSDPUseCuDNN(cudnn_);
  }
  PinnedBackend(const PinnedBackend&) = delete;
  PinnedBackend& operator=(const PinnedBackend&) = delete;

 private:
  static at::Context& ctx() { return at::globalContext(); }
  bool flash_, efficient_, math_, cudnn_;
};

torch::Tensor sdpa(const Inputs& x, Backend b) {
  const PinnedBackend pinned(b);
  return at::scaled_dot_product_attention(x.q, x.k, x.v, {}, 0.0, /*is_causal=*/true);
}
#else
// LibTorch 1.13 has only the private entry point, and only the math decomposition behind it.
torch::Tensor sdpa_math_1_13(const Inputs& x) {
  return std::get<0>(at::_scaled_dot_product_attention(x.q, x.k, x.v, {}, 0.0, false, /*is_causal=*/true));
}
#endif

/// One way to compute attention, by its region's name.
struct Variant {
  std::string name;
  std::function<torch::Tensor(const Inputs&)> forward;
};

std::vector<Variant> variants_here() {
  std::vector<Variant> v{{"naive", naive}, {"naive_inplace", naive_inplace}};
#if WORKBOOK_HAVE_SDPA_BACKENDS
  v.push_back({"sdpa_math", [](const Inputs& x) { return sdpa(x, Backend::math); }});
  v.push_back({"sdpa_flash", [](const Inputs& x) { return sdpa(x, Backend::flash); }});
#else
  v.push_back({"sdpa_math", sdpa_math_1_13});
#endif
  return v;
}

// Every variant once per step, each in its region, under one schedule.
Profile profile_variants(const LessonOptions& opt, const std::vector<Variant>& variants, const Inputs& x) {
  SessionOptions recording;
  recording.record_shapes = true;
  recording.profile_memory = true;
  const Schedule schedule(1, opt.warmup, opt.steps);
  Session session(schedule, recording);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    for (const Variant& v : variants) {
      Region region(v.name);
      torch::Tensor out = v.forward(x);
    }
    session.step();
  }
  return session.finish();
}

// Step 1: the four ways give one answer.
void check_they_agree(const std::vector<Variant>& variants, const Inputs& x) {
  const torch::Tensor reference = naive(x);
  for (const Variant& v : variants)
    if (!torch::allclose(v.forward(x), reference, 1e-4, 1e-4)) throw std::runtime_error(v.name + " differs from naive");
}

// Step 2: ops per forward, and the copy hidden in the out-of-place masked_fill.
void show_the_ops(const Profile& p, const std::vector<Variant>& variants) {
  fmt::print("\n{:<16} {:>14} {:>10} {:>10} {:>8}\n", "forward", "ops per call", "clone", "tril", "bmm");
  for (const Variant& v : variants) {
    const auto calls = p.find(v.name);
    std::size_t ops = 0;
    for (EventId c : calls)
      for (EventId d : p.descendants(c)) ops += p[d].category == Category::cpu_op;
    const EventId first = calls.at(0);
    fmt::print("{:<16} {:>14.0f} {:>10} {:>10} {:>8}\n", v.name, double(ops) / double(calls.size()),
               p.count_under(first, "aten::clone"), p.count_under(first, "aten::tril"),
               p.count_under(first, "aten::bmm"));
  }
  const auto fills = p.under(first_named(p, "naive"), "aten::masked_fill");
  if (!fills.empty())
    fmt::print("\nthe naive forward's masked_fill, as the profiler saw it:\n{}", format_tree(p, fills[0], 3));
  const Finding copies = findings11::out_of_place_mask_copies(p);
  claim(copies);
  answer("mask_copies", copies);
  claim(findings11::in_place_drops_the_copy(p));
  narrate(
      "Part 3 expected 5 GPU kernels for the naive module and found 6: the sixth was this copy. "
      "masked_fill is out of place, so it clones the scores and fills the clone. masked_fill_ fills "
      "the scores where they lie. Here that is safe: under no_grad nothing is saved for backward, and the "
      "scaled scores are a fresh tensor nobody else reads. With autograd, backward() raises an error when "
      "an in-place op overwrote a value a backward function saved; check before writing in place.");
}

// Step 3: what scaled-dot-product attention runs, per backend this LibTorch has.
void show_sdpa(const Profile& p) {
  const Finding rebuilds = findings11::math_rebuilds_the_mask(p);
  claim(rebuilds);
  answer("math_rebuilds_mask", rebuilds);
#if WORKBOOK_HAVE_SAFE_SOFTMAX
  claim(findings11::math_uses_safe_softmax(p));
#endif
#if WORKBOOK_HAVE_SDPA_BACKENDS
  claim(findings11::flash_is_one_fused_op(p));
  narrate(
      "Pinned to flash, SDPA is one op that walks k and v in blocks with a running softmax and never "
      "writes the [seq, seq] scores; pinned to math it is the reference decomposition: the mask "
      "rebuilt from aten::ones and aten::tril on every call with is_causal, two GEMMs and a softmax "
      "(aten::_safe_softmax from LibTorch 2.5). "
      "Part 3 (A100, bf16) counted kernels per forward: naive 6, in place 5, math 20, efficient 1, flash "
      "1, cuDNN 1; math ran 3.7x slower than the naive in-place module (7.239 vs 1.955 ms per forward), "
      "in FP32.");
#else
  fmt::print(
      "\nLibTorch {} has only the private _scaled_dot_product_attention, which on the CPU runs only the math "
      "path. Pinning the "
      "public scaled_dot_product_attention to its math or flash backend needs a newer LibTorch, so this run "
      "has no sdpa_flash and its sdpa_math is the private function (the flash and math switches exist since "
      "1.13, where they steer only the private function's CUDA path; the public function and the memory-efficient "
      "switch since 2.0, the CPU flash kernel since 2.1; this lesson's pin, which also switches cuDNN off, is built "
      "for "
      "LibTorch >= 2.4; the workbook's second leg runs 2.6: `./workbook run 11 --libtorch2`).\n",
      libtorch_version());
#endif
}

// Step 4: host time per forward, the articles' figures beside (theirs, on an A100).
void time_the_variants(const std::vector<Variant>& variants, const Inputs& x) {
  std::vector<std::function<void()>> work;
  for (const Variant& v : variants) work.push_back([&v, &x] { torch::Tensor out = v.forward(x); });
  const std::vector<double> us = interleaved_median_us(work, 3, 7);
  fmt::print("\nhost time per forward (median of 7 rounds of 3, unprofiled):");
  for (std::size_t i = 0; i < variants.size(); ++i) fmt::print("  {} {:.1f} us", variants[i].name, us[i]);
  fmt::print(
      "\nPart 3's, on an A100 in bf16 (theirs, not this machine's): CUDA / CPU per forward efficient "
      "277.9 / 117 us, flash 146.8 / 138 us, cuDNN 186.3 / 214 us\n");
}

// One forward's peak bytes above its start, per variant, at one seq.
// One forward's memory per variant at one seq: the peak above its start and its largest allocation.
struct ForwardMemory {
  std::int64_t peak = 0, largest_allocation = 0;
};

std::map<std::string, ForwardMemory> memory_at(const std::vector<Variant>& variants, const AttentionShape& shape,
                                               std::int64_t seq) {
  const Inputs x(shape, seq);
  SessionOptions recording;
  recording.profile_memory = true;
  Session session(Schedule(0, 1, 1), recording);
  for (int step = 0; step < 2; ++step) {
    for (const Variant& v : variants) {
      Region region(v.name);
      torch::Tensor out = v.forward(x);
    }
    session.step();
  }
  const Profile p = session.finish();
  const MemoryTimeline timeline = memory_timeline(p);
  std::map<std::string, ForwardMemory> memory;
  for (const Variant& v : variants) {
    const EventId id = first_named(p, v.name);
    const Event& r = p[id];
    ForwardMemory& m = memory[v.name];
    m.peak = timeline.peak_between(r.start_ns, r.end_ns) - timeline.live_at(r.start_ns - 1);
    for (EventId d : p.descendants(id))
      if (p[d].category == Category::memory) m.largest_allocation = std::max(m.largest_allocation, p[d].bytes);
  }
  return memory;
}

// Step 5: memory per forward as seq doubles, from profile_memory: seq² for what materialises the
// scores, seq for what does not.
void show_memory_against_seq(const std::vector<Variant>& variants, const AttentionShape& shape, std::int64_t seq) {
  const std::vector<std::int64_t> seqs{std::max<std::int64_t>(seq / 2, 1), seq, 2 * seq};
  std::map<std::string, findings11::MemoryBySeq> memory;
  for (std::int64_t s : seqs)
    for (const auto& [name, m] : memory_at(variants, shape, s)) {
      memory[name].variant = name;
      memory[name].seqs.push_back(s);
      memory[name].peak_bytes.push_back(m.peak);
      memory[name].largest_allocation_bytes.push_back(m.largest_allocation);
    }
  fmt::print("\npeak memory per forward above its start (profile_memory), KiB\n{:<16}", "seq");
  for (std::int64_t s : seqs) fmt::print(" {:>12}", s);
  fmt::print("\n");
  for (const Variant& v : variants) {
    fmt::print("{:<16}", v.name);
    for (std::int64_t b : memory[v.name].peak_bytes) fmt::print(" {:>12.1f}", double(b) / 1024.0);
    fmt::print("\n");
  }
  narrate(findings11::in_place_peak(memory["naive"], memory["naive_inplace"]) + ".");
  claim(findings11::peak_grows_as_seq_squared(memory["naive"]));
  claim(findings11::peak_grows_as_seq_squared(memory["sdpa_math"]));
#if WORKBOOK_HAVE_SDPA_BACKENDS
  claim(findings11::no_seq_squared_buffer(memory["sdpa_flash"], shape.batch * shape.heads));
#endif
  narrate(
      fmt::format("One head's scores at seq {} are {} x {} floats. Part 3 put it at seq 4096: about 16 M values per "
                  "head, written to memory and read back by the naive and math paths, never by flash. Exercise 11 "
                  "writes attention that needs only a block of them at a time.",
                  2 * seq, 2 * seq, 2 * seq));
}

// Step 6: a query with nothing to attend to.
void show_a_fully_masked_row() {
  const torch::Tensor row = torch::full({1, 4}, minus_infinity);
  const torch::Tensor plain = torch::softmax(row, -1).contiguous();
  fmt::print("\nsoftmax of a row of -inf: {}\n",
             fmt::join(std::vector<float>(plain.data_ptr<float>(), plain.data_ptr<float>() + 4), ", "));
#if WORKBOOK_HAVE_SAFE_SOFTMAX
  const torch::Tensor safe = at::_safe_softmax(row, -1).contiguous();
  const std::vector<float> p(plain.data_ptr<float>(), plain.data_ptr<float>() + 4),
      s(safe.data_ptr<float>(), safe.data_ptr<float>() + 4);
  claim(findings11::safe_softmax_zeroes_masked_rows(p, s));
#else
  fmt::print(
      "From LibTorch 2.5 SDPA's math path calls _safe_softmax instead (PyTorch PR #133882), which gives 0 "
      "there; before 2.5 it called softmax, which gives NaN.\n");
#endif
}

int run(const LessonOptions& opt, const AttentionShape& shape) {
  print_lesson_header("Lesson 11 · Attention is all you profile: naive, in-place and SDPA");
  torch::manual_seed(0);
  torch::NoGradGuard inference;  // Part 3 profiles inference; in place is only safe without autograd
  const Inputs x(shape, opt.size);
  const std::vector<Variant> variants = variants_here();
  fmt::print("\ncausal attention, q k v [{}, {}, {}, {}] (float32, cpu), {} ways, one region per forward\n",
             shape.batch, shape.heads, opt.size, shape.head_dim, variants.size());
  check_they_agree(variants, x);
  const Profile profile = profile_variants(opt, variants, x);
  show_the_ops(profile, variants);
  show_sdpa(profile);
  time_the_variants(variants, x);
  show_memory_against_seq(variants, shape, opt.size);
  show_a_fully_masked_row();
  report_profile(profile, false, opt.out, opt.tag(), "Lesson 11 · attention · " + opt.tag(), 15);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Default --size: the sequence length
  LessonDefaults defaults("lesson11", "11_attention",
                          "Lesson 11: causal attention four ways: the hidden copy, SDPA's backends, memory vs seq",
                          256);
  defaults.max_size = 4096;
  defaults.cpu_only_reason = "its SDPA backends are pinned on the CPU";
  defaults.float32_only_reason =
      "its four variants are compared in float32 (Part 3 saw the math path upcast to it anyway)";
  std::string batch_text = "1", heads_text = "4", head_dim_text = "32";
  defaults.extra = {{"--batch", "batch size", &batch_text},
                    {"--heads", "attention heads", &heads_text},
                    {"--head-dim", "width of one head", &head_dim_text}};
  const LessonOptions opt = parse_lesson_flags(argc, argv, defaults);
  const AttentionShape shape{size_flag(defaults.program, "--batch", batch_text, 64),
                             size_flag(defaults.program, "--heads", heads_text, 64),
                             size_flag(defaults.program, "--head-dim", head_dim_text, 512)};
  // float32, at the memory step's longest seq (2x --size): about five [batch, heads, seq, seq]
  // buffers (scores, scaled, the masked copy, softmax, the math path's mask) and q, k, v, out.
  const double b = double(shape.batch) * double(shape.heads), s = 2.0 * double(opt.size);
  require_memory(defaults.program, fmt::format("--size {} --batch {} --heads {}", opt.size, shape.batch, shape.heads),
                 4 * (5 * b * s * s + 7 * b * s * double(shape.head_dim)));
  return run_reporting_errors(defaults.program, [&] { return run(opt, shape); });
}
