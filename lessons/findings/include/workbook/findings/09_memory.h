#pragma once
/// \file
/// \brief Lesson 09's findings: what a GeGLU forward and a training step keep alive, in bytes.
///
/// Byte counts are float32 buffers of the lesson's MLP: `activation` is one [T, hidden] buffer,
/// `output` one [T, dim].

#include <cstdint>
#include <string>
#include <vector>

#include "workbook/findings/finding.h"
#include "workbook/profiler/key_averages.h"

namespace workbook::findings09 {

/// One forward's memory, above the level at its start.
struct ForwardBytes {
  std::int64_t peak = 0;  ///< the most live at once
  std::int64_t kept = 0;  ///< still live at its end
};

/// Without autograd both ways of writing the forward keep nothing but the output.
Finding no_grad_keeps_only_the_output(const ForwardBytes& expression, const ForwardBytes& staged, std::int64_t output);

/// A temporary lives until the end of its full expression: as one expression the peak is four
/// [T, hidden] buffers plus the output; statement by statement max(3 [T, hidden], [T, hidden] + output).
Finding temporaries_live_to_the_semicolon(const ForwardBytes& expression, const ForwardBytes& staged,
                                          std::int64_t activation, std::int64_t output);

/// With autograd the forward keeps four [T, hidden] buffers (and the output) for backward.
Finding autograd_keeps_four_buffers(const ForwardBytes& training, std::int64_t activation, std::int64_t output);

/// Live bytes of one recorded training step.
struct StepBytes {
  std::int64_t at_step_start = 0;     ///< when the step began
  std::int64_t at_forward_start = 0;  ///< when its forward began
  std::int64_t at_step_end = 0;       ///< when it ended
};

/// Every step ends holding just its weight gradients (`gradients` bytes above its forward's start),
/// and every later step's zero_grad frees the previous ones before its forward.
Finding steps_keep_only_gradients(const std::vector<StepBytes>& steps, std::int64_t gradients);

/// The step's peak comes in backward: `peak_phase` is the phase of the event that reached it.
Finding peak_in_backward(const std::string& peak_phase, const std::string& evidence);

/// Self CPU Mem nets each op's own allocations against its own frees: MulBackward0's autograd node
/// (which frees the saved buffers) is negative, aten::mul (which allocates) positive.
Finding self_memory_nets(const KeyAverages& averages);

}  // namespace workbook::findings09
