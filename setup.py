"""Compiled kernels built by the package's own build (see docs/performance.md for why)."""
from setuptools import Extension, setup

COMPILE_ARGS = ["-O3", "-std=c11", "-Wall", "-Wextra"]

setup(
    ext_modules=[
        # Window detection and v*i integration over whole chunks (energyrig.energy.windows).
        Extension("energyrig.energy._energy", ["src/energyrig/energy/_energy.c"],
                  extra_compile_args=COMPILE_ARGS),
        # PPK2 4-byte word decoding (energyrig.instruments.ppk2.decode).
        # -ffp-contract=off: no fused multiply-add, so the result equals ppk2-api bit for bit.
        Extension("energyrig.instruments.ppk2._decode", ["src/energyrig/instruments/ppk2/_decode.c"],
                  extra_compile_args=COMPILE_ARGS + ["-ffp-contract=off"]),
    ],
)
