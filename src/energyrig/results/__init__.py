"""energyrig.results: the run store, its statistics and the report.

``energyrig.results.load(RUN_DIR)`` gives a run's windows and points as pandas DataFrames.
"""
from energyrig.results.store import (
    Run,
    RunError,
    RunWriter,
    load,
    load_many,
    query,
)

__all__ = ["Run", "RunError", "RunWriter", "load", "load_many", "query"]
