#pragma once
/// \file
/// \brief Exercise 10: which op, at which input shapes, costs most?

#include <string>

#include "workbook/profiler/profile.h"

namespace exercises {

//! [contract]
/// The most expensive (op, input shapes) pair of a profile.
struct ShapeCost {
  std::string op;            ///< e.g. "aten::mm"
  std::string input_shapes;  ///< Python's str() of the shapes, e.g. "[[512, 512], [512, 512]]"
  double self_us = 0;        ///< its self CPU time, summed over its calls
  int calls = 0;             ///< how many calls had these shapes
  double share = 0;          ///< self_us over the profile's self CPU time: Python's self_cpu_time_total,
                             ///< every CPU event's self time, regions included (device work is
                             ///< not CPU time: kernels, memcpys and the GPU lane's mirrors of the
                             ///< regions, gpu_user_annotation; nor are memory records)
};

/// Among the profile's operators (every host event that is not a region, as the rows of Python's
/// table: ATen ops, and in a GPU trace runtime calls such as cudaLaunchKernel; not regions:
/// ProfilerStep#N and your own labels have self time too, but they are not ops; not device work or
/// memory records), the one whose calls with one list of input shapes have the most
/// self CPU time together. Lesson 10 printed a table grouped by shape but sorted by total time;
/// this asks a different question. Throws std::invalid_argument when the profile has no operator.
ShapeCost most_expensive_shape(const workbook::Profile& profile);
//! [contract]

}  // namespace exercises
