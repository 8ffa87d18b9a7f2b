#[=======================================================================[.rst:
attngen_add_kernel
------------------

Generates a fused attention kernel from a C++ description at build time and makes it a static
library target that apps link.

.. code-block:: cmake

  attngen_add_kernel(<name>
    DESCRIPTION <header>          # C++ header that defines the description (relative to this dir)
    VARIABLE <expression>         # the constexpr description in that header, e.g. my::llama_prefill:
                                  # an operator (attngen::attention()) or a module
                                  # (attngen::multihead_attention())
    [TARGETS <target>...]         # Halide CPU targets, most capable first; several = run-time dispatch.
                                  # Default: ATTNGEN_DEFAULT_TARGETS, a fat library for any x86-64
    [GPU_TARGETS <target>...]     # Halide GPU targets, at most one CUDA and one OpenCL, e.g.
                                  # x86-64-linux-cuda-cuda_capability_80 x86-64-linux-opencl
    [ONLY_THIS_CPU]               # of TARGETS, only the first the building machine's CPU runs: for
                                  # builds that run only where they are built (a benchmark)
    [NAMESPACE <ns>]              # C++ namespace of the generated wrapper struct
    [OUTPUT_DIRECTORY <dir>])     # default: ${CMAKE_CURRENT_BINARY_DIR}/attngen/<name>

Creates the static library target ``<name>`` (alias ``attngen::<name>``). Linking it provides the
header ``<name>.hpp`` with ``struct <name> { static attngen::status run(const attngen::attention_args&); }``
(``run(const attngen::mha_args&)`` for a module) and the C header ``<name>.h`` with
``<name>_run(const attngen_attention_args*, attngen_error*)`` for C and FFI callers (see
``attngen/c_api.h``), and links the attngen runtime. Steps, all at build time:

1. A small program that includes ``<header>`` is compiled: ``attngen::validated<VARIABLE>()`` rejects an
   invalid description here, with a message naming the problem (and the kernel, by the file
   ``<name>_describe.hpp`` that holds its check). Run, it writes the text form. Kernels of one
   directory whose descriptions come from the same header share that program, so an invalid one
   stops the build of them all.
2. The ``attngen`` generator compiles the text form for each target into ``<name>_halide_cpu.a``
   (the kernel's variants, shape-specific tilings the wrapper picks from per call, and a module's
   projections or the table of a mask that reads captures) and one library per GPU API, ``<name>_halide_cuda.a`` and ``<name>_halide_opencl.a``.
3. The typed wrapper ``<name>.cpp``, holding the C API's functions too, is compiled into ``<name>``.

Calls with tensors on a GPU run that GPU's code (see ``attngen/runtime/gpu.hpp``): the CUDA target's
PTX (``cuda_capability_80`` PTX runs on every later GPU, Hopper included), the OpenCL target's kernels
compiled by the driver at the first call. Operators and modules alike.

With ``ATTNGEN_GENERATED_KERNELS_FROM`` set to another build directory of the same sources (one that
is built and current), each kernel's generated files are copied from there instead of generated
again: attngen's sanitized build takes its kernels from the main build so.

Targets are named explicitly (``host`` is refused: on some CPUs it enables features they lack). The
default, ``ATTNGEN_DEFAULT_TARGETS``, is the deployment choice: AVX-512 with BF16 dot products, AVX-512,
AVX2 and baseline x86-64 in one library, the first the running CPU supports chosen at each call. The
BF16 tier (``avx512_sapphirerapids``: Zen 4 and later, Cooper Lake and later Xeons) is compiled only
for descriptions of bf16 queries, keys and values (for the others it would repeat the AVX-512 code), by LLVM
14's ``llc`` (Debian: ``llvm-14``; without it the default leaves the tier out) for its ``cooperlake``
CPU, and runs only where CPUID reports AVX512-BF16. With the tier, a bf16 operator also gets a
forward pass on AMX tiles (``<name>_amx.cpp``, compiled into ``<name>``), which calls take on CPUs
reporting AMX-BF16 (Intel Xeons from Sapphire Rapids on).

