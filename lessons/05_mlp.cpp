// Lesson 05 — the MLP (Part 2 of the articles): down(gelu_tanh(gate(x)) * up(x)).
//
// The block is a torch::nn::Module with three registered Linear layers; every stage runs in its
// own region inside a forward region, so the profile reads like the code. Per forward: the op
// counts, the FLOPs, and how the time splits between GEMMs and elementwise ops.
#include <torch/cuda.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <map>

#include "workbook/findings/05_mlp.h"
#include "workbook/lesson/answers.h"
#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"
#include "workbook/profiler/gpu_analysis.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"

namespace {

using namespace workbook;
namespace nn = torch::nn;

// The articles' GeGLU block, or the plain Linear-ReLU stack, as one module.
struct MlpImpl : nn::Module {
  MlpImpl(bool geglu, std::int64_t dim, std::int64_t hidden) : geglu_(geglu) {
    const bool bias = !geglu;  // the articles' GeGLU Linears have no bias
    first = register_module("first", nn::Linear(nn::LinearOptions(dim, hidden).bias(bias)));
    second = register_module("second", nn::Linear(nn::LinearOptions(geglu ? dim : hidden, hidden).bias(bias)));
    last = register_module("last", nn::Linear(nn::LinearOptions(hidden, dim).bias(bias)));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    Region whole("mlp_forward");
    if (!geglu_) return last->forward(torch::relu(second->forward(torch::relu(first->forward(x)))));
    torch::Tensor gate, up, hidden;
    {
      Region r("gate_proj");
      gate = first->forward(x);
    }
    {
      Region r("up_proj");
      up = second->forward(x);
    }
    {
      Region r("act_mul");
      hidden = torch::gelu(gate, "tanh") * up;
    }
    Region r("down_proj");
    return last->forward(hidden);
  }

  bool geglu_;
  nn::Linear first{nullptr}, second{nullptr}, last{nullptr};
};
TORCH_MODULE(Mlp);

bool is_gemm(const std::string& name) { return name == "aten::mm" || name == "aten::addmm" || name == "aten::bmm"; }
bool is_elementwise(const std::string& name) {
  return name == "aten::gelu" || name == "aten::mul" || name == "aten::relu" || name == "aten::add" ||
         name == "aten::add_";
}

// The workload: the block, GeGLU or plain, and the input it runs on.
struct MlpForward {
  bool geglu = true;
  std::int64_t seq = 0, dim = 0, hidden = 0;
  Mlp mlp{nullptr};
  torch::Tensor x;
};

MlpForward make_mlp_forward(const LessonOptions& opt, bool geglu, std::int64_t seq, std::int64_t dim,
                            std::int64_t hidden) {
  torch::manual_seed(0);
  MlpForward work{geglu, seq, dim, hidden, Mlp(geglu, dim, hidden), {}};
  work.mlp->to(opt.device, opt.dtype);
  work.x = geglu ? torch::randn({opt.size, seq, dim}, torch::TensorOptions().dtype(opt.dtype).device(opt.device))
                 : torch::randn({opt.size * seq, dim}, torch::TensorOptions().dtype(opt.dtype).device(opt.device));
  return work;
}

// Per forward: the op counts, the FLOPs and the time in GEMMs and elementwise ops, on one clock.
struct ForwardCost {
  std::map<std::string, int> counts;
  double gemm_us = 0, elementwise_us = 0, flops = 0, total_us = 0;
  std::int64_t kernel_count = 0;
  const char* clock = "host time";
};

void describe_the_mlp(const LessonOptions& opt, const MlpForward& work) {
  std::int64_t parameters = 0;
  for (const auto& p : work.mlp->parameters()) parameters += p.numel();
  fmt::print("\n{} MLP, dim {}, hidden {}, input {} ({}, {}), {} parameters\n", work.geglu ? "GeGLU" : "plain",
             work.dim, work.hidden, fmt::join(work.x.sizes(), "x"), opt.dtype_name(), opt.device_name(), parameters);
}

Profile profile_the_forwards(const LessonOptions& opt, MlpForward& work) {
  SessionOptions recording;
  recording.record_shapes = true;
  recording.with_flops = true;
  recording.cuda = opt.device.is_cuda();
  const Schedule schedule(1, opt.warmup, opt.steps);
  Session session(schedule, recording);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    torch::Tensor y = work.mlp->forward(work.x);
    if (opt.device.is_cuda()) torch::cuda::synchronize();
    session.step();
  }
  return session.finish();
}

