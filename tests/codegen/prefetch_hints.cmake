# Fails unless the static library LIBRARY's code prefetches with `prefetcht0` only: code that prefetches
# is compiled by llc with its prefetches into every cache level (codegen's src/emit/llc_object.hpp),
# none left as Halide's `prefetchnta`.
include(${CMAKE_CURRENT_LIST_DIR}/disassembly.cmake)
attngen_disassemble(${LIBRARY} code)
attngen_count_matches("prefetcht0" "${code}" into_every_level_count)
attngen_count_matches("prefetchnta" "${code}" nontemporal_count)
if(into_every_level_count EQUAL 0 OR NOT nontemporal_count EQUAL 0)
  message(FATAL_ERROR "${LIBRARY}: ${into_every_level_count} prefetcht0, ${nontemporal_count} prefetchnta "
                      "(expected some prefetcht0 and no prefetchnta)")
endif()
message(STATUS "${LIBRARY}: ${into_every_level_count} prefetcht0, no prefetchnta")
