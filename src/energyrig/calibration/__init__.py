"""Calibration: the records and their store (:mod:`.store`) and the correction the point
pipeline applies from them (:mod:`.correction`)."""
