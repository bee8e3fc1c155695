"""energyrig.instruments.ppk2"""
