"""energyrig.results: the run store, its statistics and the report.

``energyrig.results.load(RUN_DIR)`` gives a run's windows and points as pandas DataFrames.
The store (pandas, pyarrow) is imported on first use, so ``rig.plan`` can use
:mod:`energyrig.results.compare` without loading it.
"""
from __future__ import annotations

from typing import Any

__all__ = ["Run", "RunError", "RunWriter", "load", "load_many", "query"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'energyrig.results' has no attribute {name!r}")
    from energyrig.results.store import layout, read, write

    return getattr({"RunError": layout, "RunWriter": write}.get(name, read), name)
