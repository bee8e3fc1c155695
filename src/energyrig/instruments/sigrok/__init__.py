"""energyrig.instruments.sigrok"""
