"""Renderers of the simulated fleet in each real upstream format (one module per format family)."""
