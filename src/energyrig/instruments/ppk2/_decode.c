/* SPDX-License-Identifier: Apache-2.0 */
/* Placeholder: replaced by the real kernel. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_decode", NULL, -1, NULL};

PyMODINIT_FUNC PyInit__decode(void) { return PyModule_Create(&module); }
