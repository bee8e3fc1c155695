"""Calibration: the records and their store (:mod:`.store`)."""
