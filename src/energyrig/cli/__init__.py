"""energyrig.cli: the ``rig`` command.

Importing it (the ``rig`` entry point, ``python -m energyrig.cli.app``) caps OpenBLAS at one
thread before numpy is imported, unless the environment already says otherwise: OpenBLAS
starts a thread per core at numpy's import and they spin for ~0.05 s of CPU, while the rig
does no matrix work large enough to gain from them (the report's least-squares fits are a
few dozen rows). ``OPENBLAS_NUM_THREADS`` set by the user wins.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