Example:

.. code-block:: cmake

  attngen_add_kernel(llama_prefill
    DESCRIPTION kernels.hpp VARIABLE llama_prefill_description
    TARGETS x86-64-linux-avx512_skylake-fma-f16c x86-64-linux-avx2-fma-f16c x86-64-linux)
  target_link_libraries(app PRIVATE llama_prefill)
#]=======================================================================]

set(_attngen_cmake_dir ${CMAKE_CURRENT_LIST_DIR})
# The AVX512-BF16 tier, and code that prefetches, are compiled by LLVM 14's llc (codegen's
# src/emit/llc_object.hpp): the default targets hold the tier where llc is found.
find_program(ATTNGEN_LLC NAMES llc-14)
if(NOT ATTNGEN_LLC)
  find_program(ATTNGEN_LLC NAMES llc PATHS /usr/lib/llvm-14/bin NO_DEFAULT_PATH)
endif()
set(_attngen_bf16_tier)
if(ATTNGEN_LLC)
  set(_attngen_bf16_tier x86-64-linux-avx512_sapphirerapids-fma-f16c)
else()
  message(STATUS "attngen: llc-14 not found (Debian: llvm-14); the default targets leave out the AVX512-BF16 tier, "
                 "and decoding kernels keep Halide's non-temporal prefetches (slower on Intel Xeons)")
endif()
set(ATTNGEN_DEFAULT_TARGETS ${_attngen_bf16_tier} x86-64-linux-avx512_skylake-fma-f16c x86-64-linux-avx2-fma-f16c
                            x86-64-linux
    CACHE STRING "CPU targets of attngen_add_kernel when it names none (most capable first)")
# A second build of the same sources can take each kernel's generated files from a first build
# instead of generating them again: the generated code does not depend on the compiler or flags
# that build the rest (attngen's sanitized build, scripts/test --sanitize, takes them from build/,
# which it builds first). That build must be current: its files are copied as they are.
set(ATTNGEN_GENERATED_KERNELS_FROM "" CACHE PATH
    "A build directory of the same sources whose generated kernels attngen_add_kernel copies (empty: generate)")
# The GPU targets attngen's own tests and benchmark generate for: sm_80 PTX runs on Ampere and every
# later NVIDIA GPU (Halide 14 has no cuda_capability_90).
set(ATTNGEN_CUDA_TARGET x86-64-linux-cuda-cuda_capability_80)
set(ATTNGEN_OPENCL_TARGET x86-64-linux-opencl)

