"""The bench, the DUT link, windows and energy integration, measurement of a point, sweeps."""
