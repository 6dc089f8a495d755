#include "workbook/findings/09_memory.h"

#include <fmt/format.h>

#include <algorithm>

#include "workbook/profiler/format.h"

namespace workbook::findings09 {

Finding no_grad_keeps_only_the_output(const ForwardBytes& expression, const ForwardBytes& staged, std::int64_t output) {
  return {expression.kept == output && staged.kept == output, "without autograd a forward keeps nothing but its output",
          fmt::format("kept {} and {} bytes, the output is {} bytes", expression.kept, staged.kept, output)};
}

Finding temporaries_live_to_the_semicolon(const ForwardBytes& expression, const ForwardBytes& staged,
                                          std::int64_t activation, std::int64_t output) {
  const std::int64_t staged_expected = std::max(3 * activation, activation + output);
  return {expression.peak == 4 * activation + output && staged.peak == staged_expected,
          "in C++ a temporary lives until the end of its full expression (the ';'): written as one expression the "
          "forward holds the gate's output, gelu's, up's and the product together while down runs. Statement by "
          "statement each dies once its last user has run, and the peak falls to the larger of three [T, hidden] "
          "buffers (while mul runs) and one plus the output (while down runs)",
          fmt::format("peaks {} = 4 x {} + {} and {} = max(3 x {}, {} + {}) bytes", expression.peak, activation, output,
                      staged.peak, activation, activation, output)};
}

Finding autograd_keeps_four_buffers(const ForwardBytes& training, std::int64_t activation, std::int64_t output) {
  return {training.kept == 4 * activation + output,
          "with autograd the forward keeps four [T, hidden] buffers for backward: the gate's output (gelu's "
          "backward needs its input), gelu's and up's outputs (each factor's gradient needs the other factor) and "
          "the product (down's weight gradient needs it)",
          fmt::format("kept {} = 4 x {} + {} (the output) bytes", training.kept, activation, output)};
}

Finding steps_keep_only_gradients(const std::vector<StepBytes>& steps, std::int64_t gradients) {
  std::size_t ending_with_gradients = 0, freeing_them = 0;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    ending_with_gradients += steps[k].at_step_end - steps[k].at_forward_start == gradients;
    if (k > 0) freeing_them += steps[k].at_forward_start - steps[k].at_step_start == -gradients;
  }
  return {
      !steps.empty() && ending_with_gradients == steps.size() && freeing_them == steps.size() - 1,
      "a step ends holding just its three weight gradients (activations, loss buffers and the gradients of "
      "activations are all freed), and the next step's zero_grad (set to none) frees them",
      fmt::format("{} of {} steps end {} bytes (the gradients) above their forward's start; {} of {} later steps "
                  "free them before their forward",
                  ending_with_gradients, steps.size(), gradients, freeing_them, steps.empty() ? 0 : steps.size() - 1)};
}

Finding peak_in_backward(const std::string& peak_phase, const std::string& evidence) {
  return {peak_phase == "backward",
          "the step's peak comes in backward, not at the end of the forward: backward allocates gradients while "
          "the saved activations are still alive and frees each saved buffer only once its node has run",
          evidence};
}

Finding self_memory_nets(const KeyAverages& averages) {
  const KeyAverage* releasing = averages.find("autograd::engine::evaluate_function: MulBackward0");
  const KeyAverage* allocating = averages.find("aten::mul");
  return {releasing && allocating && releasing->self_cpu_memory_bytes < 0 && allocating->self_cpu_memory_bytes > 0,
          "Self CPU Mem nets each op's own allocations against its own frees: the engine's evaluate_function "
          "around an autograd node, which frees what the node saved and the gradient it consumed, shows negative "
          "bytes (below the rows printed), the ops that allocate show positive ones",
          fmt::format("Self CPU Mem: autograd::engine::evaluate_function: MulBackward0 {}, aten::mul {}",
                      releasing ? format_memory(releasing->self_cpu_memory_bytes) : "no row",
                      allocating ? format_memory(allocating->self_cpu_memory_bytes) : "no row")};
}

}  // namespace workbook::findings09
