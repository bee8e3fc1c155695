"""energyrig.cli"""
