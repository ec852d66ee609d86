"""Continuum quantities from the spheres and their contacts: stress per sphere
(:mod:`~pdyn.fields.sphere`), the cell's stress tensor (:mod:`~pdyn.fields.virial`),
coarse-grained fields on a grid (:mod:`~pdyn.fields.grid`, :mod:`~pdyn.fields.deposit`,
:mod:`~pdyn.fields.coarse`), every contact once (:mod:`~pdyn.fields.once`) and
order-independent sums (:mod:`~pdyn.fields.exact`). Arrays in, arrays out: nothing here
runs a step or writes a file (``pdyn.io`` does)."""
