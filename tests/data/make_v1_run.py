"""Write the tiny results-schema-version-1 run kept in ``tests/data/v1-run`` (docs/results.md,
"Version history"): made ONCE with the rig as of main 854e5f8 (the last version 1 writer),
never with this tree's, which writes version 2:

    git archive 854e5f8 src | tar -x -C /tmp/v1   # plus the built *.so of src/
    PYTHONPATH=/tmp/v1/src .venv/bin/python tests/data/make_v1_run.py tests/data/v1-run

Two ok points of three windows (flags, corrections with per-range values, a window budget,
a point budget and point flags), a failed point whose windows lost their stream, the first
two folded into one segment, the third into a second, and the run left unfinished (no end
time, as Ctrl-C leaves it), so a resume of it has to be answered."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from energyrig.domain import Point, Window
from energyrig.results.store.write import RunWriter

BUDGET = [{"component": c, "type": t, "u_j": u, "source": f"{c} of the fixture"}
          for c, t, u in (("repeatability", "A", 2e-9), ("ADC resolution", "B", 1e-10),
                          ("gain calibration", "B", 3e-10), ("skew calibration", "B", None),
                          ("window overhead", "B", 5e-11), ("offset calibration", "B", 0.0),
                          ("supply voltage", "B", 4e-10))]
CORRECTIONS = (("offset_a", 1.5e-6), ("gain", 1.01), ("skew_s", 2e-5), ("overhead_s", 1e-5),
               ("overhead_j", 1e-8), ("offset_a[0]", 1e-6), ("offset_a[1]", 2e-6),
               ("gain[0]", 1.02), ("gain[1]", 0.99))
WINDOW_U = (("edge quantisation", 1e-9), ("baseline noise", 2e-9), ("sample noise", 3e-9),
            ("ADC resolution", 4e-10), ("gain calibration", 5e-10),
            ("skew calibration", float("nan")), ("window overhead", 6e-11),
            ("offset calibration", 0.0), ("supply voltage", 7e-10))


def windows(scale: float, flags: tuple[tuple[str, ...], ...]) -> list[Window]:
    return [Window(0.01 * k, 0.01 * k + 0.005, 500, scale * (1 + 0.01 * k), 1e-3,
                   flags=f, corrections=CORRECTIONS, uncertainty=WINDOW_U)
            for k, f in enumerate(flags)]


def main(out: Path) -> None:
    with RunWriter.create(out, plan={"name": "v1-fixture"}, fixture={"name": "synthetic"},
                          seed=1, consolidate_every=2) as writer:
        u = {"net_energy_per_op_u_j": 5e-9, "time_per_op_u_s": 1e-6,
             "uncertainty_budget": BUDGET}
        writer.write_point(Point(op="sha256", family="hash", board="b", payload_bytes=64),
                           windows(1e-4, (("glitch", "uncalibrated"), (), ("uncalibrated",))),
                           batch_n=10, uncertainty=u, flags=("ci_target_not_met",))
        writer.write_point(Point(op="aes-ecb-encrypt", family="block", board="b",
                                 key_bits=128, payload_bytes=16),
                           windows(2e-4, ((), (), ())), batch_n=10, uncertainty=u)
        writer.write_failed(Point(op="md5", family="hash", board="b", payload_bytes=64),
                            "stream_loss 2 of 2 windows",
                            windows=windows(1e-4, (("stream_loss",), ("stream_loss",))))
        writer.close(finished=False)  # an unfinished run
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["host"] = {"hostname": "v1-fixture", "platform": "Linux"}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
