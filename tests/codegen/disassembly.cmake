# Helpers of the object-code tests (cmake -P scripts given OBJDUMP and LIBRARY).

# Sets `out` to objdump's disassembly of `library`, without raw bytes; fails if objdump does.
function(attngen_disassemble library out)
  execute_process(COMMAND ${OBJDUMP} -d --no-show-raw-insn ${library} OUTPUT_VARIABLE code RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${OBJDUMP} failed on ${library}")
  endif()
  set(${out} "${code}" PARENT_SCOPE)
endfunction()

# Sets `out` to how many times `regex` matches `text`.
function(attngen_count_matches regex text out)
  string(REGEX MATCHALL "${regex}" matches "${text}")
  list(LENGTH matches count)
  set(${out} ${count} PARENT_SCOPE)
endfunction()
