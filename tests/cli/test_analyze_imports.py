"""What `rig analyze --json` pays before it reads (issue 24 part 2, its fixed cost): a
child python runs it on a small JLS recording and lists the heavy libraries it loaded.
scipy (the t quantile is the rig's own: results/student.py), pydantic and the families'
config models (the table of capture files needs only their records) and
importlib.metadata (``--version`` alone reads it), numpy.ma (np.median's) and rich (the log's
handler draws through it at the first record shown) stay out; OpenBLAS runs one thread
unless the user's environment says otherwise."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from support.jls import write_js220

#: Modules the `--json` path must not import, and why each was there before.
ABSENT = ("scipy", "pydantic", "importlib.metadata", "energyrig.instruments.ppk2.config",
          "numpy.ma", "pandas", "pyarrow", "matplotlib", "rich")

CHILD = """
import json, sys
sys.argv = ["rig", "analyze", sys.argv[1], "--json"]
from energyrig.cli.app import main
try:
    main()
except SystemExit as exc:
    code = exc.code
import os
print(json.dumps({"code": code, "loaded": [m for m in %r if m in sys.modules],
                  "openblas": os.environ.get("OPENBLAS_NUM_THREADS"),
                  "threads": len(os.listdir("/proc/self/task"))}), file=sys.stderr)
""" % (ABSENT,)


def analyze_json(tmp_path: Path, env: dict[str, str] | None = None) -> tuple[dict, str]:
    """Run `rig analyze --json` on a 4-window JLS in a child python: its report of what it
    loaded, and its standard output."""
    n = 20_000
    high = (np.arange(n) % 5_000 >= 3_000) & (np.arange(n) % 5_000 < 4_000)
    path = tmp_path / "small.jls"
    write_js220(path, 100_000, np.where(high, 0.02, 0.001), np.full(n, 3.3), high)
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True,
                          text=True, check=True, env=env)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    assert '"count": 4' in done.stdout
    return report, done.stdout


def test_rig_analyze_json_loads_no_scipy_pydantic_metadata_or_rich(tmp_path: Path) -> None:
    report, _ = analyze_json(tmp_path)
    assert report["loaded"] == []


def test_openblas_runs_one_thread_unless_the_user_says_otherwise(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    report, _ = analyze_json(tmp_path, env)
    assert report["openblas"] == "1"
    assert report["threads"] == 1  # numpy imported after it was set: no BLAS thread started
    report, _ = analyze_json(tmp_path, {**env, "OPENBLAS_NUM_THREADS": "2"})
    assert report["openblas"] == "2"
