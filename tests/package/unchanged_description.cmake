# Fails unless a rebuild that describes the consumer's kernel again, its description unchanged,
# regenerates nothing: the describing program (BUILD's attngen_describe_*) is made newer, so the
# build runs it again; the text form it writes is the same, so the generator must not run.
file(GLOB describers ${BUILD}/attngen_describe_*)
list(FILTER describers EXCLUDE REGEX "\\.(cpp|hpp)$")
if(NOT describers)
  message(FATAL_ERROR "no describing program in ${BUILD}")
endif()
file(TOUCH_NOCREATE ${describers})
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD} OUTPUT_VARIABLE log ERROR_VARIABLE log
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the rebuild failed:\n${log}")
endif()
if(NOT log MATCHES "describing ${KERNEL}")
  message(FATAL_ERROR "the rebuild did not describe ${KERNEL} again:\n${log}")
endif()
if(log MATCHES "generating ${KERNEL}")
  message(FATAL_ERROR "the rebuild regenerated ${KERNEL}, whose description did not change:\n${log}")
endif()
