"""energyrig.instruments.scope"""
