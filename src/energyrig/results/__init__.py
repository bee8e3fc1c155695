"""energyrig.results: a run's tables, read in a notebook, and the report's figures drawn.

Reading runs (docs/results.md has every column and its unit; SI units throughout):

- ``load(RUN_DIR)`` → :class:`Run`: ``.points`` (one row per point) and ``.windows`` (one
  row per trigger window) as pandas DataFrames, ``.manifest`` as a dict;
- ``load_many([RUN_DIR, ...])``: several runs as one, with a ``run`` column;
- ``query(SQL, [RUN_DIR, ...])``: DuckDB SQL over the tables ``points`` and ``windows``;
- :class:`RunWriter` writes a run, :class:`RunError` says what is wrong with one.

The report's figures, drawn from a run by the report's own functions (same colours, same
intervals; each returns a matplotlib Figure): ``plot_energy_time(run, family)``,
``plot_payload(run, family)``, ``plot_relative(run, family)``, ``plot_allocation(run)``.

The statistics are in :mod:`energyrig.results.stats` (``summarise_per_op``,
``paired_comparison``, ``payload_regression``, ``allocation_of_variation``); the whole report
in :mod:`energyrig.results.report` (``write_report``; ``rig report``).

Every name is imported on first use (pandas, pyarrow, matplotlib), so ``rig.plan`` can use
:mod:`energyrig.results.compare` and the CLI can start without loading them; ``dir()`` and
``help()`` list them all.
"""

#: Each public name → the module that defines it (imported when the name is first used).
_HOMES: dict[str, str] = {
    "Run": "read", "load": "read", "load_many": "read", "query": "read",
    "RunError": "layout", "RunWriter": "write",
    "plot_energy_time": "plots", "plot_payload": "plots", "plot_relative": "plots",
    "plot_allocation": "plots",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use (:data:`_HOMES`)."""
    if name not in _HOMES:
        raise AttributeError(f"module 'energyrig.results' has no attribute {name!r}")
    if _HOMES[name] == "plots":
        from energyrig.results import plots as home
    else:
        from energyrig.results.store import layout, read, write

        home = {"layout": layout, "read": read, "write": write}[_HOMES[name]]
    value = getattr(home, name)
    globals()[name] = value  # found without __getattr__ from now on
    return value


def __dir__() -> list[str]:
    """The public names (:data:`__all__`) with what the module holds already, for ``dir()``
    and a notebook's completion; none is imported by listing it."""
    return sorted(set(globals()) | set(__all__))
