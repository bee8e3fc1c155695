"""energyrig.calibration"""
