# Runs the generator on a spec file with two kernels, asking for statistics and every inspection
# output, and checks what it wrote. GENERATOR, SPEC, OUTPUT_DIR are given.
file(REMOVE_RECURSE ${OUTPUT_DIR})
file(MAKE_DIRECTORY ${OUTPUT_DIR})
execute_process(
  COMMAND ${GENERATOR} generate --spec ${SPEC} --output-dir ${OUTPUT_DIR} --stats --target x86-64-linux-avx2-fma-f16c
          --target x86-64-linux --target x86-64-linux-cuda-cuda_capability_80 --emit stmt_html --emit assembly
          --emit gpu_source
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "generate failed:\n${err}")
endif()
foreach(kernel prefill windowed)
  foreach(file ${kernel}.hpp ${kernel}.h ${kernel}.cpp ${kernel}_halide_cpu.a ${kernel}_halide_cuda.a
               ${kernel}_general-x86-64-linux.stmt.html ${kernel}_general-x86-64-linux-avx2-f16c-fma.s
               ${kernel}_cuda.ptx)
    if(NOT EXISTS ${OUTPUT_DIR}/${file})
      message(FATAL_ERROR "generate did not write ${file}; it wrote:\n${err}")
    endif()
  endforeach()
  if(EXISTS ${OUTPUT_DIR}/${kernel}_halide_general.a)
    message(FATAL_ERROR "the general variant's own library was left beside ${kernel}_halide_cpu.a")
  endif()
  # Progress: each kernel's wall time, and processor time and size per target.
  if(NOT err MATCHES "${kernel} generated in [0-9.]+ s" OR NOT err MATCHES "x86-64-linux +[0-9.]+ s CPU +[0-9.]+ KB")
    message(FATAL_ERROR "no time per kernel and target on stderr:\n${err}")
  endif()
  # Statistics: one row per kernel, target and part.
  if(NOT out MATCHES "${kernel} +x86-64-linux-cuda-cuda_capability_80 +cuda +[0-9.]+ +[0-9.]+")
    message(FATAL_ERROR "no statistics row for ${kernel}'s CUDA code:\n${out}")
  endif()
endforeach()
file(READ ${OUTPUT_DIR}/prefill_cuda.ptx ptx)
if(NOT ptx MATCHES "\\.version" OR NOT ptx MATCHES "\\.entry")
  message(FATAL_ERROR "prefill_cuda.ptx is not PTX")
endif()
file(READ ${OUTPUT_DIR}/windowed.hpp header)
if(NOT header MATCHES "mask_mod = and\\(le\\(kv, q\\)" OR NOT header MATCHES "attngen_version")
  message(FATAL_ERROR "windowed.hpp does not record its description and version")
endif()
