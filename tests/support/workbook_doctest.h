#pragma once
// Include this, never <doctest/doctest.h>, in tests that see LibTorch headers.
//
// LibTorch's headers define a global CHECK (glog's in Debian's build, c10's own elsewhere) that
// aborts the process when its condition is false. Whichever definition comes last wins, so a
// test that included doctest first would abort on its first failing CHECK instead of reporting
// it. Here LibTorch comes first, its CHECK family is removed, and doctest's takes the names.
// tests/support/failing_check_probe.cpp proves it.
#include <torch/types.h>

#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LE
#undef CHECK_LT
#undef CHECK_GE
#undef CHECK_GT
#undef CHECK_NOTNULL
#undef CHECK_STREQ
#undef CHECK_STRNE
#undef CHECK_STRCASEEQ
#undef CHECK_STRCASENE
#undef CHECK_DOUBLE_EQ
#undef CHECK_NEAR

#include <doctest/doctest.h>
