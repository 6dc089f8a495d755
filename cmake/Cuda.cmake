# The CUDA Toolkit: WORKBOOK_CUDA=AUTO (default: on when a CUDA compiler is found), ON (required)
# or OFF. CUDA sources compile wherever nvcc is, GPU or not; only running them needs a GPU.
# Sets WORKBOOK_HAVE_CUDA and, with it, the CUDA language and the CUDA::cudart/cublas/cublasLt
# targets.
set(WORKBOOK_CUDA AUTO CACHE STRING "Build the CUDA parts: AUTO, ON or OFF")
set_property(CACHE WORKBOOK_CUDA PROPERTY STRINGS AUTO ON OFF)
if(NOT WORKBOOK_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "WORKBOOK_CUDA must be AUTO, ON or OFF (got '${WORKBOOK_CUDA}')")
endif()

set(WORKBOOK_HAVE_CUDA OFF)
if(NOT WORKBOOK_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # No GPU to ask at build time in CI, so name the architectures: Turing (the oldest CUDA 13
    # supports, its PTX runs on anything newer) and Hopper (the articles' H100/H200) as machine
    # code. A learner with a GPU can pass -DCMAKE_CUDA_ARCHITECTURES=native.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 75 90)
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD ${CMAKE_CXX_STANDARD})
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(WORKBOOK_HAVE_CUDA ON)
    message(STATUS "workbook: CUDA ${CMAKE_CUDA_COMPILER_VERSION} (${CMAKE_CUDA_COMPILER}), architectures ${CMAKE_CUDA_ARCHITECTURES}")
  elseif(WORKBOOK_CUDA STREQUAL "ON")
    message(FATAL_ERROR "WORKBOOK_CUDA=ON but no CUDA compiler was found: put nvcc on PATH or set CMAKE_CUDA_COMPILER")
  endif()
endif()
if(NOT WORKBOOK_HAVE_CUDA)
  message(STATUS "workbook: no CUDA (WORKBOOK_CUDA=${WORKBOOK_CUDA}); lesson 07 builds as a one-line message")
endif()
