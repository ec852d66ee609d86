"""Narrow phase, contact laws and time integration (numba kernels)."""
