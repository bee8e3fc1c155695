"""Issue 23, 5: one op keeps one colour in every figure of a report, and across the reports
of runs of the same plan."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from energyrig.domain import Point, Window
from energyrig.results import RunWriter
from energyrig.results.report import write_report
from energyrig.rig.flags import FLAGS

# the report's figures drawn once per process for the same tables (support/report_memo.py)
pytestmark = pytest.mark.usefixtures("figures_drawn_once")

# A family whose first op has no payload (it is in the energy-time figure, not in the payload
# one), then two ops with payloads, on two boards.
OPS = (("aes-ecb-keyexpand", 128, None), ("aes-ecb-encrypt", 128, 64),
       ("aes-ecb-encrypt", 128, 256), ("rc6-ecb-encrypt", 128, 64),
       ("rc6-ecb-encrypt", 128, 256), ("aes-ecb-encrypt", 256, 64),
       ("aes-ecb-encrypt", 256, 256))


def _run(run_dir: Path, failed: str | None = None) -> Path:
    """The same plan each time; the points of op ``failed`` failed, if one is named."""
    with RunWriter.create(run_dir, plan={"name": "colours"}) as writer:
        for board, scale in (("nrf52840dk", 1.0), ("esp32", 0.6)):
            for op, key_bits, size in OPS:
                for rep in range(2):
                    point = Point(op=op, family="symmetric", board=board, key_bits=key_bits,
                                  payload_bytes=size, rep=rep)
                    if op == failed:
                        writer.write_failed(point, "DUT did not answer")
                        continue
                    cost = scale * (1 + len(op) + key_bits / 64) * (size or 32) * 1e-9
                    writer.write_point(point, [Window(0.0, cost * 1e3, 100, cost * f, 0.0)
                                               for f in (1.0, 1.01, 0.99)], batch_n=10)
    return run_dir


def _colours(report: Path) -> dict[str, set[str]]:
    """Each op configuration's colours over every per-op figure of a report."""
    seen: dict[str, set[str]] = {}
    for name in ("energy-time-symmetric.json", "payload-symmetric.json"):
        for p in json.loads((report / name).read_text())["points"]:
            seen.setdefault(p["label"].split(" · ")[0], set()).add(p["colour"])
    return seen


@pytest.mark.pipeline  # two whole reports drawn (tests/README.md)
def test_an_op_has_one_colour_in_every_figure_and_every_run_of_its_plan(
        tmp_path: Path) -> None:
    report = write_report(_run(tmp_path / "all"), flags=FLAGS).parent
    colours = _colours(report)
    assert set(colours) == {"aes-ecb-keyexpand 128", "aes-ecb-encrypt 128",
                            "aes-ecb-encrypt 256", "rc6-ecb-encrypt 128"}
    assert all(len(c) == 1 for c in colours.values()), colours
    assert len({c for cs in colours.values() for c in cs}) == len(colours)  # never shared
    # another run of the plan, where one op failed: the others keep their colours
    again = _colours(write_report(_run(tmp_path / "failed", failed="aes-ecb-keyexpand"), flags=FLAGS)
                     .parent)
    assert set(again) == set(colours) - {"aes-ecb-keyexpand 128"}
    assert all(again[label] == colours[label] for label in again), (again, colours)
