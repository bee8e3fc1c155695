"""A simulated lab killed with SIGKILL leaves no process behind (issue 20, item 16): its
coordinator, bench hosts, exporters, emulators, DUTs and ser2net die with it, and the next lab
to start removes the temporary folder it could not."""
from __future__ import annotations

import fcntl
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from support.lab import rig_lab_sim

from energyrig.lab.place import LabClient
from energyrig.rig.labsim import OWNER_LOCK, remove_stale_workdirs

#: How long the orphans may take to notice and stop, s: a bound on a hang, not on speed (a
#: bench host stops its exporter, DUT and emulator, each given seconds to exit).
GONE_WITHIN_S = 120.0


def _living(procs: list[psutil.Process]) -> list[psutil.Process]:
    return [p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


@pytest.fixture
def lab_tmp() -> Iterator[Path]:
    """The killed lab's TMPDIR, its own: another test's lab starting meanwhile (pytest-xdist's
    other worker) removes the stale folders of its TMPDIR, which would take this one before
    the test looks. Short: the lab's trigger wires are Unix sockets in it."""
    path = Path(tempfile.mkdtemp(prefix="rig-test-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow
def test_a_lab_killed_with_sigkill_leaves_no_process_and_its_folder_goes_next_start(
        lab_tmp: Path) -> None:
    with rig_lab_sim(["bench-a", "bench-b"], tmpdir=lab_tmp) as (rig, coordinator):
        LabClient(coordinator).acquire("bench-a")          # its ports get ser2net
        procs = psutil.Process(rig.pid).children(recursive=True)
        # coordinator; per bench: host, exporter, emulator, DUT (and bench-a's ser2net)
        assert len(procs) >= 9, procs
        workdir = next(Path(p.cwd()) for p in procs
                       if "labgrid-coordinator" in " ".join(p.cmdline()))
        assert (workdir / OWNER_LOCK).is_file()
        rig.send_signal(signal.SIGKILL)
        assert rig.wait() == -signal.SIGKILL
    psutil.wait_procs(_living(procs), timeout=GONE_WITHIN_S)
    assert _living(procs) == []
    # The folder is left, unlocked; the next start (this is what it calls first) removes it.
    assert workdir.is_dir()
    assert workdir in remove_stale_workdirs(workdir.parent)
    assert not workdir.exists()


def test_a_running_labs_folder_is_not_removed(tmp_path: Path) -> None:
    """Only a folder whose lab is gone goes: one locked by a live lab stays, and so does a
    ``rig-lab-*`` folder that is not a lab's (no lock file)."""
    live, other = tmp_path / "rig-lab-live", tmp_path / "rig-lab-other"
    live.mkdir()
    other.mkdir()
    fd = os.open(live / OWNER_LOCK, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert remove_stale_workdirs(tmp_path) == []
        assert live.is_dir() and other.is_dir()
    finally:
        os.close(fd)
    assert remove_stale_workdirs(tmp_path) == [live]
    assert other.is_dir()
