"""Output: HDF5 snapshots (and later checkpoints and the ParaView sidecar)."""
