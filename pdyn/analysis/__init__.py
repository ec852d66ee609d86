"""Analysis of simulation output for the validation benchmarks: fits, profiles and markers,
numpy on arrays (positions, velocities, sampled series); nothing here runs a simulation.

- :mod:`pdyn.analysis.beverloo`: silo discharge, the constant-rate window and Beverloo's law
  [Beverloo1961].
- :mod:`pdyn.analysis.bagnold`: chute flow, slab profiles of φ and v_x (from the spheres or
  a ``[[fields]]`` file, with its stresses), Bagnold's profile [Bagnold1954; Silbert2001]
  and the inertial number [Jop2006].
- :mod:`pdyn.analysis.drum`: a rotating drum's free surface and its regime markers
  [Mellmann2001].
- :mod:`pdyn.analysis.packing`: packing fraction in slabs and coordination numbers of a bed
  [Silbert2010; AgnolinRoux2007].
- :mod:`pdyn.analysis.janssen`: Janssen's saturation of a column's floor load, wall pressure
  and (from a ``[[fields]]`` file) vertical stress [Janssen1895].
- :mod:`pdyn.analysis.mixing`: per-cell counts of each material and Lacey's mixing index
  [Lacey1954].
- :mod:`pdyn.analysis.dembenchmark`: the DEM community's silo and drum benchmark [Dosta2024]:
  its values, the packings pdyn starts it from, the quantities it compares.

The benchmark scripts (``benchmarks/beverloo.py``, ``chute_bagnold.py``, ``drum_angle.py``,
``bulk_validation.py``) run the scenes and print the tables; what they compute from the
output is here, tested on synthetic data in ``tests/``.
"""
