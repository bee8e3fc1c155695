# SPDX-License-Identifier: Apache-2.0
# The op families of the catalogue. Included by the host build and the Zephyr build:
# plain CMake, no platform logic.
#
# To add an op: define it in its family's file, `ER_OP(<id>) = {...};` at the start of a
# line (core/er_op.h); nothing else. To add a family X: append X to ER_OPS_FAMILIES (one
# line) and define its ops in er_ops_X.c in this directory. Helper sources of a family (a
# cipher written in this project, say) go to ER_OPS_EXTRA_SOURCES, one per line.
# A family file's ops name their op family (er_op_s.family: "symmetric", "public-key", ...)
# from core/er_family.c's er_families; a new op family is appended there (docs/ARCHITECTURE.md).
#
# ER_OPS_ONLY (cache) selects the ops of the generated catalogue: `all` (the default),
# `none` (the empty catalogue: the firmware without any op, as the footprint's base), or a
# ;-list of op ids or names (`sha256;aes-ctr-encrypt`). With --gc-sections an op left out
# of the catalogue leaves its code out of the build.
set(ER_OPS_DIR ${CMAKE_CURRENT_LIST_DIR})

set(ER_OPS_FAMILIES
    symmetric
    legacy
    hash
    rsa
    dsa
    dh
    ecc
    composite
)

set(ER_OPS_EXTRA_SOURCES
    ${ER_OPS_DIR}/er_ops_util.c
    ${ER_OPS_DIR}/er_ops_conditions.c
    ${ER_OPS_DIR}/lib/er_kat.c
    ${ER_OPS_DIR}/lib/er_keccak.c
    ${ER_OPS_DIR}/lib/er_rc4.c
    ${ER_OPS_DIR}/lib/er_rc_key.c
    ${ER_OPS_DIR}/lib/er_rc5.c
    ${ER_OPS_DIR}/lib/er_rc6.c
    ${ER_OPS_DIR}/lib/er_pk.c
    ${ER_OPS_DIR}/lib/er_dsa.c
    ${ER_OPS_DIR}/lib/er_dh.c
)

# The family files, in catalogue order; a port appends its own (Zephyr's hwcrypto).
set(ER_OPS_FAMILY_SOURCES "")
foreach(family IN LISTS ER_OPS_FAMILIES)
    list(APPEND ER_OPS_FAMILY_SOURCES ${ER_OPS_DIR}/er_ops_${family}.c)
endforeach()
set(ER_OPS_SOURCES ${ER_OPS_EXTRA_SOURCES} ${ER_OPS_FAMILY_SOURCES})

set(ER_OPS_ONLY "all" CACHE STRING
    "Ops of the catalogue: all, none, or a ;-list of op ids or names (ops/ops.cmake)")

# Writes the catalogue C file to OUT_FILE: the ops ER_OP defines in ER_OPS_FAMILY_SOURCES,
# as many as ER_OPS_ONLY selects, in the order of the files. Configure runs again when a
# family file changes.
function(er_ops_generate_catalogue OUT_FILE)
    set(ids "")
    foreach(source IN LISTS ER_OPS_FAMILY_SOURCES)
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})
        file(STRINGS ${source} lines REGEX "^ER_OP\\([a-z0-9_]+\\)")
        foreach(line IN LISTS lines)
            string(REGEX REPLACE "^ER_OP\\(([a-z0-9_]+)\\).*" "\\1" id "${line}")
            list(APPEND ids ${id})
        endforeach()
    endforeach()

    if(ER_OPS_ONLY STREQUAL "all")
        set(selected ${ids})
    elseif(ER_OPS_ONLY STREQUAL "none")
        set(selected "")
    else()
        string(REPLACE "-" "_" wanted "${ER_OPS_ONLY}")
        foreach(id IN LISTS wanted)
            if(NOT id IN_LIST ids)
                string(REPLACE ";" " " known "${ids}")
                message(FATAL_ERROR "ER_OPS_ONLY: no op '${id}' in this build (ops: ${known})")
            endif()
        endforeach()
        string(REPLACE ";" "|" pattern "${wanted}")
        set(selected ${ids})
        list(FILTER selected INCLUDE REGEX "^(${pattern})$")
    endif()
    message(STATUS "energyrig catalogue (ER_OPS_ONLY=${ER_OPS_ONLY}): ${selected}")

    set(ER_CATALOGUE_DECLS "")
    set(ER_CATALOGUE_ENTRIES "")
    foreach(id IN LISTS selected)
        string(APPEND ER_CATALOGUE_DECLS "extern ER_OP(${id}) __attribute__((weak));\n")
        string(APPEND ER_CATALOGUE_ENTRIES "\t&er_op_${id},\n")
    endforeach()
    list(LENGTH selected ER_CATALOGUE_COUNT)
    configure_file(${ER_OPS_DIR}/../core/er_catalogue.c.in ${OUT_FILE} @ONLY)
endfunction()

# er_add_core_and_ops(): a port build's object libraries (host, qemu-m4; Zephyr builds its
# app its own way): er_core, the portable core with the build id, toolchain and version
# `hello` reports (ER_BUILD_ID and ER_TOOLCHAIN, also left set for the caller;
# PROJECT_VERSION), and er_ops, the ops with the catalogue ER_OPS_ONLY selects. The port
# adds its Mbed TLS to er_ops. A macro: the targets and variables are the caller's.
macro(er_add_core_and_ops)
    er_build_id(ER_BUILD_ID)
    er_toolchain(ER_TOOLCHAIN)
    add_library(er_core OBJECT ${ER_CORE_SOURCES})
    target_include_directories(er_core PUBLIC ${ER_CORE_INCLUDE_DIRS})
    target_compile_definitions(er_core PRIVATE
        ER_BUILD_ID="${ER_BUILD_ID}" ER_TOOLCHAIN="${ER_TOOLCHAIN}"
        ER_FIRMWARE_VERSION="${PROJECT_VERSION}")
    er_ops_generate_catalogue(${CMAKE_CURRENT_BINARY_DIR}/er_catalogue.c)
    add_library(er_ops OBJECT ${ER_OPS_SOURCES} ${CMAKE_CURRENT_BINARY_DIR}/er_catalogue.c)
    target_include_directories(er_ops PUBLIC ${ER_CORE_INCLUDE_DIRS} ${ER_OPS_DIR})
endmacro()
