# Generates modules with statistics and checks their parts: the projections once per target, shared
# by the variants, and every part's code in one CPU library. GENERATOR, OUTPUT_DIR are given.

# Generates the module `description` as `name` for x86-64-linux into a fresh OUTPUT_DIR; its
# statistics go to `out`.
function(generate_module description name)
  file(REMOVE_RECURSE ${OUTPUT_DIR})
  execute_process(
    COMMAND ${GENERATOR} generate --describe "${description}" --name ${name} --output-dir ${OUTPUT_DIR} --stats
            --target x86-64-linux
    RESULT_VARIABLE status OUTPUT_VARIABLE stats ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "generate failed:\n${err}")
  endif()
  set(out "${stats}" PARENT_SCOPE)
endfunction()

generate_module("kind = module; embed_dim = 32; heads = 4; need_weights = per_head" encoder)
foreach(part general short_keys single_query short_queries projection weights)
  string(REGEX MATCHALL "encoder +x86-64-linux +${part} +[0-9.]+ +[0-9.]+" rows "${out}")
  list(LENGTH rows count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "expected one statistics row for ${part}, got ${count}:\n${out}")
  endif()
  if(NOT EXISTS ${OUTPUT_DIR}/encoder_halide_${part}.h)
    message(FATAL_ERROR "no header for ${part}")
  endif()
  if(EXISTS ${OUTPUT_DIR}/encoder_halide_${part}.a)
    message(FATAL_ERROR "${part}'s own library was left beside encoder_halide_cpu.a")
  endif()
endforeach()
if(out MATCHES "out_projection")
  message(FATAL_ERROR "an f32 module compiled a second linear layer for its output:\n${out}")
endif()
if(NOT EXISTS ${OUTPUT_DIR}/encoder_halide_cpu.a)
  message(FATAL_ERROR "generate did not write encoder_halide_cpu.a")
endif()
# A self-attention module is generated without single_query (short_keys serves its shortest calls).
generate_module("kind = module; embed_dim = 32; heads = 4; self_attention = true" self_attention)
if(out MATCHES "single_query" OR EXISTS ${OUTPUT_DIR}/self_attention_halide_single_query.h)
  message(FATAL_ERROR "a self-attention module was generated with single_query:\n${out}")
endif()
if(NOT out MATCHES "self_attention +x86-64-linux +short_keys")
  message(FATAL_ERROR "no short_keys row:\n${out}")
endif()
