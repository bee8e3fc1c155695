"""Every test sees an empty calibration store unless it sets its own: a record an operator
keeps in fixtures/calibration must not change what the tests measure. Set at import, so the
environment copies test modules make when they are imported carry it too."""
from __future__ import annotations

import os
import tempfile

os.environ["ENERGYRIG_CALIBRATION_DIR"] = tempfile.mkdtemp(prefix="rig-test-calibration-")
