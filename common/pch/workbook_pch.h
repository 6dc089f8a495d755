// The precompiled header shared by every target that uses LibTorch. torch/types.h rather than
// torch/torch.h: it has tensors and every ATen op, and a small exercise compiles in ~3 s
// against it instead of ~12 s against torch.h (measured on the 2-core machine).
#include <fmt/format.h>
#include <torch/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>
