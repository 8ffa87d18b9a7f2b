# `cmake --install` writes a relocatable package: find_package(attngen CONFIG REQUIRED) gives
#   attngen::dsl        the description language (header-only)
#   attngen::runtime    what apps link: tensor views, validation, the shared Halide runtime
#   attngen::generator  the attngen command-line generator
#   attngen::ring       context parallelism over MPI (where the build found MPI)
#   attngen_add_kernel  the CMake function that generates kernels in the consumer's build
# Paths inside the package are relative to it, so the installed tree may be moved.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ATTNGEN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/attngen)

set_target_properties(attngen_dsl PROPERTIES EXPORT_NAME dsl)
set_target_properties(attngen_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(attngen PROPERTIES EXPORT_NAME generator)

install(TARGETS attngen_dsl attngen_runtime attngen EXPORT attngen_targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# attngen/runtime/dlpack.hpp only with the functions it declares (the runtime built with DLPack found).
if(NOT ATTNGEN_DLPACK)
  set(attngen_excluded_headers PATTERN dlpack.hpp EXCLUDE)
endif()
if(ATTNGEN_RING)
  install(TARGETS attngen_ring EXPORT attngen_targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ring/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
install(DIRECTORY dsl/include/ runtime/include/ codegen/tensorcore/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        ${attngen_excluded_headers})
# The Halide runtime headers the runtime and the generated kernel headers include, so consumers
# need no Halide installation.
get_target_property(halide_runtime_include_dirs Halide::Runtime INTERFACE_INCLUDE_DIRECTORIES)
find_file(ATTNGEN_HALIDE_RUNTIME_HEADER HalideRuntime.h PATHS ${halide_runtime_include_dirs} NO_DEFAULT_PATH REQUIRED)
get_filename_component(halide_runtime_header_dir ${ATTNGEN_HALIDE_RUNTIME_HEADER} DIRECTORY)
install(FILES ${halide_runtime_header_dir}/HalideRuntime.h ${halide_runtime_header_dir}/HalideRuntimeCuda.h
              ${halide_runtime_header_dir}/HalideRuntimeOpenCL.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attngen/halide_runtime)
get_filename_component(ATTNGEN_HALIDE_RUNTIME_FILE ${attngen_halide_runtime_library} NAME)
install(FILES ${attngen_halide_runtime_library} DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT attngen_targets NAMESPACE attngen:: FILE attngenTargets.cmake DESTINATION ${ATTNGEN_INSTALL_CMAKEDIR})

configure_package_config_file(cmake/attngenConfig.cmake.in ${PROJECT_BINARY_DIR}/attngenConfig.cmake
                              INSTALL_DESTINATION ${ATTNGEN_INSTALL_CMAKEDIR}
                              PATH_VARS CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/attngenConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/attngenConfig.cmake ${PROJECT_BINARY_DIR}/attngenConfigVersion.cmake
              cmake/AttngenAddKernel.cmake cmake/attngen_describe.cpp.in
        DESTINATION ${ATTNGEN_INSTALL_CMAKEDIR})
