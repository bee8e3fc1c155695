"""Every test sees an empty calibration store and an empty cache unless it sets its own: a
record an operator keeps in fixtures/calibration must not change what the tests measure. Set
at import, so the environment copies test modules make when they are imported carry it too."""
from __future__ import annotations

import os
import tempfile

os.environ["ENERGYRIG_CALIBRATION_DIR"] = tempfile.mkdtemp(prefix="rig-test-calibration-")
# Nor may the catalogue `rig ops` keeps in the operator's cache (energyrig.rig.opscache).
os.environ["ENERGYRIG_CACHE_DIR"] = tempfile.mkdtemp(prefix="rig-test-cache-")
