"""The ``[[compare]]`` tables of a plan: the pairs of configurations the report compares.

A plan names them (``rig/plan.py`` validates them with the rest of the plan when the file is
read)::

    [[compare]]
    a = "sha256"                                   # an op name
    b = { op = "aes-cbc-encrypt", key_bits = 128 } # or a table of factors

The run manifest keeps the validated plan; :func:`recorded_comparisons` reads the pairs back
from it for the report. The model lives here, below ``rig``, so that ``results`` never imports
``rig``.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from energyrig.config import Strict
from energyrig.errors import ConfigError

#: One side of a pair: an op name, or a table of factors (column → level).
Side = str | dict[str, str | int]


class Compare(Strict):
    """A pair the report compares, A against B (differences A − B, ratios A / B).

    Attributes
    ----------
    a, b:
        Each an op name (``"sha256"``) or a table of factors
        (``{"op": "aes-ecb-encrypt", "key_bits": 128}``).
    """

    a: Side
    b: Side

    def selectors(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """A and B as row selectors of the points table (an op name is ``{"op": name}``)."""
        return _selector(self.a), _selector(self.b)


def _selector(side: Side) -> dict[str, Any]:
    return {"op": side} if isinstance(side, str) else dict(side)


def recorded_comparisons(plan: Mapping[str, Any], source: Path) -> tuple[Compare, ...]:
    """The pairs a run's plan record (the manifest's ``plan``) asks to compare.

    Parameters
    ----------
    plan:
        The plan as the manifest records it; no ``compare`` entry means no pairs.
    source:
        The manifest file, named in errors.

    Raises
    ------
    ConfigError
        An entry that is not a pair, naming ``source`` and the field (``plan.compare[0]``).
    """
    pairs = []
    for i, entry in enumerate(plan.get("compare") or ()):
        try:
            pairs.append(Compare.model_validate(entry))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(part) for part in err["loc"])
            raise ConfigError(source, f"plan.compare[{i}]",
                              "needs an a and a b (an op name or a table of factors); "
                              f"{where or 'entry'}: {err['msg']}") from exc
    return tuple(pairs)
