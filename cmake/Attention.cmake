# Scaled-dot-product attention, as this LibTorch has it (lesson 11), decided here so that no
# lesson reads LibTorch's version numbers itself:
#   WORKBOOK_HAVE_SDPA_BACKENDS  the public at::scaled_dot_product_attention with every backend's
#                                switch (2.4 and later: the cuDNN one is the newest)
#   WORKBOOK_HAVE_PRIVATE_SDPA   1.13's private at::_scaled_dot_product_attention (math only)
#   WORKBOOK_HAVE_SAFE_SOFTMAX   at::_safe_softmax, which the math path calls (2.5 and later)
# 2.0 to 2.3 have neither entry point lesson 11 is written for: it says so at build time.
set(WORKBOOK_HAVE_SDPA_BACKENDS 0)
set(WORKBOOK_HAVE_PRIVATE_SDPA 0)
set(WORKBOOK_HAVE_SAFE_SOFTMAX 0)
if(Torch_VERSION VERSION_GREATER_EQUAL 2.4)
  set(WORKBOOK_HAVE_SDPA_BACKENDS 1)
elseif(Torch_VERSION VERSION_LESS 2.0)
  set(WORKBOOK_HAVE_PRIVATE_SDPA 1)
endif()
if(Torch_VERSION VERSION_GREATER_EQUAL 2.5)
  set(WORKBOOK_HAVE_SAFE_SOFTMAX 1)
endif()
add_compile_definitions(WORKBOOK_HAVE_SDPA_BACKENDS=${WORKBOOK_HAVE_SDPA_BACKENDS}
                        WORKBOOK_HAVE_PRIVATE_SDPA=${WORKBOOK_HAVE_PRIVATE_SDPA}
                        WORKBOOK_HAVE_SAFE_SOFTMAX=${WORKBOOK_HAVE_SAFE_SOFTMAX})
