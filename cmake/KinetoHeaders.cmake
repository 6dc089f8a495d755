# LibTorch's profiler headers include libkineto's ActivityType.h even in builds without Kineto,
# and Debian 12's libtorch-dev does not ship it. Where it is missing, the workbook's stand-in
# (common/compat/kineto) is put on the include path of the one file that needs it.
include(CheckIncludeFileCXX)
set(CMAKE_REQUIRED_INCLUDES ${TORCH_INCLUDE_DIRS})
set(CMAKE_REQUIRED_QUIET ON)
check_include_file_cxx(ActivityType.h WORKBOOK_TORCH_HAS_ACTIVITY_TYPE_H)
unset(CMAKE_REQUIRED_INCLUDES)
if(WORKBOOK_TORCH_HAS_ACTIVITY_TYPE_H)
  set(WORKBOOK_KINETO_COMPAT_INCLUDE "")
else()
  set(WORKBOOK_KINETO_COMPAT_INCLUDE "${PROJECT_SOURCE_DIR}/common/compat/kineto")
  message(STATUS "workbook: LibTorch lacks libkineto's ActivityType.h; using the stand-in")
endif()
