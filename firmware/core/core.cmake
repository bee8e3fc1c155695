# SPDX-License-Identifier: Apache-2.0
# The portable core: sources and include directory, for every build (host, tests, fuzzer,
# Zephyr). Plain CMake, no platform logic.
set(ER_CORE_DIR ${CMAKE_CURRENT_LIST_DIR})
set(ER_CORE_INCLUDE_DIRS ${ER_CORE_DIR})
set(ER_CORE_SOURCES
    ${ER_CORE_DIR}/er_arena.c
    ${ER_CORE_DIR}/er_drbg.c
    ${ER_CORE_DIR}/er_json.c
    ${ER_CORE_DIR}/er_line.c
    ${ER_CORE_DIR}/er_proto.c
    ${ER_CORE_DIR}/er_registry.c
    ${ER_CORE_DIR}/er_runner.c
    ${ER_CORE_DIR}/er_stack.c
    ${ER_CORE_DIR}/er_str.c
    ${ER_CORE_DIR}/er_wire.c
)

# er_build_id(<var>): the build id `hello` reports (ER_BUILD_ID): `git describe` of the
# firmware tree at configure time, "unknown" outside a git checkout.
function(er_build_id var)
    execute_process(
        COMMAND git describe --always --dirty --tags
        WORKING_DIRECTORY ${ER_CORE_DIR}
        OUTPUT_VARIABLE id OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT id)
        set(id unknown)
    endif()
    set(${var} ${id} PARENT_SCOPE)
endfunction()

# er_toolchain(<var>): the compiler `hello` reports (ER_TOOLCHAIN), as CMake identified it:
# "GNU 12.2.0", "Clang 14.0.6" (a Zephyr SDK's GCC on a board).
function(er_toolchain var)
    set(${var} "${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}" PARENT_SCOPE)
endfunction()