// The last recorded forward, which the rest of the lesson reads.
EventId show_one_forward(const Profile& profile, bool geglu) {
  const auto forwards = profile.find("mlp_forward");
  if (forwards.empty()) throw std::runtime_error("no forward was recorded");
  const auto f = forwards.back();
  narrate(
      fmt::format("One forward (the last recorded), as the profiler saw it, {} levels deep (the ops beneath "
                  "the last level are left out; the table at the end counts them all):",
                  geglu ? 3 : 2));
  fmt::print("{}", format_tree(profile, f, geglu ? 3 : 2));
  return f;
}

ForwardCost count_the_ops_and_flops(const Profile& profile, EventId f) {
  ForwardCost cost;
  for (auto d : profile.descendants(f)) {
    const Event& e = profile[d];
    if (e.category != Category::cpu_op) continue;
    ++cost.counts[e.name];
    cost.flops += double(e.flops);
    if (is_gemm(e.name)) cost.gemm_us += double(profile.self_ns(d)) / 1e3;
    if (is_elementwise(e.name)) cost.elementwise_us += double(profile.self_ns(d)) / 1e3;
  }
  cost.total_us = double(profile.total_ns(f)) / 1e3;
  return cost;
}

// Kernels hang under the launch that queued them (correlation ids): the forward's subtree holds
// exactly its kernels, and the same analysis as `workbook trace --gpu` counts and times them.
void show_the_kernels_and_time_them(const Profile& profile, EventId f, ForwardCost& cost) {
  std::vector<Event> forward_events{profile[f]};
  for (auto d : profile.descendants(f)) forward_events.push_back(profile[d]);
  const GpuAnalysis forward_gpu = analyze_gpu(Profile(std::move(forward_events)));
  for (const KernelUse& k : forward_gpu.kernels) cost.kernel_count += k.count;
  if (cost.kernel_count > 0) {
    fmt::print("\nkernels per forward: {}\n", cost.kernel_count);
    for (const KernelUse& k : forward_gpu.kernels)
      fmt::print("  {} x{}  {}\n", k.name.substr(0, 100), k.count, format_time_us(double(k.total_ns) / 1e3));
    // On a GPU the ops' CPU time is launch cost: the work is the kernels' device time.
    const auto stats = profile.stats();
    cost.gemm_us = cost.elementwise_us = 0;
    for (auto d : profile.descendants(f)) {
      const Event& e = profile[d];
      if (e.category != Category::cpu_op) continue;
      if (is_gemm(e.name)) cost.gemm_us += double(stats[d].self_device_ns) / 1e3;
      if (is_elementwise(e.name)) cost.elementwise_us += double(stats[d].self_device_ns) / 1e3;
    }
    for (const DeviceUse& d : forward_gpu.devices) cost.total_us = double(d.busy_ns) / 1e3;
    cost.clock = "GPU busy time (the kernels' device time)";
  }
}

void print_where_the_time_goes(const ForwardCost& cost) {
  const double total_us = cost.total_us;
  fmt::print("\nops in one forward:");
  for (const auto& [name, n] : cost.counts) fmt::print(" {} x{}", name, n);
  fmt::print("\nFLOPs per forward (profiler's estimate): {:.3f} GFLOP -> {:.1f} GFLOP/s over the {}\n",
             cost.flops / 1e9, cost.flops / (total_us * 1e3), cost.clock);
  fmt::print(
      "{} of the forward shown (the last recorded) {:.1f} us, by the ops' self {} time: GEMMs {:.1f}% , elementwise "
      "{:.1f}%, the rest {:.1f}%\n",
      cost.clock, total_us, cost.kernel_count > 0 ? "device" : "CPU", 100 * cost.gemm_us / total_us,
      100 * cost.elementwise_us / total_us, 100 * (total_us - cost.gemm_us - cost.elementwise_us) / total_us);
}

void compare_with_the_articles_five_kernels(const Profile& profile, EventId f, bool geglu) {
  if (!geglu) {
    // What this forward ran, counted: a 2-D input with a bias makes F::linear an addmm, any other a matmul.
    narrate(fmt::format("The plain block ran {} aten::addmm, {} aten::matmul and {} aten::relu in this forward.",
                        profile.count_under(f, "aten::addmm"), profile.count_under(f, "aten::matmul"),
                        profile.count_under(f, "aten::relu")));
    return;
  }
  const Finding five = findings05::geglu_runs_five_compute_ops(profile, f);
  claim(five);
  answer("five_compute_ops", five);
  answer("gemms_per_forward", std::to_string(findings05::gemms_in_forward(profile, f)), five.evidence);
  narrate(
      std::string("The articles' GeGLU forward ran exactly 5 kernels on their A100: 3 GEMMs (0.17-0.19 ms each), "
                  "a GELU and a multiply. ") +
      (five.holds
           ? "Here the same 5 compute ops appear, plus views: a 3-D input is folded into 2-D for the GEMM "
             "(aten::reshape, with aten::_reshape_alias or aten::view beneath it by version), and the result unfolded "
             "(aten::_unsafe_view). Like aten::t in "
             "lesson 03, these are metadata-only."
           : "Here the compute ops differ from theirs: see the evidence above."));
}

