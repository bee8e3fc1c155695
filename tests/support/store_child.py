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
from collections import Counter
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

#: The moments tests/results/test_kill_store.py kills the writer at, (FUNCTION, K): `make test`
#: kills at every one, `make check` at :data:`ONE_OF_EACH_KIND` (``ENERGYRIG_KILL_MOMENTS``).
MOMENTS: tuple[tuple[str, int], ...] = tuple(
    (f, k) for f, ks in (("write_table", (1, 2, 5, 8, 9)), ("rename", (1, 3, 4)),
                         ("replace", (1, 2, 6, 7)), ("rmtree", (1, 2)),
                         ("unlink", (1, 2, 3, 4, 5, 6)), ("fsync", (1, 4, 11, 17)))
    for k in ks)
#: The first moment of :data:`MOMENTS` of each kind (:func:`moment_kinds`): the same steps of
#: the writer's work, each once (tests/results/test_kill_moments.py holds it to that).
ONE_OF_EACH_KIND: tuple[tuple[str, int], ...] = (
    ("write_table", 1), ("write_table", 8), ("rename", 1), ("rename", 4), ("replace", 1),
    ("replace", 6), ("rmtree", 1), ("unlink", 1), ("unlink", 2), ("fsync", 1), ("fsync", 4),
    ("fsync", 17))


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


def moment_kinds(run_dir: Path) -> dict[tuple[str, int], tuple[str, ...]]:
    """What each moment of :func:`main` falls inside, from one writer run into ``run_dir``
    (nothing killed): (FUNCTION, K) -> the kind of that moment, FUNCTION and the store's
    functions on the stack at its K-th call, innermost first, with the call's place among
    that function's calls in the innermost of them (``_drop_part`` 2: between a part's
    files). Two moments of one kind kill the writer at the same step of its work."""
    kinds: dict[tuple[str, int], tuple[str, ...]] = {}
    calls: Counter[str] = Counter()
    seen: Counter[tuple[str, int]] = Counter()  # calls per function and innermost store frame
    held: list[Any] = []  # the frames counted, kept alive so that their ids stay theirs
    store_dir = str(Path(store_write.__file__).parent)
    for function, (owner, name) in TARGETS.items():
        real: Callable[..., Any] = getattr(owner, name)

        def traced(*args: Any, _f: str = function, _real: Callable[..., Any] = real,
                   **kwargs: Any) -> Any:
            frames, frame = [], sys._getframe(1)
            while frame is not None:
                if frame.f_code.co_filename.startswith(store_dir):
                    frames.append(frame)
                frame = frame.f_back
            held.extend(frames[:1])
            calls[_f] += 1
            seen[_f, id(frames[0]) if frames else 0] += 1
            kinds[_f, calls[_f]] = (_f, *(f.f_code.co_name for f in frames),
                                    str(seen[_f, id(frames[0]) if frames else 0]))
            return _real(*args, **kwargs)

        setattr(owner, name, traced)
    try:
        main(run_dir, "none", 0)
    finally:
        for function, (owner, name) in TARGETS.items():
            setattr(owner, name, getattr(owner, name).__kwdefaults__["_real"])
    return kinds


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
