"""energyrig.instruments.sim"""
