# SPDX-License-Identifier: Apache-2.0
# Cross toolchain of the Cortex-M4 port: Debian's gcc-arm-none-eabi with newlib-nano
# (libnewlib-arm-none-eabi). Flags as Zephyr's for a Cortex-M4 board without FPU use
# (nRF52840 DK): Thumb-2, soft-float ABI, -Os (CMakeLists.txt).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(ER_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mabi=aapcs -mfloat-abi=soft")
set(CMAKE_C_FLAGS_INIT "${ER_CPU_FLAGS}")
set(CMAKE_ASM_FLAGS_INIT "${ER_CPU_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${ER_CPU_FLAGS} --specs=nano.specs --specs=nosys.specs")
