"""A writer of a small run that SIGKILLs itself at a chosen moment (tests/results/test_kill_store.py).

    python -m support.store_child RUN_DIR FUNCTION K

stores the points of :data:`POINTS` not stored yet (a resume when RUN_DIR holds a run),
merging every 3 points, and kills itself with SIGKILL just before the K-th call of FUNCTION
(``write_table``, ``rename``, ``replace``, ``rmtree``, ``unlink``, ``fsync``; ``none``: never):
inside a point's write, a merge, the manifest's rewrite or the removal of a merged point's
part (``unlink``: between the files of one folder), wherever that call falls.
"""
from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from energyrig.domain import Point, Window
from energyrig.results.store import write as store_write
from energyrig.results.store.layout import MANIFEST
from energyrig.results.store.write import RunWriter

POINTS = tuple(Point(op="sha256", board="b", payload_bytes=16 * (i + 1)) for i in range(7))
WINDOWS = 3
TARGETS: dict[str, tuple[Any, str]] = {
    "write_table": (store_write.pq, "write_table"), "rename": (os, "rename"),
    "replace": (os, "replace"), "rmtree": (store_write.shutil, "rmtree"), "unlink": (os, "unlink"),
    "fsync": (os, "fsync"),
}


def die_before(owner: Any, name: str, k: int) -> None:
    real: Callable[..., Any] = getattr(owner, name)
    calls = 0

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)

    setattr(owner, name, wrapper)


def main(run_dir: Path, function: str, k: int) -> None:
    if function != "none":
        die_before(*TARGETS[function], k)
    writer = (RunWriter.resume(run_dir, consolidate_every=3) if (run_dir / MANIFEST).exists()
              else RunWriter.create(run_dir, consolidate_every=3))
    with writer:
        for i, point in enumerate(POINTS):
            if point.key not in writer.done():
                writer.write_point(point, [Window(start_s=j, end_s=j + 0.01, samples=100,
                                                  energy_j=1e-6 * (i + 1), baseline_w=1e-3)
                                           for j in range(WINDOWS)], batch_n=10)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
