# Installs the build tree BUILD_DIR into STAGING, then moves it to MOVED: the package must work from
# where it ends up, not where it was installed.
file(REMOVE_RECURSE ${STAGING} ${MOVED})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${STAGING} RESULT_VARIABLE status
                OUTPUT_QUIET)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install failed")
endif()
file(RENAME ${STAGING} ${MOVED})
