"""energyrig.results"""
