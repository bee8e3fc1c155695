# SPDX-License-Identifier: Apache-2.0
# The op families of the catalogue. Included by the host build and the Zephyr build:
# plain CMake, no platform logic.
#
# To add a family X: append X to ER_OPS_FAMILIES (one line). The file er_ops_X.c in this
# directory must export
#     const struct er_op_s er_ops_X[];
#     const size_t er_ops_X_len;
# Helper sources of a family (a cipher written in this project, say) go to
# ER_OPS_EXTRA_SOURCES, one per line.
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

set(ER_OPS_SOURCES ${ER_OPS_EXTRA_SOURCES})
foreach(family IN LISTS ER_OPS_FAMILIES)
    list(APPEND ER_OPS_SOURCES ${ER_OPS_DIR}/er_ops_${family}.c)
endforeach()

# Writes the catalogue C file (the registry of every family above) to OUT_FILE.
function(er_ops_generate_catalogue OUT_FILE)
    set(ER_CATALOGUE_DECLS "")
    set(ER_CATALOGUE_ENTRIES "")
    list(LENGTH ER_OPS_FAMILIES ER_CATALOGUE_COUNT)
    foreach(family IN LISTS ER_OPS_FAMILIES)
        string(APPEND ER_CATALOGUE_DECLS
            "extern const struct er_op_s er_ops_${family}[];\nextern const size_t er_ops_${family}_len;\n")
        string(APPEND ER_CATALOGUE_ENTRIES "\t{er_ops_${family}, &er_ops_${family}_len},\n")
    endforeach()
    configure_file(${ER_OPS_DIR}/../core/er_catalogue.c.in ${OUT_FILE} @ONLY)
endfunction()
