"""energyrig: time and energy of one cryptographic operation on an embedded board."""
from __future__ import annotations


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed metadata on first use (importlib.metadata
    is slow to import, and most commands never ask), then kept as the module's attribute:
    the version of the code this process runs."""
    if name != "__version__":
        raise AttributeError(f"module 'energyrig' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("energyrig")
    except PackageNotFoundError:  # running from a source tree that is not installed
        found = "0+unknown"
    globals()["__version__"] = found
    return found
