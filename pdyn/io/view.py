"""What a writer may read: a plain read-only record of the run at the end of a step."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class OutputView(NamedTuple):
    """The run at the end of step ``step`` as the driver hands it to its writers (a writer
    declares ``due(step)`` and ``needs``, a set of the names below it asks the driver to
    fill in, and reads nothing else; it never sees the simulation).

    ``time`` and ``dt`` (s); ``comm`` the run's communicator; ``store`` this rank's
    particle store (read only); ``box`` (``pdyn.domain.Box``); ``scene`` its name; ``run_id``
    (``pdyn.io.runid``); ``first_step`` the step this process started from (a restart's,
    else 0); ``config`` the ``SimulationConfig``; ``contact`` the ``ContactConfig`` the run
    uses (its config's or its scene's); ``gravity`` (m/s²); ``steps_total`` the run's
    planned steps; ``r_mean`` the run's mean radius (m). Filled in when a due writer needs
    them: ``network`` / ``walls`` this rank's contact network / wall contacts of the step
    (``ContactPass.contact_list``); ``state`` the exchange's state (``exchange``), the
    inserter's parameters and state (``insertion``, None without insertion), the servo walls'
    states (``servos``, ``WallMotion.state``, None without servos), the stages' (``stages``,
    ``pdyn.stages.Stages.state``, None without stages), the changes' (``changes``,
    ``pdyn.stages.Changes.state``: the run's own dt and the changes made from Python; None
    when none) and the store
    holding what hangs on the lists (the contact history's records; saved only for a writer
    that needs it: a save every step would reload the history every step); ``thermo``
    this rank's contact statistics (``contacts``: ``pdyn.dynamics.contact.contact_stats``,
    its contacts counted once, its sphere–sphere contact ends and the largest overlap /
    radius); ``sphere_contacts`` every row's touching contacts from its own side, with their
    forces (``ContactPass.contact_list`` with ``lower=False``: per-sphere sums, ``pdyn.fields``);
    ``contacts_once`` those of them that count every contact once over the ranks
    (``pdyn.fields.once.once_mask``: a wall, a partner of higher id or fixed), as found.
    ``wall_kinds`` the kind code of each wall in id order −1, −2, … (``pdyn.walls``:
    0 a plane, 1 / 2 a cylinder with the spheres inside / outside, 3 a mesh) and ``n_box`` how many of
    them are box faces (the configured ``[[walls]]`` follow); None: box faces only.
    ``wall_table`` the wall table (``pdyn.walls.WallSet.table``, rows in id order); None:
    planes at rest. ``wall_meshes`` the mesh (``pdyn.mesh.Mesh``, geometry only) of each
    mesh wall's table row (``pdyn.walls.WallSet.mesh_of``); None: no mesh."""

    step: int
    time: float
    dt: float
    comm: object
    store: object
    box: object
    scene: str
    run_id: str | None
    first_step: int
    config: object
    contact: object
    gravity: np.ndarray
    steps_total: int
    r_mean: float
    network: dict | None = None
    wall_load: dict | None = None
    exchange: dict | None = None
    insertion: dict | None = None
    servos: dict | None = None
    stage: int | None = None  # the stage running after the step (None: no [[stages]])
    stages: dict | None = None  # the stages' state (pdyn.stages.Stages.state), with state
    changes: dict | None = None  # dt switches and changes from Python (pdyn.stages.Changes.state)
    contacts: tuple | None = None
    sphere_contacts: dict | None = None
    contacts_once: dict | None = None
    wall_kinds: np.ndarray | None = None
    n_box: int | None = None
    wall_table: np.ndarray | None = None
    wall_meshes: dict | None = None


#: the needs that ask for the contacts' forces (the force pass records tangential forces);
#: ``wall_loads``: a collecting writer's (``Writer.collect``), every step
CONTACT_FORCES = frozenset({"network", "walls", "wall_loads", "sphere_contacts",
                            "contacts_once"})
#: of those, the ones of the wall contacts alone (the pass records the wall entries only)
WALL_FORCES = frozenset({"walls", "wall_loads"})
