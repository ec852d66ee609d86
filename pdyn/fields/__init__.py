"""Continuum quantities from the spheres and their contacts: stress per sphere
(:mod:`~pdyn.fields.sphere`), the cell's stress tensor (:mod:`~pdyn.fields.virial`) and
order-independent sums (:mod:`~pdyn.fields.exact`). Arrays in, arrays out: nothing here
runs a step or writes a file (``pdyn.io`` does)."""
