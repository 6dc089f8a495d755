// Lesson 10 — where the time goes: input shapes and flame graphs (beyond the articles).
//
// A transformer-style block (projections, attention per head, an MLP) runs under the profiler with
// record_shapes. The lesson prints Python's group_by_input_shape table, writes the profile as
// collapsed stacks (the format Python's export_stacks writes, for speedscope or flamegraph.pl)
// and draws a flame graph of one run.
#include <torch/nn/functional/normalization.h>

#include <algorithm>

#include "workbook/findings/10_shapes_flame.h"
#include "workbook/lesson/answers.h"
#include "workbook/lesson/lesson_cli.h"
#include "workbook/lesson/lesson_output.h"
#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/flame_graph.h"
#include "workbook/profiler/key_averages.h"
#include "workbook/profiler/region.h"
#include "workbook/profiler/session.h"

namespace {

using namespace workbook;

struct Block {
  torch::Tensor w_qkv, w_out, w_up, w_down;
  std::int64_t heads;
  Block(std::int64_t dim, std::int64_t heads_) : heads(heads_) {
    w_qkv = torch::randn({dim, 3 * dim}) / std::sqrt(double(dim));
    w_out = torch::randn({dim, dim}) / std::sqrt(double(dim));
    w_up = torch::randn({dim, 4 * dim}) / std::sqrt(double(dim));
    w_down = torch::randn({4 * dim, dim}) / std::sqrt(4.0 * double(dim));
  }
  torch::Tensor forward(const torch::Tensor& x) {  // x: [tokens, dim]
    const std::int64_t tokens = x.size(0), dim = x.size(1), head_dim = dim / heads;
    torch::Tensor attended;
    {
      Region r("attention");
      const auto qkv = torch::mm(x, w_qkv).view({tokens, 3, heads, head_dim}).permute({1, 2, 0, 3});
      const auto scores = torch::bmm(qkv[0], qkv[1].transpose(1, 2)) / std::sqrt(double(head_dim));
      const auto context = torch::bmm(torch::softmax(scores, -1), qkv[2]);
      attended = torch::mm(context.permute({1, 0, 2}).reshape({tokens, dim}), w_out);
    }
    const auto h = torch::layer_norm(x + attended, {dim});
    Region r("mlp");
    return h + torch::mm(torch::gelu(torch::mm(h, w_up)), w_down);
  }
};

// Step 1: the block under the article's schedule, with record_shapes.
Profile profile_the_block(const LessonOptions& opt, Block& block, const torch::Tensor& x) {
  SessionOptions recording;
  recording.record_shapes = true;
  const Schedule schedule(1, opt.warmup, opt.steps);
  Session session(schedule, recording);
  for (int step = 0; step < schedule.total_steps(); ++step) {
    {
      Region r("block_forward");
      torch::Tensor y = block.forward(x);
    }
    session.step();
  }
  return session.finish();
}

// Step 2: Python's group_by_input_shape table: one row per (op, input shapes).
void show_the_table_by_shape(const Profile& profile) {
  const KeyAverages by_shape(profile, /*group_by_input_shape=*/true);
  fmt::print("\nkey_averages(group_by_input_shape=True).table(sort_by=\"cpu_time_total\", row_limit=14)\n{}",
             by_shape.table("cpu_time_total", 14));
  const Finding per_shape = findings10::one_row_per_shape(by_shape);
  claim(per_shape);
  answer("mm_rows_by_shape", per_shape);
  answer("top_op_owns_top_shape", findings10::top_op_owns_top_shape(KeyAverages(profile), by_shape));
  narrate(
      "Grouped by name alone, every aten::mm of the block is one row. Grouped by input shape, each "
      "distinct list of input shapes is a row of its own: the projection into q, k and v, the output "
      "projection and the MLP's two GEMMs differ in shape (the MLP's two do the same 2*T*d*4d FLOPs, the "
      "others fewer). Compare each row's time with its FLOPs (2*M*K*N, read from its input shapes) before "
      "concluding: cost need not follow the arithmetic (a smaller GEMM can take longer, on a "
      "loaded core or with a layout the BLAS handles less well). That is where to look before optimising: "
      "which op, at which shape, takes the time.");
}

// Step 3: the collapsed stacks (export_stacks' format) and the flame graph drawn from them.
void write_the_stacks_and_flame_graph(const LessonOptions& opt, const Profile& profile) {
  const std::string stacks = collapsed_stacks_text(profile);
  const auto stacks_path = opt.out / "stacks.txt", flame_path = opt.out / "flame.svg";
  FileSet stacks_and_flame;  // one set: an interrupted run leaves both old files or both new ones
  stacks_and_flame.stage(stacks_path, stacks);
  stacks_and_flame.stage(flame_path,
                         flame_graph_svg(profile, "Lesson 10 · flame graph of the recorded steps (self time)"));
  stacks_and_flame.commit();
  const Finding format = findings10::stacks_well_formed(stacks);
  claim(format);
  const auto count = std::count(stacks.begin(), stacks.end(), '\n');
  fmt::print("\nwrote {} ({} stacks) and {}\n", stacks_path.string(), count, flame_path.string());
  narrate(
      "A flame graph stacks every call path: the bottom row is the steps, above each box the calls made "
      "inside it, each box as wide as its own self time plus that of every box above it (the calls made "
      "inside it): its total time. Wide boxes near the top are "
      "where the time is actually spent. stacks.txt opens in https://www.speedscope.app or feeds "
      "flamegraph.pl. Python's export_stacks (torch/autograd/profiler_util.py) writes the same format from "
      "Python's call stack; here the "
      "frames are the profile's own tree of regions and ops.");
}

int run(const LessonOptions& opt, std::int64_t dim, std::int64_t heads) {
  print_lesson_header("Lesson 10 · Where the time goes: input shapes and flame graphs");
  torch::manual_seed(0);
  torch::NoGradGuard no_grad;
  // The workload: a transformer-style block and its input.
  Block block(dim, heads);
  const auto x = torch::randn({opt.size, dim});
  const Profile profile = profile_the_block(opt, block, x);
  fmt::print("\na block of {} tokens, width {}, {} heads: projections, attention per head, an MLP\n", opt.size, dim,
             heads);
  show_the_table_by_shape(profile);
  write_the_stacks_and_flame_graph(opt, profile);
  report_profile(profile, false, opt.out, opt.tag(), "Lesson 10 · shapes and flame graphs · " + opt.tag(), 12);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Default --size: the tokens in the block's input
  LessonDefaults defaults("lesson10", "10_shapes_flame",
                          "Lesson 10: input shapes (group_by_input_shape) and flame graphs (collapsed stacks)", 256);
  defaults.max_size = 8192;
  defaults.cpu_only_reason = "its block is a CPU workload";
  defaults.float32_only_reason = "its block is built in float32";
  std::string dim_text = "256", heads_text = "4";
  defaults.extra = {{"--dim", "model width", &dim_text},
                    {"--heads", "attention heads (must divide --dim)", &heads_text}};
  const LessonOptions opt = parse_lesson_flags(argc, argv, defaults);
  const std::int64_t dim = size_flag(defaults.program, "--dim", dim_text, 4096);
  const std::int64_t heads = size_flag(defaults.program, "--heads", heads_text, 64);
  if (dim % heads != 0) usage_error(defaults.program, fmt::format("--heads {} does not divide --dim {}", heads, dim));
  // float32: the 12 dim^2 weights, three [heads, tokens, tokens] score buffers (scores, scaled,
  // softmax) and about 20 [tokens, dim] activations.
  const double t = double(opt.size), d = double(dim);
  require_memory(defaults.program, fmt::format("--size {} --dim {} --heads {}", opt.size, dim, heads),
                 4 * (12 * d * d + 3 * double(heads) * t * t + 20 * t * d));
  return run_reporting_errors(defaults.program, [&] { return run(opt, dim, heads); });
}
