"""energyrig: time and energy of one cryptographic operation on an embedded board."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("energyrig")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"