function(attngen_add_kernel name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "ONLY_THIS_CPU" "DESCRIPTION;VARIABLE;NAMESPACE;OUTPUT_DIRECTORY"
                        "TARGETS;GPU_TARGETS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "attngen_add_kernel(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_TARGETS)
    set(ARG_TARGETS ${ATTNGEN_DEFAULT_TARGETS})
  endif()
  foreach(required DESCRIPTION VARIABLE)
    if(NOT ARG_${required})
      message(FATAL_ERROR "attngen_add_kernel(${name}): ${required} is required")
    endif()
  endforeach()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "attngen_add_kernel(${name}): the name must be a C++ identifier")
  endif()
  if(NOT ARG_OUTPUT_DIRECTORY)
    set(ARG_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/attngen/${name})
  endif()
  set(ARG_NAME ${name})
  get_filename_component(ARG_DESCRIPTION_ABSOLUTE ${ARG_DESCRIPTION} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  file(MAKE_DIRECTORY ${ARG_OUTPUT_DIRECTORY})

  if(ATTNGEN_GENERATED_KERNELS_FROM)
    _attngen_copy_generated_kernel()
    return()
  endif()

  # 1. Check and describe.
  _attngen_describer(describer)
  set(description_text ${ARG_OUTPUT_DIRECTORY}/${name}.attngen)
  add_custom_command(
    OUTPUT ${description_text}
    COMMAND ${describer} ${name} ${description_text}
    DEPENDS ${describer}
    COMMENT "attngen: describing ${name}"
    VERBATIM)

  # 2. Generate.
  _attngen_generated_files()
  set(target_arguments)
  foreach(target IN LISTS ARG_TARGETS ARG_GPU_TARGETS)
    list(APPEND target_arguments --target ${target})
  endforeach()
  if(ARG_ONLY_THIS_CPU)
    list(APPEND target_arguments --only-this-cpu)
  endif()
  set(namespace_arguments)
  if(ARG_NAMESPACE)
    set(namespace_arguments --namespace ${ARG_NAMESPACE})
  endif()
  # In attngen's own tree the tensor-core tile code can change under a kernel with a CUDA target.
  set(tile_headers)
  if(ARG_GPU_TARGETS MATCHES "cuda")
    get_property(tile_headers GLOBAL PROPERTY ATTNGEN_TENSORCORE_HEADERS)
  endif()
  add_custom_command(
    OUTPUT ${generated}
    COMMAND attngen::generator generate --spec ${description_text} --name ${name}
            ${target_arguments} --output-dir ${ARG_OUTPUT_DIRECTORY} ${namespace_arguments}
    DEPENDS ${description_text} attngen::generator ${tile_headers}
    COMMENT "attngen: generating ${name} for ${ARG_TARGETS} ${ARG_GPU_TARGETS}"
    VERBATIM)

  _attngen_kernel_library()
endfunction()

# The program that checks and describes attngen_add_kernel's kernels whose descriptions come from one
# header, in the caller's directory: compiled once for all of them (a compilation of the header is
# most of a kernel's description cost), its source written when the directory's CMakeLists.txt ends,
# once every kernel has been added. Sets <out_target> in the caller's scope.
function(_attngen_describer out_target)
  string(MD5 key "${CMAKE_CURRENT_BINARY_DIR};${ARG_DESCRIPTION_ABSOLUTE}")
  string(SUBSTRING ${key} 0 12 key)
  set(target attngen_describe_${key})
  if(NOT TARGET ${target})
    set(source ${CMAKE_CURRENT_BINARY_DIR}/attngen/${target}.cpp)
    add_executable(${target} ${source})
    target_link_libraries(${target} PRIVATE attngen::dsl)
    set_property(GLOBAL PROPERTY ${target}_header ${ARG_DESCRIPTION_ABSOLUTE})
    cmake_language(EVAL CODE "cmake_language(DEFER CALL _attngen_write_describer [[${target}]] [[${source}]]
                                                        [[${_attngen_cmake_dir}/attngen_describe.cpp.in]])")
  endif()
  # Each kernel's check in a file named after it, which the compiler names when the check fails.
  set(check ${ARG_OUTPUT_DIRECTORY}/${ARG_NAME}_describe.hpp)
  file(CONFIGURE OUTPUT ${check} CONTENT
"// Generated by attngen_add_kernel: kernel @ARG_NAME@'s description, checked at compile time.
inline int describe_@ARG_NAME@(const char* path) { return write_text<attngen::validated<(@ARG_VARIABLE@)>()>(path); }
" @ONLY)
  set_property(GLOBAL APPEND PROPERTY ${target}_kernels ${ARG_NAME})
  set_property(GLOBAL PROPERTY ${target}_check_${ARG_NAME} ${check})
  set(${out_target} ${target} PARENT_SCOPE)
endfunction()

function(_attngen_write_describer target source template)
  get_property(header GLOBAL PROPERTY ${target}_header)
  get_property(kernels GLOBAL PROPERTY ${target}_kernels)
  set(checks "")
  set(cases "")
  foreach(kernel IN LISTS kernels)
    get_property(check GLOBAL PROPERTY ${target}_check_${kernel})
    string(APPEND checks "#include \"${check}\"\n")
    string(APPEND cases "  if (kernel == \"${kernel}\") return describe_${kernel}(argv[2]);\n")
  endforeach()
  configure_file(${template} ${source} @ONLY)
endfunction()

# attngen_add_kernel's generated files, in the caller's scope: halide_libraries, tensorcore_sources,
# amx_source and all of them in `generated`.
macro(_attngen_generated_files)
  # One library of CPU code (every variant, see attngen/runtime/detail/variants.hpp), and one per GPU API;
  # with CUDA, the record of the tensor-core forward pass (NAME_tensorcore.cpp, empty for modules and
  # for descriptions the path does not take: docs/gpu.md).
  set(halide_libraries ${ARG_OUTPUT_DIRECTORY}/${name}_halide_cpu.a)
  set(tensorcore_sources)
  foreach(target IN LISTS ARG_GPU_TARGETS)
    if(target MATCHES "(^|-)cuda(-|$)")
      list(APPEND halide_libraries ${ARG_OUTPUT_DIRECTORY}/${name}_halide_cuda.a)
      list(APPEND tensorcore_sources ${ARG_OUTPUT_DIRECTORY}/${name}_tensorcore.cpp)
    elseif(target MATCHES "(^|-)opencl(-|$)")
      list(APPEND halide_libraries ${ARG_OUTPUT_DIRECTORY}/${name}_halide_opencl.a)
    else()
      message(FATAL_ERROR "attngen_add_kernel(${name}): GPU target ${target} names neither cuda nor opencl")
    endif()
  endforeach()
  # The forward pass on AMX tiles (NAME_amx.cpp: for bf16 operators with the AVX512-BF16 tier, else an
  # empty record), compiled optimised whatever the build type: it is kernel code, as the Halide objects are.
  set(amx_source ${ARG_OUTPUT_DIRECTORY}/${name}_amx.cpp)
  set_source_files_properties(${amx_source} PROPERTIES COMPILE_OPTIONS "$<$<CXX_COMPILER_ID:GNU,Clang>:-O2>")
  set(generated ${halide_libraries} ${tensorcore_sources} ${amx_source} ${ARG_OUTPUT_DIRECTORY}/${name}.hpp
                ${ARG_OUTPUT_DIRECTORY}/${name}.cpp ${ARG_OUTPUT_DIRECTORY}/${name}.h)
endmacro()

# attngen_add_kernel from another build's generated files (ATTNGEN_GENERATED_KERNELS_FROM): the same
# output directory relative to its build directory, copied whole.
macro(_attngen_copy_generated_kernel)
  _attngen_generated_files()
  file(RELATIVE_PATH relative_directory ${CMAKE_BINARY_DIR} ${ARG_OUTPUT_DIRECTORY})
  set(source_directory ${ATTNGEN_GENERATED_KERNELS_FROM}/${relative_directory})
  string(REPLACE "${ARG_OUTPUT_DIRECTORY}" "${source_directory}" source_files "${generated}")
  add_custom_command(
    OUTPUT ${generated}
    COMMAND ${CMAKE_COMMAND} -E copy_directory ${source_directory} ${ARG_OUTPUT_DIRECTORY}
    DEPENDS ${source_files}
    COMMENT "attngen: ${name} as ${ATTNGEN_GENERATED_KERNELS_FROM} generated it"
    VERBATIM)
  _attngen_kernel_library()
endmacro()

# 3. The library apps link.
macro(_attngen_kernel_library)
  add_library(${name} STATIC ${ARG_OUTPUT_DIRECTORY}/${name}.cpp ${tensorcore_sources} ${amx_source})
  add_library(attngen::${name} ALIAS ${name})
  # Position-independent like the Halide objects, so that the kernel can go into a shared library
  # (for FFI callers of the C API).
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${ARG_OUTPUT_DIRECTORY}>)
  target_link_libraries(${name} PUBLIC ${halide_libraries} attngen::runtime)
endmacro()
