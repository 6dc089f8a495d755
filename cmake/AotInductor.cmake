# AOTInductor: LibTorch 2.6 and later load packages compiled ahead of time by Python's
# torch._inductor.aoti_compile_and_package (torch/csrc/inductor/aoti_package/model_package_loader.h).
# WORKBOOK_HAVE_AOTI is ON where this LibTorch has the loader; lesson 06 then runs the real
# compiler beside its hand-made one, compiling through python3 (of the same torch version) into
# a cache in the build folder.
set(WORKBOOK_HAVE_AOTI OFF)
if(Torch_VERSION VERSION_GREATER_EQUAL 2.6)
  find_file(WORKBOOK_AOTI_LOADER_HEADER torch/csrc/inductor/aoti_package/model_package_loader.h
    PATHS ${TORCH_INCLUDE_DIRS} NO_DEFAULT_PATH)
  if(WORKBOOK_AOTI_LOADER_HEADER)
    set(WORKBOOK_HAVE_AOTI ON)
  endif()
endif()
message(STATUS "workbook: AOTInductor package loader: ${WORKBOOK_HAVE_AOTI}")
