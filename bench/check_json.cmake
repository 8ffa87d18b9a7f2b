# Runs attngen-bench on one case of each kind, a dense one and a KV-cache one (prefill_chunk, the
# cheapest), and checks that each JSON line carries every documented field.
execute_process(COMMAND ${BENCH} --case mha_small --case prefill_chunk --no-peers --json ${JSON}
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "attngen-bench exited with ${status}")
endif()
file(READ ${JSON} lines)
string(REGEX MATCH "{\"case\":\"mha_small\"[^\n]*" line "${lines}")
if(NOT line)
  message(FATAL_ERROR "no mha_small line in:\n${lines}")
endif()
foreach(field case B H KVH D Lq Lk causal dtype seconds_median gflops peak_gflops ratio_to_peak gbps
              triad_gbps peak_rss_mib peer_onednn_gflops speedup_vs_onednn peer_pytorch_gflops speedup_vs_pytorch)
  if(NOT line MATCHES "\"${field}\":")
    message(FATAL_ERROR "field ${field} missing from:\n${line}")
  endif()
endforeach()
string(REGEX MATCH "{\"case\":\"prefill_chunk\"[^\n]*" line "${lines}")
if(NOT line)
  message(FATAL_ERROR "no prefill_chunk line in:\n${lines}")
endif()
foreach(field case kv_dtype B H KVH D Lq Lk query_lengths kv_lengths page_size causal dtype seconds_median gflops
              peak_gflops ratio_to_peak gbps triad_gbps ratio_to_triad tokens_per_second tokens_per_second_over_f32
              peak_rss_mib compared_with compared_seconds paged_over_dense_time ragged_over_separate_time
              pytorch_padded_seconds speedup_vs_pytorch_padded targets_met)
  if(NOT line MATCHES "\"${field}\":")
    message(FATAL_ERROR "field ${field} missing from:\n${line}")
  endif()
endforeach()
