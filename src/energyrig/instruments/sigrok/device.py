"""A libsigrok device driven through ``sigrok-cli`` (subprocess transport).

A single-shot recorder in the sense of :mod:`energyrig.instruments.base`: each
:meth:`SigrokDevice.arm` starts one ``sigrok-cli`` capture into a session file in a private
directory; :meth:`SigrokDevice.collect` waits for it and reads the file with the ``.sr``
reader into a :class:`~energyrig.instruments.base.RecordedCapture`. The command lines come
from :mod:`energyrig.instruments.sigrok.protocol`; this module only runs them.

sigrok-cli's own triggers (``--triggers``) are not used: in libsigrok 0.5.2 the soft
trigger drops analog data and shortens the capture. The trigger line is recorded as an
ordinary logic channel, or on an analog channel thresholded by the reader at
``reader.trigger_level_v`` (devices without logic inputs, such as the Hantek 6022BE), and
the energy code finds the windows in it.
"""
from __future__ import annotations

import logging
import math
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from energyrig.errors import InstrumentError
from energyrig.instruments.base import (
    AcquisitionBase,
    ArmRequest,
    InstrumentInfo,
    Limits,
    RecordedCapture,
)
from energyrig.instruments.sigrok import protocol
from energyrig.instruments.sigrok.config import SIGROK_CLI, SigrokConfig
from energyrig.instruments.sigrok.flags import SHORT_CAPTURE
from energyrig.instruments.sigrok.protocol import ScannedDevice
from energyrig.instruments.sigrok.srfile import SrCapture, SrOptions

log = logging.getLogger(__name__)

POLL_S = 0.02
STOP_GRACE_S = 5.0


def _tail(text: str, lines: int = 12) -> str:
    return " | ".join(text.strip().splitlines()[-lines:]) or "(no output)"


def _which(sigrok_cli: str) -> str:
    found = shutil.which(sigrok_cli)
    if found is None:
        raise InstrumentError(f"{sigrok_cli} not found: install the Debian package sigrok-cli "
                              "(scripts/install-deps.sh does)")
    return found


def run_sigrok(argv: list[str], timeout_s: float) -> str:
    """Run a short sigrok-cli command and return its stdout.

    Raises
    ------
    InstrumentError
        sigrok-cli is missing, timed out or failed (the message carries its stderr).
    """
    _which(argv[0])
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        raise InstrumentError(f"{' '.join(argv)} did not finish within {timeout_s:g} s") from exc
    if done.returncode != 0:
        raise InstrumentError(f"{' '.join(argv)} failed (exit {done.returncode}): "
                              f"{_tail(done.stderr)}")
    return done.stdout


def reader_options(config: SigrokConfig) -> SrOptions:
    """How the capture files of ``config``'s device are read: its trigger, current and
    voltage channels and their scaling."""
    return SrOptions(trigger=config.trigger, trigger_level_v=config.trigger_level_v,
                     trigger_hysteresis_v=config.trigger_hysteresis_v, current=config.current,
                     voltage=config.voltage, shunt_ohms=config.shunt_ohms,
                     current_scale_a_per_v=config.current_scale_a_per_v,
                     voltage_minus_shunt=config.voltage_minus_shunt)


def list_devices(sigrok_cli: str = SIGROK_CLI, driver: str | None = None,
                 timeout_s: float = 30.0) -> list[ScannedDevice]:
    """Devices libsigrok finds (``sigrok-cli --scan``), optionally of one driver."""
    return protocol.parse_scan(run_sigrok(protocol.scan_argv(sigrok_cli, driver), timeout_s))


