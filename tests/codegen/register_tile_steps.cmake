# Fails unless the AVX-512 code of the static library LIBRARY's module part PART (projection or
# weights) steps its register-tiled product with loads and FMAs alone: at least 16 FMAs, and at most
# 2 matches of FORBIDDEN (in the projection, from the first FMA on). The projection's FORBIDDEN is
# `vpextrq|testb`: no run-time test of whether the output's tile spans two panels in every step
# (`testb`, the output's start was not known to be 0); both parts' include `vpextrq`: no row
# addresses computed in vector registers (LLVM's SLP vectorizer, held back for these parts in
# codegen's src/emit/compile.cpp).
include(${CMAKE_CURRENT_LIST_DIR}/disassembly.cmake)
attngen_disassemble(${LIBRARY} code)
set(loop_of_projection output)
set(loop_of_weights weights)
string(REGEX MATCH "<[^>]*${PART}[^>]*avx512_skylake[^>]*par_for_${loop_of_${PART}}[^>]*>:\n([^\n]+\n)+" product
       "${code}")
if(product STREQUAL "")
  message(FATAL_ERROR "${LIBRARY}: no AVX-512 ${PART} function")
endif()
string(FIND "${product}" "vfmadd231ps" first_fma)
if(first_fma EQUAL -1)
  message(FATAL_ERROR "${LIBRARY}: no FMA in the AVX-512 ${PART}")
endif()
# The projection's task first packs its panel of W (whose tail is guarded by tests): count from the
# first FMA. The weights' addresses, once vectorized, may be computed before their loops: count all.
if(PART STREQUAL "projection")
  string(SUBSTRING "${product}" ${first_fma} -1 product)
endif()
attngen_count_matches("vfmadd231ps" "${product}" fma_count)
attngen_count_matches("${FORBIDDEN}" "${product}" per_step_count)
# One run-time test outside the projection's loops remains (the last row tile's guard).
if(fma_count LESS 16 OR per_step_count GREATER 2)
  message(FATAL_ERROR "${LIBRARY}: ${fma_count} FMAs and ${per_step_count} of ${FORBIDDEN} in the ${PART} "
                      "(expected 16 or more FMAs, at most 2 of ${FORBIDDEN})")
endif()
message(STATUS "${LIBRARY}: ${fma_count} FMAs, ${per_step_count} of ${FORBIDDEN} in the ${PART}")
