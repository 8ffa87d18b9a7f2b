# Fails unless the static library LIBRARY's code prefetches with `prefetcht0` only: code that prefetches
# is compiled by llc with its prefetches into every cache level (codegen's src/emit/llc_object.hpp),
# none left as Halide's `prefetchnta`.
execute_process(COMMAND ${OBJDUMP} -d ${LIBRARY} OUTPUT_VARIABLE code RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${OBJDUMP} failed on ${LIBRARY}")
endif()
string(REGEX MATCHALL "prefetcht0" into_every_level "${code}")
string(REGEX MATCHALL "prefetchnta" nontemporal "${code}")
list(LENGTH into_every_level into_every_level_count)
list(LENGTH nontemporal nontemporal_count)
if(into_every_level_count EQUAL 0 OR NOT nontemporal_count EQUAL 0)
  message(FATAL_ERROR "${LIBRARY}: ${into_every_level_count} prefetcht0, ${nontemporal_count} prefetchnta "
                      "(expected some prefetcht0 and no prefetchnta)")
endif()
message(STATUS "${LIBRARY}: ${into_every_level_count} prefetcht0, no prefetchnta")
