"""What can be read of a run between its steps, summed over the ranks: the simulated time,
energies (J), momentum (kg m/s), the contacts and their forces (N), and the run's summary.
:class:`Observables` is the simulation's reading side; the driver (``pdyn.simulation``) is
its stepping side. Every method that sums over ranks is collective."""

from __future__ import annotations

import numpy as np

from .capture import contact_network
from .components import insertion_view, wall_view
from .dynamics.contact import touching_pairs
from .dynamics.neighbours import integrated
from .io import OutputView


class Observables:
    """Readings of a run from its ``comm``, ``store``, ``neighbours``, ``contact`` (the
    ``ContactPass``), ``gravity``, ``clock``, ``step_index`` and the last force pass's
    ``n_contacts`` and ``elastic_energy`` (the attributes ``pdyn.simulation.Simulation``
    keeps); :meth:`view`, what a writer reads, also from the run's other parts
    (``pdyn.assembly.Parts``) and what the step captured."""

    @property
    def time(self) -> float:
        """The simulated time (s) of the step reached (``pdyn.clock.Clock.time``: step · dt
        unless a stage or ``change`` switched dt)."""
        return self.clock.time(self.step_index)

    @property
    def dt(self) -> float:
        """The time step (s) of the next step."""
        return self.clock.dt

    def _integrated(self) -> np.ndarray:
        """Handles of the owned, finite, not fixed particles, ascending."""
        return integrated(self.store.flags)

    def kinetic_energy(self) -> float:
        """Translational kinetic energy of every rank's owned particles (J)."""
        return self.comm.allreduce_sum(self.store.kinetic_energy())

    def potential_energy(self) -> float:
        """Elastic energy stored in contacts plus gravitational energy (J)."""
        h = self._integrated()
        grav = -float(np.sum(self.store.mass[h] * (self.store.pos[h] @ self.gravity)))
        return self.comm.allreduce_sum(self.elastic_energy + grav)

    def momentum(self) -> np.ndarray:
        """Total momentum of every rank's owned particles (kg m/s, (3,))."""
        return self.comm.allreduce_sum(self.store.momentum())

    def contact_pairs(self) -> np.ndarray:
        """Current contacts of this rank's integrated spheres with other spheres, as sorted
        global-id pairs (K, 2), each once."""
        return touching_pairs(self.store, self.neighbours,
                              self.contact.evaluated(self.store, self.neighbours))

    def contact_network(self) -> dict:
        """This rank's share of the touching contacts with their forces now
        (``pdyn.capture.contact_network``; a fixed sphere's contacts with spheres of higher
        id are left out: it has no row), the damping from the full-step velocities (ghosts'
        too: the same numbers on any rank count). With friction the tangential forces are
        the last force pass's record: ``sim.record_tangential = True`` before the run keeps
        them, else they are NaN. Snapshots write the step's captured contacts
        (``sim.sphere_contacts``, each once, ``pdyn.fields.once``), which damping evaluated
        with the kernel's velocities."""
        return self._network(spheres=True)

    def wall_contacts(self) -> dict:
        """This rank's sphere–wall contacts with their forces now, as
        :meth:`contact_network` (the wall-force series sums those of each force pass,
        ``pdyn.io.wallforces``)."""
        return self._network(spheres=False)

    def _network(self, spheres: bool) -> dict:
        """The contact network now (``spheres=False``: the wall contacts), tangential forces
        NaN where friction acts and the last pass did not record them."""
        net = contact_network(self.contact, self.store, self.neighbours, self.dt,
                              spheres=spheres)
        if (self.contact.law.tangential_model is not None
                and self.contact.recorded_tangential(self.neighbours, spheres) is None):
            net["tangential_force"][:] = np.nan
        return net

    def summary(self) -> dict:
        """The run in numbers (global): scene, particles, ranks, steps, dt (s), time (s), wall
        seconds and steps per second of the last ``run``, contacts, rebuilds, balancing,
        skin (m), kinetic energy (J) and the seconds per phase."""
        wall = self.wall_time
        return {
            "scene": self.scene.name,
            "particles": self.comm.allreduce_sum(int(self.store.owned.size)),
            "ranks": self.comm.size,
            "broadphase": self.config.broadphase,
            "steps": self.step_index,
            "dt": self.dt,
            "time": self.time,
            "wall_seconds": wall,
            "steps_per_second": self.steps_run / wall if wall > 0 else float("nan"),
            "contacts": self.comm.allreduce_sum(int(self.n_contacts)),
            "rebuilds": self.rebuilds,
            "rebalances": self.balancer.rebalances,
            "mean_imbalance": self.balancer.mean_imbalance,
            "neighbour_skin": self.neighbours.skin,
            "kinetic_energy": self.kinetic_energy(),
            "timers": dict(self.timers),
        }

    def view(self, needs=frozenset()) -> OutputView:
        """What a writer may read now (``pdyn.io.OutputView``), with what ``needs`` asks
        for: ``state`` the exchange's and the inserter's state, ``network``, ``walls`` and
        ``thermo`` what the step captured (``pdyn.capture``)."""
        state = "state" in needs
        return OutputView(
            step=self.step_index, time=self.time, dt=self.dt, comm=self.comm,
            store=self.store, box=self.box, scene=self.scene.name, run_id=self.run_id,
            first_step=self.first_step, config=self.config, contact=self.contact_config,
            gravity=self.gravity, steps_total=self.steps, r_mean=self.r_mean,
            network=self.network, wall_load=self.wall_load, contacts=self.contact_stats,
            sphere_contacts=self.sphere_contacts, contacts_once=self.contacts_once,
            exchange=self.exchange.state() if state else None,
            insertion=insertion_view(self.inserter) if state else None,
            servos=self.wall_motion.state() if state else None,
            stage=None if self.stages is None else self.stages.index,
            stages=self.stages.state() if state and self.stages is not None else None,
            changes=self.changes.state() if state else None,
            **wall_view(self.wallset))

    def last_good(self) -> str:
        """Where the run can continue from now: its newest checkpoint, else the checkpoint it
        was restarted from (for every stop's message)."""
        written = [w.written[-1] for w in self.writers if w.name == "checkpoint" and w.written]
        last = written[-1] if written else self.restarted_from
        return (f"last good checkpoint: {last}" if last else
                "no checkpoint written by this run")
