# Fails unless the AVX-512 code of the static library LIBRARY's module projection steps its product
# (a register tile of rows x W-panel vectors) with loads and FMAs: no run-time test of whether the
# output's tile spans two panels in every step (`testb`, the output's start was not known to be 0),
# and no row addresses computed in vector registers (`vpextrq`, LLVM's SLP vectorizer; held back for
# projection parts in codegen's src/emit/compile.cpp).
include(${CMAKE_CURRENT_LIST_DIR}/disassembly.cmake)
attngen_disassemble(${LIBRARY} code)
string(REGEX MATCH "<[^>]*projection[^>]*avx512_skylake[^>]*par_for_output[^>]*>:\n([^\n]+\n)+" product "${code}")
if(product STREQUAL "")
  message(FATAL_ERROR "${LIBRARY}: no AVX-512 projection product function")
endif()
# The task first packs its panel of W (whose tail is guarded by tests): count from the first FMA.
string(FIND "${product}" "vfmadd231ps" first_fma)
if(first_fma EQUAL -1)
  message(FATAL_ERROR "${LIBRARY}: no FMA in the AVX-512 projection")
endif()
string(SUBSTRING "${product}" ${first_fma} -1 product)
attngen_count_matches("vfmadd231ps" "${product}" fma_count)
attngen_count_matches("vpextrq|testb" "${product}" per_step_count)
# One run-time test outside the product's loops remains (the last row tile's guard).
if(fma_count LESS 16 OR per_step_count GREATER 2)
  message(FATAL_ERROR "${LIBRARY}: ${fma_count} FMAs and ${per_step_count} testb/vpextrq in the projection "
                      "(expected 16 or more FMAs, at most 2 testb/vpextrq)")
endif()
message(STATUS "${LIBRARY}: ${fma_count} FMAs, ${per_step_count} testb/vpextrq in the projection")