class SigrokDevice(AcquisitionBase):
    """Acquisition from a libsigrok device through sigrok-cli (an ``Acquisition``).

    Use as a context manager::

        with SigrokDevice(cfg) as dev:
            dev.arm(pre_s=0.05, window_s=0.2, post_s=0.05)
            ...  # let the DUT run its batch
            capture = dev.collect(timeout_s=5)

    :meth:`collect` returns the samples in memory, read in chunks from the session file
    (:attr:`last_file`), which stays until the next :meth:`arm` or :meth:`stop`, or for good
    when ``keep_dir`` is given.

    Parameters
    ----------
    config:
        Driver, connection, channels, sample rate and channel mapping (the fixture's
        ``[instrument]`` table, :class:`~energyrig.instruments.sigrok.config.SigrokConfig`).
    keep_dir:
        Directory in which to keep every capture file (``capture-0001.sr`` ...); ``None``:
        a private temporary directory removed by :meth:`stop`.
    startup_timeout_s:
        How long :meth:`arm` waits for the device to start delivering samples.
    """

    def __init__(self, config: SigrokConfig, keep_dir: Path | None = None,
                 startup_timeout_s: float = 20.0) -> None:
        self.config = config
        self.reader = reader_options(config)
        self.keep_dir = keep_dir
        self.startup_timeout_s = startup_timeout_s
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._dir: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._output: Path | None = None
        self._stderr_path: Path | None = None
        self._samples = 0
        self._count = 0
        self.scanned: ScannedDevice | None = None
        self.last_file: Path | None = None

    @property
    def device(self) -> str:
        """The ``--driver`` spec, for messages."""
        return protocol.driver_spec(self.config)

    def start(self) -> None:
        """Check that sigrok-cli is installed and the device answers a scan (:attr:`scanned`).

        Raises
        ------
        InstrumentError
            sigrok-cli is missing or no device answers to the driver/conn given.
        ConfigError
            The channel mapping names a channel that will not be captured.
        """
        found = list_devices(self.config.sigrok_cli, self.device)
        if not found:
            raise InstrumentError(f"no sigrok device answers to --driver {self.device}; check the "
                                  "cable, the conn= and `sigrok-cli --scan`")
        protocol.check_reader_channels(self.config, found[0].channels)
        if self.keep_dir is not None:
            self.keep_dir.mkdir(parents=True, exist_ok=True)
            self._dir = self.keep_dir
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="energyrig-sigrok-")
            self._dir = Path(self._tmp.name)
        self.scanned = found[0]
        log.info("sigrok device %s: %s", self.device, self.scanned.description)

    def arm(self, pre_s: float, window_s: float, post_s: float, windows: int = 1) -> None:
        """Start a capture long enough for ``pre_s + window_s + post_s`` seconds (one
        trigger window: ``windows`` > 1 is refused).

        Returns once the device delivers samples (sigrok-cli has written its first packet),
        so a window started after this call falls inside the capture as long as ``pre_s``
        covers the caller's own latency.

        Raises
        ------
        InstrumentError
            Not started, a capture is already running, no sample rate is configured, or
            sigrok-cli failed or did not start within ``startup_timeout_s``.
        """
        if self._dir is None:
            raise InstrumentError(f"sigrok device {self.device}: arm() before start()")
        if self._process is not None:
            raise InstrumentError(f"sigrok device {self.device}: a capture is already running; "
                                  "collect() or stop() it first")
        rate = self.config.samplerate_hz
        if rate is None:
            raise InstrumentError(f"sigrok device {self.device}: no samplerate_hz configured, "
                                  "cannot size a capture in seconds")
        request = ArmRequest(pre_s, window_s, post_s, windows).one_window(
            f"sigrok device {self.device}")
        self._discard_output()
        self._samples = protocol.samples_for(request.total_s, rate)
        self._output = self._next_output(self._dir)
        self._stderr_path = self._output.with_suffix(".stderr")
        argv = protocol.capture_argv(self.config, self._output, self._samples)
        _which(argv[0])
        log.info("starting %s", " ".join(argv))
        with self._stderr_path.open("wb") as stderr:
            self._process = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=stderr)
        deadline = time.monotonic() + self.startup_timeout_s
        while not self._output.exists() and self._process.poll() is None:
            if time.monotonic() > deadline:
                self._kill()
                raise InstrumentError(f"sigrok device {self.device} delivered no samples within "
                                      f"{self.startup_timeout_s:g} s: {self._stderr()}")
            time.sleep(POLL_S)
        if self._process.poll() not in (None, 0):
            self._fail()

    def collect(self, timeout_s: float) -> RecordedCapture:
        """Wait for the armed capture to finish and return its samples.

        The trigger channel arrives on logic bit 0 (see
        :mod:`energyrig.instruments.sigrok.srfile`). A capture shorter than armed (the
        device stopped early) is returned with the flag ``short_capture``.

        Raises
        ------
        InstrumentError
            Nothing armed, sigrok-cli failed (its stderr is in the message), wrote no data,
            or did not finish within ``timeout_s`` (it is then killed).
        """
        if self._process is None or self._output is None:
            raise InstrumentError(f"sigrok device {self.device}: collect() without arm()")
        try:
            self._process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self._kill()
            raise InstrumentError(f"sigrok device {self.device}: capture of {self._samples} samples "
                                  f"did not finish within {timeout_s:g} s: {self._stderr()}") from None
        if self._process.returncode != 0:
            self._fail()
        self._process = None
        if not self._output.exists():
            raise InstrumentError(f"sigrok device {self.device} wrote no samples: {self._stderr()}")
        self.last_file = self._output
        capture = SrCapture(self._output, self.reader)
        flags: tuple[str, ...] = ()
        if capture.samples < self._samples:
            log.warning("sigrok device %s delivered %d of %d samples: %s", self.device,
                        capture.samples, self._samples, self._stderr())
            flags = (SHORT_CAPTURE,)
        return RecordedCapture(source=f"sigrok:{self.device}", chunk_list=tuple(capture.chunks()),
                               trigger_bit=capture.trigger_bit, flags=flags)

    def acquire(self, duration_s: float, timeout_s: float | None = None) -> RecordedCapture:
        """Capture ``duration_s`` seconds now and return the capture (arm + collect)."""
        self.arm(0.0, duration_s, 0.0)
        return self.collect(timeout_s if timeout_s is not None else 2 * duration_s + 30.0)

    def limits(self) -> Limits:
        """The configured sample rate, no record limit (sigrok-cli writes the capture to a
        file of any length), no stream lag (a recorder).

        Raises
        ------
        InstrumentError
            No ``samplerate_hz`` is configured.
        """
        rate = self.config.samplerate_hz
        if rate is None:
            raise InstrumentError(f"sigrok device {self.device}: no samplerate_hz configured; "
                                  "set it in the fixture, or give --batch N")
        return Limits(sample_rate_hz=rate, max_record_s=None, stream_lag_s=0.0)

    def describe(self) -> InstrumentInfo:
        """Identity (the scanned model once started) and settings for the run manifest."""
        cfg, reader = self.config, self.reader
        return InstrumentInfo(
            kind="sigrok", name=self.scanned.description if self.scanned else "",
            address=self.device,
            sample_rate_hz=cfg.samplerate_hz if cfg.samplerate_hz is not None else math.nan,
            details={"channels": list(cfg.channels), "config": dict(cfg.config),
                     "trigger": reader.trigger, "trigger_level_v": reader.trigger_level_v,
                     "trigger_hysteresis_v": reader.trigger_hysteresis_v,
                     "current": reader.current, "shunt_ohms": reader.shunt_ohms,
                     "current_scale_a_per_v": reader.current_scale_a_per_v,
                     "voltage": reader.voltage})

    def stop(self) -> None:
        """Stop a running capture and remove the temporary files (not those in ``keep_dir``).

        Safe to call twice."""
        if self._process is not None:
            self._kill()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        self._dir = None

    def _stderr(self) -> str:
        if self._stderr_path is None or not self._stderr_path.exists():
            return "(no output)"
        return _tail(self._stderr_path.read_text(errors="replace"))

    def _fail(self) -> None:
        assert self._process is not None
        code = self._process.returncode
        self._process = None
        raise InstrumentError(f"sigrok-cli failed on {self.device} (exit {code}): {self._stderr()}")

    def _kill(self) -> None:
        assert self._process is not None
        self._process.terminate()
        try:
            self._process.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None

    def _next_output(self, directory: Path) -> Path:
        """A capture file name not used yet (kept captures of earlier runs stay intact)."""
        while True:
            self._count += 1
            path = directory / f"capture-{self._count:04d}.sr"
            if not path.exists():
                return path

    def _discard_output(self) -> None:
        """Remove the previous capture's files unless captures are kept."""
        if self.keep_dir is None:
            for path in (self._output, self._stderr_path):
                if path is not None:
                    path.unlink(missing_ok=True)