void write_the_reports(const LessonOptions& opt, const MlpForward& work, const Profile& profile) {
  const std::string tag = fmt::format("{}_{}x{}_{}_{}_{}", work.geglu ? "geglu" : "plain", opt.size, work.seq, work.dim,
                                      opt.dtype_name(), opt.device_name());
  report_profile(profile, opt.device.is_cuda(), opt.out, tag, "Lesson 05 · MLP · " + tag, 20);
}

int run(const LessonOptions& opt, bool geglu, std::int64_t seq, std::int64_t dim, std::int64_t hidden) {
  print_lesson_header("Lesson 05 · The MLP");
  MlpForward work = make_mlp_forward(opt, geglu, seq, dim, hidden);
  torch::NoGradGuard inference;
  // The block's kind, sizes, input shape and parameter count.
  describe_the_mlp(opt, work);
  // Nothing printed: one forward per step of the schedule, recorded with shapes and FLOPs.
  const Profile profile = profile_the_forwards(opt, work);
  // The tree of one forward: a region per stage, the ops beneath each.
  const EventId forward = show_one_forward(profile, geglu);
  // Nothing printed: that forward's ops, FLOPs and GEMM and elementwise self times, added up.
  ForwardCost cost = count_the_ops_and_flops(profile, forward);
  // On a GPU, the forward's kernels; the time split then uses their device time.
  show_the_kernels_and_time_them(profile, forward, cost);
  // Op counts, FLOPs and GFLOP/s, and the share of time in GEMMs and elementwise ops.
  print_where_the_time_goes(cost);
  // The articles' 5 kernels per GeGLU forward against the compute ops seen here.
  compare_with_the_articles_five_kernels(profile, forward, geglu);
  // The statistics table, the trace and the timeline.
  write_the_reports(opt, work, profile);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Default --size: batch; the articles used 64 with seq 128, dim 768, hidden 3072 on a GPU
  LessonDefaults defaults("lesson05", "05_mlp", "Lesson 05: the articles' GeGLU MLP (or a plain one), stage by stage",
                          8);
  std::string variant = "geglu", seq_text, dim_text, hidden_text;
  defaults.extra = {{"--variant", "geglu | plain", &variant},
                    {"--seq", "sequence length (default 64 on CPU, 128 on CUDA)", &seq_text},
                    {"--dim", "model dimension (default 256 on CPU, 768 on CUDA)", &dim_text},
                    {"--hidden", "hidden dimension (default 1024 on CPU, 3072 on CUDA)", &hidden_text}};
  const LessonOptions opt = parse_lesson_flags(argc, argv, defaults);
  if (variant != "geglu" && variant != "plain")
    usage_error(defaults.program, fmt::format("--variant must be geglu or plain (got '{}')", variant));
  const bool cuda = opt.device.is_cuda();
  const std::int64_t seq = seq_text.empty() ? (cuda ? 128 : 64) : size_flag(defaults.program, "--seq", seq_text, 65536);
  const std::int64_t dim =
      dim_text.empty() ? (cuda ? 768 : 256) : size_flag(defaults.program, "--dim", dim_text, 65536);
  const std::int64_t hidden =
      hidden_text.empty() ? (cuda ? 3072 : 1024) : size_flag(defaults.program, "--hidden", hidden_text, 262144);
  // The three weights (3 x dim x hidden), about four [rows, hidden] and two [rows, dim] activations.
  const double rows = double(opt.size) * double(seq), d = double(dim), h = double(hidden);
  require_memory(defaults.program, fmt::format("--size {} --seq {} --dim {} --hidden {}", opt.size, seq, dim, hidden),
                 double(c10::elementSize(opt.dtype)) * (3 * d * h + 4 * rows * h + 2 * rows * d));
  return workbook::run_reporting_errors(defaults.program,
                                        [&] { return run(opt, variant == "geglu", seq, dim, hidden); });
}
