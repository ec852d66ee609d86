"""Determinism under real mpiexec (2 and 4 ranks, :data:`TWO_RANKS` on 2 alone; also runs on
1), over one table of scenes:
each row runs a scene on N ranks and compares, bit for bit, the fields it names (by id,
gathered from every rank)

- ``ranks``: with the 1-rank run of the same config (or of its ``reference``; run on rank 0);
  with ``wall_forces`` the wall-force series too, byte for byte;
- ``restart``: the run continued from its checkpoint of step ``at`` on the same ranks, with
  the uninterrupted run; with ``wall_forces`` the continued rows of the series too;
- with ``coarse`` (``[[fields]]`` tables) or ``output`` (more ``[output]`` fields, such as
  ``sphere_stress`` or ``wall_pressure`` snapshots) the coarse-grained fields' files, the
  snapshots' per-sphere stress and wall pressure maps of both comparisons, value for value;

and, with ``inserter``, the insertion's state. ``check`` asserts what the run must have done
for the comparison to mean something (contacts, rebuilds, rebalancing, walls touched); it
runs on every rank (``run.ref``, the 1-rank run, only on rank 0). The scenes are in
``scenes.py``; multi-rank tests of other kinds (every step's ids, errors, files across rank
counts) stay in their files."""

from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Callable

from pathlib import Path

import numpy as np
import pytest

from pdyn.broadphase import REGISTRY
from pdyn.config import FieldsConfig, OutputConfig, SimulationConfig
from pdyn.fields.coarse import FIELDS
from pdyn.io import read_fields, read_snapshot
from pdyn.io.hdf5 import step_files
from pdyn.mesh import grid_surface
from pdyn.parallel import SerialComm
from pdyn.particles import FIXED
from pdyn.restart import from_checkpoint
from pdyn.simulation import Simulation
from pdyn.stl import write_stl

from . import scenes
from .conftest import idle_barrier
from .scenes import BOUNDARIES, FRICTIONAL_STATE, PROGRAMMED, TUBE, gather_fields

pytestmark = pytest.mark.mpi

MOTION = ("pos", "vel")
GLUED = FRICTIONAL_STATE + ("anchor", "glued")


@dataclass(frozen=True)
class Case:
    """A row of the table: ``config(folder, comm, output)`` run for ``steps`` steps on N ranks,
    compared as ``compares`` says (module docstring) over the store ``fields``."""
    name: str
    config: Callable
    steps: int
    compares: tuple = ("ranks",)
    at: int = 0  #: the checkpoint step a restart continues from
    fields: tuple = FRICTIONAL_STATE
    scene: Callable = None  #: the pdyn.scenarios.Scene given to the Simulation, if any
    reference: Callable = None  #: the 1-rank run's config from the N-rank run's (same if None)
    wall_forces: bool = False
    inserter: bool = False
    before: Callable = None  #: (sim, comm) -> run.before, on the N-rank run before it runs
    mid: Callable = None  #: (continued sim) -> run.mid, before the continued run runs
    check: Callable = None  #: (run) -> None, after the comparisons
    slow: bool = False
    coarse: tuple = ()  #: [[fields]] tables (pdyn.config.FieldsConfig)
    output: dict = None  #: further [output] fields of every run (snapshots with sphere stress)
    change: tuple = None  #: (step, sim -> None): changes made from Python after that step
    # (Simulation.change) in the N-rank and the 1-rank run; before ``at``


def advance(sim, case: Case) -> None:
    """Run ``case.steps`` steps, making the case's changes from Python on the way."""
    if case.change is not None:
        sim.run(case.change[0])
        case.change[1](sim)
    sim.run(case.steps - sim.step_index)


def compare(a, b, names, what):
    for name, x, y in zip(("gid",) + tuple(names), a, b):
        assert np.array_equal(x, y), f"{name} differs {what}"


SPHERE_STRESS = ("stress", "coordination", "contact_force")
WALL_PRESSURE = tuple(f"pressure/{k}" for k in ("normal_stress", "shear_stress", "area",
                                                "patch", "wall", "vertices", "triangles"))


def compare_outputs(a: Path, b: Path, after: int, what: str) -> int:
    """The fields files and the snapshots' per-sphere stress of run folder ``b`` equal those
    of ``a`` for every step after ``after`` that ``b`` holds; how many files compared."""
    n = 0
    for p in sorted((b / "fields").glob("*.h5")):
        if int(p.stem.rsplit("_", 1)[1]) > after:
            x, y = read_fields(a / "fields" / p.name), read_fields(p)
            for k in ("samples", *FIELDS):
                assert np.array_equal(x[k], y[k]), f"fields {p.name} {k} differs {what}"
            n += 1
    for step, p in step_files(b / "snapshots", "snap"):
        y = read_snapshot(p)
        if step > after and "stress" in y:
            x = read_snapshot(a / "snapshots" / p.name)
            ox, oy = np.argsort(x["id"]), np.argsort(y["id"])  # rank-major: by id
            for k in SPHERE_STRESS:
                assert np.array_equal(x[k][ox], y[k][oy]), \
                    f"snapshot {p.name} {k} differs {what}"
            n += 1
        if step > after and "pressure/normal_stress" in y["walls"]:
            x = read_snapshot(a / "snapshots" / p.name)
            for k in WALL_PRESSURE:
                assert np.array_equal(x["walls"][k], y["walls"][k]), \
                    f"snapshot {p.name} walls/{k} differs {what}"
            n += 1
    return n


@pytest.fixture
def run_case(comm, shared_dir):
    """Run a :class:`Case` and make its comparisons; the record its ``check`` gets."""

    def go(case: Case):
        restart = "restart" in case.compares
        more = case.output or {}
        out = OutputConfig(folder=str(shared_dir / "n"), overwrite=True,
                           checkpoint_every=case.at if restart else 0,
                           wall_forces=case.wall_forces, **more)
        scene = case.scene() if case.scene else None
        extra = {"scene": scene} if scene is not None else {}
        cfg = case.config(shared_dir, comm, out)
        if case.coarse:
            cfg = cfg.with_(fields=case.coarse)
        sim = Simulation(cfg, comm=comm, **extra)
        run = SimpleNamespace(sim=sim, comm=comm, folder=shared_dir, scene=scene, ref=None,
                              cont=None, mid=None,
                              before=case.before(sim, comm) if case.before else None)
        advance(sim, case)
        run.state = gather_fields(sim, case.fields)
        if restart:
            run.cont = from_checkpoint(
                shared_dir / "n" / "checkpoints" / f"ckpt_{case.at:08d}.h5", comm=comm,
                output=OutputConfig(folder=str(shared_dir / "b"), overwrite=True,
                                    wall_forces=case.wall_forces, **more))
            run.mid = case.mid(run.cont) if case.mid else None
            run.cont.run(case.steps - case.at)
            compare(run.state, gather_fields(run.cont, case.fields), case.fields,
                    "after the restart")
            if case.inserter:
                assert run.cont.inserter.state() == sim.inserter.state()
            if case.wall_forces and comm.rank == 0:
                a = (shared_dir / "n" / "wall_forces.csv").read_text().splitlines()
                b = (shared_dir / "b" / "wall_forces.csv").read_text().splitlines()
                assert b[0] == a[0] and b[1:] == a[case.at + 1:case.steps + 1]
            if (case.coarse or more) and comm.rank == 0:
                assert compare_outputs(shared_dir / "n", shared_dir / "b", case.at,
                                       "after the restart") > 0
        if "ranks" in case.compares and comm.rank == 0:
            ref_cfg = cfg.with_(output=OutputConfig(folder=str(shared_dir / "one"),
                                                    overwrite=True, wall_forces=case.wall_forces,
                                                    **more))
            run.ref = Simulation(case.reference(ref_cfg) if case.reference else ref_cfg,
                                 comm=SerialComm(), **extra)
            advance(run.ref, case)
            compare(run.state, gather_fields(run.ref, case.fields), case.fields,
                    "from the 1-rank run")
            if case.inserter:
                assert sim.inserter.state() == run.ref.inserter.state()
            if case.wall_forces:
                a = (shared_dir / "n" / "wall_forces.csv").read_text()
                assert a == (shared_dir / "one" / "wall_forces.csv").read_text()
            if case.coarse or more:
                assert compare_outputs(shared_dir / "one", shared_dir / "n", 0,
                                       "from the 1-rank run") > 0
        idle_barrier(comm)  # the other ranks wait for rank 0's run without slowing it
        if case.check:
            case.check(run)
        idle_barrier(comm)

    return go


# ------------------------------------------------------------------ what the runs must do
def dense_did_work(run):
    """Dense: many contacts, lists rebuilt, blocks moved during the run."""
    sim = run.sim
    assert run.comm.allreduce_sum(int(sim.n_contacts)) > 50
    assert sim.rebuilds > 5
    if run.comm.size > 1:
        assert sim.balancer.rebalances >= 5


def frictional_did_work(run):
    """Lists rebuilt, contact history held and spheres spinning."""
    state = dict(zip(("gid",) + FRICTIONAL_STATE, run.state))
    assert run.sim.rebuilds > 5
    assert (state["history_key"] != 0).sum() > 50 and np.abs(state["omega"]).max() > 0.1


def auto_switched(run):
    """``auto`` switched to ``hash_grid`` on some rank (on every one with one rank)."""
    bp = run.sim.broadphase
    assert run.comm.allreduce_sum(int(bp.switches > 0)) >= 1
    assert run.comm.size > 1 or bp.chosen == "hash_grid"


def contact_across_ranks(sim, comm):
    """The big sphere touches both small ones from the start, across ranks on N ranks."""
    found = {tuple(map(int, p)) for part in comm.allgather(sim.contact_pairs()) for p in part}
    assert (0, 1) in found and (0, 2) in found, found
    if comm.size > 1:
        owner_big = comm.allreduce_sum(int(0 in sim.store.gid[sim.store.owned]) * comm.rank)
        owner_small = comm.allreduce_sum(int(1 in sim.store.gid[sim.store.owned]) * comm.rank)
        assert owner_big != owner_small


def bounced(run):
    """Both small spheres bounced off the big one."""
    vel = run.state[2]
    assert vel[1, 0] > 0 and vel[2, 0] < 0


def reordered(run):
    assert run.sim.broadphase.calls["build"] > 2


def base_unmoved(sim, scene):
    """The chute's fixed spheres are where the scene put them, at rest, on every rank."""
    h = sim.store.owned
    mine = (sim.store.flags[h] & FIXED) != 0
    assert np.array_equal(scene.fixed[sim.store.gid[h]], mine)
    assert np.array_equal(sim.store.pos[h][mine], scene.positions[sim.store.gid[h][mine]])
    assert not sim.store.vel[h][mine].any()


def touched(sim, ids):
    """Some sphere touched one of the spheres ``ids`` (on some rank)."""
    pairs = np.concatenate(sim.comm.allgather(sim.contact_pairs()))
    return np.isin(pairs, ids).any()


def chute_base_hit(run):
    base_unmoved(run.sim, run.scene)
    assert touched(run.sim, np.flatnonzero(run.scene.fixed))


def glued_ids(sim, comm):
    return set(sim.store.gid[sim.glued.handles].tolist())


def drum_layer_hit(run):
    """The thrown spheres touched the glued layer, and glued spheres changed rank."""
    sim = run.sim
    assert sim.rebuilds >= 4 and touched(sim, np.flatnonzero(run.scene.glued >= 0))
    came = len(glued_ids(sim, run.comm) - run.before)
    assert run.comm.allreduce_sum(came) > 0 or run.comm.size == 1


def plate_wrapped(run):
    """Each glued centre stays the motion's image (x₀ + v t, whole periods apart), the layer
    wrapped at least once, and the dropped spheres are dragged along x."""
    gid, pos, vel = run.state[:3]
    layer = gid < 36
    shift = pos[layer] - run.scene.positions[gid[layer]] - [2.0 * run.sim.time, 0.0, 0.0]
    np.testing.assert_allclose(shift[:, 1:], 0.0, atol=1e-12)
    np.testing.assert_allclose(shift[:, 0] / 6.0, np.round(shift[:, 0] / 6.0), atol=1e-12)
    assert (np.abs(shift[:, 0]) > 1.0).any()
    assert np.all((pos[layer, 0] > -1.0) & (pos[layer, 0] < 7.0))
    assert vel[~layer, 0].mean() > 1.0


def discharged(run):
    assert run.sim.inserter.removed >= 10 and run.sim.rebuilds >= 4


def discharging_at_restart(run):
    assert 0 < run.mid < run.cont.inserter.removed


#: the hopper drains until 0.015 kg has left (after the restart's step), then closes
HOPPER_STAGES = [{"name": "drain", "outlet": "open", "mass_out": 0.015, "check_every": 20},
                 {"name": "closed", "outlet": "closed"}]


def outlet_closed_by_mass(run):
    stages = run.cont.stages
    assert stages.index == 1 and 200 < stages.starts[1] < 400
    assert run.cont.inserter.removed_mass >= 0.015


def walls_touched(*ids):
    """Lists rebuilt and the walls ``ids`` (negative contact ids) touched on some rank."""
    def check(run):
        assert run.sim.rebuilds >= 4
        walls = run.sim.wall_contacts()["id"][:, 1]
        seen = set(sum(run.comm.allgather(np.unique(walls).tolist()), []))
        assert set(ids) <= seen, seen
    return check


def maps_pressed(*ids):
    """Lists rebuilt, and some snapshot's pressure map has a pressed patch on each wall of
    ``ids`` (rank 0 reads the files)."""
    def check(run):
        assert run.sim.rebuilds >= 4
        if run.comm.rank == 0:
            seen = set()
            for _, p in step_files(run.folder / "n" / "snapshots", "snap"):
                walls = read_snapshot(p)["walls"]
                seen |= set(walls["pressure/wall"][walls["pressure/normal_stress"] > 0].tolist())
            assert set(ids) <= seen, seen
    return check


def dragged_by_the_drum(run):
    """The drum drags the bed along its bottom's motion, Ω ŷ × (−ẑ) = −x̂."""
    assert run.sim.rebuilds >= 4
    vel = run.sim.store.vel[run.sim.store.owned]
    assert run.comm.allreduce_sum(float(np.sum(vel[:, 0]))) < 0.0


def servo_pressed(run):
    """The servo wall (a piston, a cylinder's radius) pressed the spheres, and its state
    (offset, speed) is the same bits in every run compared."""
    walls_touched(run.sim.wall_motion.servos[0].gid)(run)
    (servo,) = run.sim.wall_motion.servos
    assert run.comm.allreduce_max(servo.load) > 1.0 and servo.offset > 0.0
    for other in (run.ref, run.cont):
        if other is not None:
            assert other.wall_motion.state() == run.sim.wall_motion.state()


def wall_forces_head(run):
    """The wall-force series' header, as columns (rank 0; None elsewhere)."""
    if run.comm.rank == 0:
        return (run.folder / "n" / "wall_forces.csv").read_text().splitlines()[0].split(",")
    return None


def trough_head(run):
    """The series has the force and torque of both mesh walls (ids 5 and 6)."""
    head = wall_forces_head(run)
    if head:
        assert head[-12:] == [f"wall{k}_{c}{a}" for c in "ft" for k in (5, 6) for a in "xyz"]


def stl_changed(delete: bool):
    """Before the run: the trough's STL file deleted, or edited (its trough 5 mm higher,
    where the spheres that reach it lie; the run holds its mesh, and its restart must not read
    the file again)."""
    def before(sim, comm):
        path = Path(sim.config.walls[0].file)
        if comm.rank == 0:
            if delete:
                path.unlink()
            else:
                slope = np.tan(np.radians(30.0))
                v, t = grid_surface(10, 100.0, lift=lambda x, y: slope * np.abs(x) + 5.0)
                write_stl(path, v[t].astype(np.float32))
        idle_barrier(comm)
    return before


def piston_head(run):
    """The series has the forces of the drum and the piston, and the piston's torque."""
    head = wall_forces_head(run)
    if head:
        assert head[:5] == ["step", "time", "wall1_fx", "wall1_fy", "wall1_fz"]
        assert head[5:8] == ["wall2_fx", "wall2_fy", "wall2_fz"] and len(head) == 14
        assert head[-3:] == ["wall2_tx", "wall2_ty", "wall2_tz"]


def staged(run):
    """The three stages began: the first ended by its duration, the second by its condition
    (the spheres slowed down) before its max_duration."""
    stages = run.sim.stages
    assert len(stages.starts) == 3 and stages.starts[1] == round(0.006 / run.sim.dt)
    assert stages.starts[2] - stages.starts[1] < round(0.01 / run.sim.dt)


def dt_switched(run):
    """The fine stage began at the coarse stage's end, the coarse one again after it; the
    restart's step lies in the fine stage."""
    starts, first = run.sim.stages.starts, round(0.004 / 8.41157911739082e-05)
    assert starts == [0, first, first + 100] and run.sim.clock.starts == starts
    assert first < 100 < first + 100 and run.sim.dt == 8e-5


def changed(run):
    """The changes made from Python after step 60 hold, and the continued run replayed them."""
    for sim in (run.sim, run.cont):
        assert sim.dt == 4e-5 and sim.gravity[2] == -4.9 and sim.clock.starts == [0, 60]
        assert [s for s, _ in sim.changes.made] == [60]


def tube_hit(run):
    """Spheres hit the tube, the drum carried a torque: the series (one row a step) shows
    both."""
    if run.ref is not None:
        a = (run.folder / "n" / "wall_forces.csv").read_text().splitlines()
        assert len(a) == 201
        head = a[0].split(",")
        rows = np.array([[float(x) for x in ln.split(",")] for ln in a[1:]])
        assert np.abs(rows[:, head.index("wall2_fz")]).max() > 0.0
        assert np.abs(rows[:, head.index("wall1_tx")]).max() > 0.0


def piled_up(ratio):
    """Lists rebuilt and a big sphere holding dozens of contact records (more than a sphere
    of the small size can hold: 12)."""
    def check(run):
        most = run.comm.allreduce_max(int(run.sim.store.history_count[
            run.sim.store.owned].max()))
        assert run.sim.rebuilds > 5 and most >= (25 if ratio == 3 else 35)
    return check


def poured_over_ranks(run):
    """Most spheres poured in, some drained, on several ranks."""
    owners = run.comm.allgather(len(run.sim.store.owned))
    if run.ref is not None:
        assert len(run.state[0]) > 150 and run.ref.inserter.removed > 0
        if run.comm.size > 1:
            assert sum(n > 0 for n in owners) > 1


def drained_while_balancing(run):
    """The checkpoint is mid-pour; spheres drained; blocks moved and spheres migrated."""
    assert 0 < run.mid < 300
    if run.ref is not None:
        assert run.ref.inserter.removed > 20 and len(run.state[0]) > 100
        if run.comm.size > 1:
            assert run.sim.balancer.rebalances > 1 and run.sim.exchange.n_migrated > 0


def mixed_materials(run):
    """Both sphere materials and the feed's touched each other and the box; the material
    indices arrived as set (the feed's rubber too), also on spheres that changed rank."""
    sim = run.sim
    state = dict(zip(("gid",) + FRICTIONAL_STATE + ("material",), run.state))
    n = len(run.state[0])
    assert sim.inserter.inserted == 40 and n == 240
    assert np.array_equal(state["material"][:200], np.arange(200) % 2)
    assert (state["material"][200:] == 1).all()
    assert run.comm.allreduce_sum(int(sim.n_contacts)) > 20 and sim.rebuilds > 5
    assert np.abs(state["omega"]).max() > 0.1
    if run.comm.size > 1:
        assert run.comm.allreduce_sum(int(sim.exchange.n_migrated)) > 0


def file_materials(run):
    """Each sphere of the file is of the material its row names (three materials), on any
    rank; the materials met each other and the box, and spheres changed rank."""
    state = dict(zip(("gid",) + FRICTIONAL_STATE + ("material",), run.state))
    index = {"glass": 0, "rubber": 1, "steel": 2}
    assert np.array_equal(state["material"], [index[m] for m in scenes.FILE_MATERIALS])
    assert run.comm.allreduce_sum(int(run.sim.n_contacts)) > 20 and run.sim.rebuilds > 1
    if run.comm.size > 1:
        assert run.comm.allreduce_sum(int(run.sim.exchange.n_migrated)) > 0


def mixing_on_any_ranks(run):
    """thermo.csv's mixing columns (``pdyn.analysis.mixing``): the same bytes as the 1-rank run's;
    each material's count adds up to the spheres, the index a number (mixed by the fall)."""
    if run.comm.rank != 0:
        return
    many = (run.folder / "n" / "thermo.csv").read_text()
    assert many == (run.folder / "one" / "thermo.csv").read_text()
    head, *rows = many.splitlines()
    names = head.split(",")
    assert names[-4:] == ["lacey", "spheres_glass", "spheres_rubber", "spheres_steel"]
    last = dict(zip(names, rows[-1].split(",")))
    assert int(last["spheres_glass"]) + int(last["spheres_rubber"]) == 240
    assert int(last["spheres_steel"]) == 0 and 0.0 < float(last["lacey"]) < 1.5


def poured_sizes(feeds):
    """Each feed poured on every rank count; the spheres span their radii."""
    def check(run):
        ins = run.sim.inserter
        assert [f.inserted for f in ins.feeds] == [n or f.inserted for f, n in
                                                  zip(ins.feeds, feeds)]
        assert all(f.inserted > 0 for f in ins.feeds) and run.sim.rebuilds > 5
        assert run.comm.allreduce_sum(int(run.sim.n_contacts)) > 50
        owners = run.comm.allgather(len(run.sim.store.owned))
        assert run.comm.size == 1 or sum(n > 0 for n in owners) > 1
        r = run.state[-1]
        assert r.max() > 1.5 * r.min()
    return check


def pulled(run):
    """Some contact pulled (cohesion: a negative normal force) at the end, on any rank count."""
    net = run.sim.contact_network()
    assert min(run.comm.allgather(float(net["force"].min(initial=0.0)))) < 0.0


def held_apart(run):
    """Some contact held past touching (JKR, a liquid bridge) is in the contact network,
    pulling, on any rank count: its ends farther apart than the radii (a wall's: its contact
    point farther than the radius)."""
    from pdyn.fields.sphere import radius_by_id
    store = run.sim.store
    net = run.sim.contact_network()
    ids, ends = net["id"], net["ends"].reshape(-1, 2, 3)
    reach = radius_by_id(store, ids[:, 0]) + np.where(
        ids[:, 1] < 0, 0.0, radius_by_id(store, np.maximum(ids[:, 1], 0)))
    apart = np.linalg.norm(ends[:, 1] - ends[:, 0], axis=1) > reach
    assert any(run.comm.allgather(bool(np.any(apart & (net["force"] < 0.0)))))


def both(*checks):
    """A check made of ``checks``, in their order."""
    def check(run):
        for one in checks:
            one(run)
    return check


def sheared(run):
    """The shear cell: contacts with history, rebuilds, spheres wrapped across the z faces
    (their x velocity offset), the image offset past L_x / 2 (wrapped), and a rank split."""
    sim = run.sim
    frictional_did_work(run)
    assert run.comm.allreduce_sum(sim.exchange.stats()["crossed"]) > 3
    length = sim.box.length
    assert sim.step_index * sim.dt * sim.box.shear_rate * length[2] > 0.5 * length[0]
    assert sim.exchange.grid.dims[0] == 1
    if run.comm.size > 1:
        assert len(sim.exchange.peers) > 0


def pressed(run):
    """The shear cell at constant pressure: sheared as :func:`sheared`, its z length shrunk
    toward the target pressure (the x and y lengths kept) and rebuilt meanwhile."""
    sheared(run)
    sim = run.sim
    assert sim.box.hi[2] < 0.95 * sim.scene.box_hi[2]
    assert np.array_equal(sim.box.hi[:2], sim.scene.box_hi[:2])
    assert sim.exchange.rate[2] != 0.0 and sim.rebuilds > 3


def triaxial_sheared(run):
    """The quick triaxial test: pressed, then its second stage ended by its axial strain (z
    at −TRIAXIAL_RATE, x and y following their pressure), contacts with history, rebuilds."""
    frictional_did_work(run)
    sim = run.sim
    assert sim.stages.finished and sim.stages.index == 1
    assert sim.exchange.rate[2] == -scenes.TRIAXIAL_RATE and np.all(sim.exchange.rate[:2] != 0)
    assert sim.box.length[2] < min(sim.box.length[:2])


def box_set(run):
    """The shear's control of the box set from Python after step 60 (z strained at
    −TRIAXIAL_RATE, x and y following their pressure), replayed by the continued run."""
    frictional_did_work(run)
    for sim in (run.sim, run.cont):
        assert [s for s, _ in sim.changes.made] == [60]
        assert sim.exchange.rate[2] == -scenes.TRIAXIAL_RATE and np.all(sim.exchange.rate[:2])


# ------------------------------------------------------------------ the table
def dense(kind, **cfg):
    return lambda folder, comm, output: scenes.dense_polydisperse(BOUNDARIES[kind], **cfg,
                                                                  output=output)


def lammps_choice(kind, law, history, damping, **given):
    """The frictional dense scene with one of the LAMMPS-equivalent contact choices
    (docs/contacts.md): ``damping`` with ``given`` (its coefficient or restitution) and the
    tangential ``history``."""
    def config(folder, comm, output):
        cfg = dense(kind, law=law, friction=0.5, **BALANCED)(folder, comm, output)
        return cfg.with_(contact=replace(cfg.contact, damping=damping,
                                         tangential_history=history,
                                         **{"restitution": 1.0, **given}))
    return config


def cohesive(make, materials=None, **contact):
    """``make``'s config (a Case's) with the ``contact`` fields changed and, with
    ``materials`` (name -> fields), those materials' fields too."""
    def config(folder, comm, output):
        cfg = make(folder, comm, output)
        cfg = cfg.with_(contact=replace(cfg.contact, **contact))
        if materials:
            cfg = cfg.with_(materials=tuple(replace(m, **materials.get(m.name, {}))
                                            for m in cfg.materials))
        return cfg
    return config


def built(make, *args, **cfg):
    """``make(*args, **cfg, output=...)`` as a Case's config."""
    return lambda folder, comm, output: make(*args, **cfg, output=output)


def trough(**cfg):
    """The mesh trough, its STL file written into the test's folder."""
    return lambda folder, comm, output: scenes.trough(folder, comm, **cfg, output=output)


def named_scene(name, **cfg):
    return lambda folder, comm, output: SimulationConfig(scene=name, progress=False, **cfg,
                                                         output=output)


BALANCED = dict(reorder_every=20, balance_every=20, balance_threshold=1.0)
#: a row's one N-rank run compared with the 1-rank run and continued from its checkpoint
#: (one run fewer than a "ranks" row and a "restart" row of the same scene)
BOTH = ("ranks", "restart")
#: coarse-grained fields of every kernel, 3D and 1D, windows of two samples (ending at the
#: restart's step), and snapshots with the per-sphere stress
COARSE = (FieldsConfig(name="gauss", cells=(4, 3, 5), every=25, window=2),
          FieldsConfig(name="lucy", cells=(1, 6, 1), kernel="lucy", width=2.0, every=50),
          FieldsConfig(name="gauss_depth", cells=(1, 1, 8), every=50),
          FieldsConfig(name="bins", cells=(1, 1, 7), kernel="bins", every=50))
SPHERE_SNAPSHOTS = {"sphere_stress": True, "snapshot_every": 100}
#: snapshots with wall pressure maps (planes, a tube, a cone, meshes)
WALL_PRESSURE_SNAPSHOTS = {"wall_pressure": True, "wall_patches": (6, 4)}

CASES = [
    *(Case(f"dense-{kind}-{bp}-{'every-step' if skin == 0.0 else 'lists'}",
           dense(kind, broadphase=bp, neighbour_skin=skin, balance_every=20,
                 balance_threshold=1.0),
           200, fields=MOTION, check=dense_did_work,
           slow=(kind, bp, skin) != ("periodic", "linked_cells", None))
      for kind in ("periodic", "walled") for bp in ("linked_cells", "hash_grid")
      if bp in REGISTRY for skin in (None, 0.0)),
    *(Case(f"frictional-{kind}-{law}",
           dense(kind, law=law, friction=0.5, reorder_every=20, balance_every=20,
                 balance_threshold=1.0),
           200, check=frictional_did_work, slow=(kind, law) != ("walled", "linear"))
      for kind in ("periodic", "walled") for law in ("linear", "hertz")),
    *(Case(f"lammps-{law}-{damping}-{history}",
           lammps_choice("walled", law, history, damping, **given), 200,
           ("ranks", "restart"), at=100, check=frictional_did_work, slow=law == "hertz")
      for law, damping, history, given in (
          ("linear", "mass_velocity", "projected", {"damping_coefficient": 5.0}),
          ("hertz", "viscoelastic", "projected", {"damping_coefficient": 100.0}),
          ("hertz", "tsuji", "rescaled", {"restitution": 0.5}))),
    *(Case(f"fields-{kind}", dense(kind, friction=0.5, **BALANCED), 200, compares, at=100,
           coarse=COARSE, output=SPHERE_SNAPSHOTS, slow=kind == "periodic")
      for kind, compares in (("walled", ("ranks", "restart")), ("periodic", ("ranks",)))),
    Case("auto-switching", named_scene("gas", scale=0.1, neighbour_skin=0.0, reorder_every=10,
                                       broadphase="auto"),
         30, fields=MOTION, reference=lambda c: c.with_(broadphase="index_sort"),
         check=auto_switched),
    Case("large-particle", built(scenes.large_particle), 300, fields=MOTION,
         before=contact_across_ranks, check=bounced),
    Case("reordering", dense("periodic", n=300, speed=3.0, dt=2e-3, reorder_every=7), 120,
         fields=MOTION, reference=lambda c: c.with_(reorder_every=0), check=reordered),
    Case("chute", named_scene("chute", **BALANCED), 300, scene=scenes.thrown_chute,
         check=chute_base_hit),
    Case("chute-restart", named_scene("chute"), 200, ("restart",), at=100,
         scene=scenes.thrown_chute, check=lambda run: base_unmoved(run.cont, run.scene),
         slow=True),
    Case("rough-drum", named_scene("drum", **BALANCED), 200, BOTH, at=100, fields=GLUED,
         scene=scenes.thrown_rough_drum, before=glued_ids, check=drum_layer_hit,
         slow=True),  # the lane has sliding-plate
    Case("sliding-plate", named_scene("drum", allow_deep_overlap=True, **BALANCED), 300,
         fields=GLUED,
         scene=scenes.sliding_plate, check=plate_wrapped),
    Case("hopper", built(scenes.discharging, stages=HOPPER_STAGES, **BALANCED), 400, BOTH,
         at=200, inserter=True, mid=lambda cont: cont.inserter.removed,
         check=both(discharged, discharging_at_restart, outlet_closed_by_mass)),
    Case("mesh-trough", trough(**BALANCED), 600, BOTH, at=300, wall_forces=True,
         check=both(walls_touched(-5, -6), trough_head), slow=True),  # the lane: servo-mesh-bed
    *(Case(f"mesh-trough-restart-stl-{edit}", trough(), 200, ("restart",), at=100,
           before=stl_changed(edit == "deleted"), slow=edit == "edited")
      for edit in ("edited", "deleted")),
    Case("mesh-drum", built(scenes.mesh_drum, **BALANCED), 1000, BOTH, at=400,
         wall_forces=True, check=dragged_by_the_drum, slow=True),  # the lane: servo-mesh-bed
    Case("moving-walls", built(scenes.drum_with_piston, **BALANCED), 300,
         check=walls_touched(-1, -2), slow=True),
    Case("moving-walls-restart", built(scenes.drum_with_piston), 200, ("restart",), at=100,
         wall_forces=True, check=piston_head),
    Case("programmed-walls", built(scenes.drum_with_piston, PROGRAMMED, **BALANCED), 300,
         wall_forces=True, check=walls_touched(-1, -2), slow=True),
    Case("programmed-walls-restart", built(scenes.drum_with_piston, PROGRAMMED), 200,
         ("restart",), at=100, wall_forces=True, check=piston_head),
    Case("servo-bed", built(scenes.servo_bed, scenes.SERVO_FORCE, **BALANCED), 600, BOTH,
         at=300, wall_forces=True, check=servo_pressed, slow=True),
    Case("servo-mesh-bed", built(scenes.servo_bed, scenes.SERVO_FORCE, mesh=True, **BALANCED),
         600, BOTH, at=300, wall_forces=True, check=servo_pressed),
    Case("servo-ring-tube", built(scenes.servo_ring, None, ((0.0, 0.0), (0.02, 2000.0)),
                                  0.02, **BALANCED), 600, BOTH, at=300, fields=MOTION,
         check=servo_pressed, slow=True),
    Case("staged-drum", built(scenes.staged_drum, **BALANCED), 300, BOTH, at=100,
         wall_forces=True, check=staged),
    Case("staged-dt", built(scenes.drum_with_piston, stages=scenes.DT_STAGES, **BALANCED), 300,
         BOTH, at=100, check=dt_switched, slow=True),
    Case("changed-drum", built(scenes.drum_with_piston, **BALANCED), 200, BOTH, at=100,
         change=(60, lambda sim: sim.change(**scenes.CHANGES)), check=changed, slow=True),
    Case("tube", built(scenes.drum_with_piston, TUBE, **BALANCED), 200, BOTH, at=100,
         wall_forces=True, check=tube_hit, slow=True),  # the lane: wall-pressure-tube-piston
    Case("cone-hopper", built(scenes.cone_hopper, **BALANCED), 300, BOTH, at=150,
         wall_forces=True, check=walls_touched(-8), slow=True),
    *(Case(f"packing-1:{ratio}", built(scenes.mixture, ratio), scenes.MIXTURE_STEPS[ratio],
           check=piled_up(ratio), slow=True) for ratio in (3, 10)),
    Case("two-materials", built(scenes.two_materials, **BALANCED), 400,
         fields=FRICTIONAL_STATE + ("material",), inserter=True, check=mixed_materials),
    Case("two-materials-restart", built(scenes.two_materials), 400, ("restart",), at=200,
         fields=FRICTIONAL_STATE + ("material",), inserter=True, slow=True),
    Case("materials-file", lambda folder, comm, output: scenes.materials_file(
        folder, comm, **BALANCED, output=output), 400, BOTH, at=200,
         fields=FRICTIONAL_STATE + ("material",), check=file_materials, slow=True),
    Case("lognormal-pour", built(scenes.lognormal_pour, **BALANCED), 1000, ("ranks", "restart"),
         at=500, fields=MOTION + ("omega", "radius"), inserter=True,
         check=poured_sizes([None]), slow=True),  # the lane: two-materials
    Case("cylinder-pour", built(scenes.cylinder_pour, **BALANCED), 1000,
         fields=MOTION + ("omega", "radius"), inserter=True, check=poured_sizes([None, 200]),
         slow=True),
    Case("heap-pour", built(scenes.heap_pour), 1200, fields=MOTION, inserter=True,
         check=poured_over_ranks, slow=True),
    *(Case(f"outlet-pour-{name}", built(scenes.outlet_pour, **kind), 600, ("ranks", "restart"),
           at=300, fields=fields, inserter=True,
           mid=lambda cont: cont.inserter.state()["inserted"], check=drained_while_balancing,
           slow=True)
      for name, kind, fields in (("frictional", {}, MOTION + ("omega",)),
                                 ("frictionless-linked-cells",
                                  {"friction": 0.0, "broadphase": "linked_cells", "seed": 4},
                                  MOTION))),
    *(Case(f"wall-pressure-{name}", make, steps, compares, at=steps // 2,
           output=dict(WALL_PRESSURE_SNAPSHOTS, snapshot_every=steps // 4), check=check,
           slow=slow)
      for name, make, steps, compares, check, slow in (
          ("tube-piston", built(scenes.drum_with_piston, TUBE, **BALANCED), 200,
           ("ranks", "restart"), maps_pressed(-1, -2), False),
          ("cone", built(scenes.cone_hopper, **BALANCED), 300, ("ranks", "restart"),
           maps_pressed(-7, -8), True),
          ("mesh", trough(**BALANCED), 600, ("ranks", "restart"), maps_pressed(-5, -6),
           True))),
    Case("cohesion-dmt-frictionless", cohesive(dense("walled", law="hertz", **BALANCED),
                                               cohesion="dmt", work_of_adhesion=50.0),
         200, BOTH, at=100, fields=MOTION, check=both(dense_did_work, pulled), slow=True),
    Case("cohesion-jkr-frictional", cohesive(dense("walled", law="hertz", friction=0.5,
                                                   **BALANCED),
                                             cohesion="jkr", work_of_adhesion=20.0),
         200, BOTH, at=100, wall_forces=True, output=SPHERE_SNAPSHOTS,
         check=both(frictional_did_work, pulled, held_apart)),
    Case("cohesion-liquid-bridge", cohesive(dense("walled", law="hertz", **BALANCED),
                                            cohesion="liquid_bridge", liquid_volume=1e-4,
                                            surface_tension=8.0, contact_angle=20.0),
         200, BOTH, at=100, fields=FRICTIONAL_STATE, wall_forces=True,
         output=SPHERE_SNAPSHOTS, check=both(dense_did_work, pulled, held_apart), slow=True),
    Case("cohesion-sjkr-two-materials", cohesive(
        built(scenes.two_materials, **BALANCED),
        {"glass": {"cohesion": "sjkr", "cohesion_energy_density": 4e5},
         "rubber": {"cohesion": "sjkr", "cohesion_energy_density": 1e5}}), 400, BOTH, at=200,
         fields=FRICTIONAL_STATE + ("material",), inserter=True,
         check=both(mixed_materials, pulled)),
    Case("shear-cell", named_scene("shear_cell", scene_options={"rate": 8.0}, **BALANCED), 300,
         BOTH, at=150, check=sheared),
    Case("shear-cell-pressure", named_scene("shear_cell", scene_options={
        "rate": 8.0, "pressure": 2000.0}, **BALANCED), 300, BOTH, at=150, check=pressed,
         slow=True),
    Case("triaxial", built(scenes.quick_triaxial, **BALANCED), 300, BOTH, at=150,
         check=triaxial_sheared),
    Case("triaxial-set-box", built(scenes.pressed_triaxial, **BALANCED), 300, BOTH, at=150,
         change=(60, lambda sim: sim.set_box(**scenes.TRIAXIAL_SHEAR_BOX)), check=box_set,
         slow=True),
    Case("two-materials-mixing", built(scenes.two_materials), 400,
         fields=FRICTIONAL_STATE + ("material",), inserter=True,
         output={"thermo_every": 50, "snapshot_every": 400, "sphere_stress": True},
         check=mixing_on_any_ranks, slow=True),
]


#: cases run on 2 ranks alone: on more, another case has their feature (the 4-rank session
#: runs on 2 cores oversubscribed; what differs here is a structure, a law, a kind of the same
#: wall or servo, a restart beside a run of the same scene)
TWO_RANKS = {*(f"dense-{k}-{bp}-{skin}" for k in ("periodic", "walled")
               for bp in ("linked_cells", "hash_grid") for skin in ("lists", "every-step")
               if (k, bp, skin) not in {("periodic", "linked_cells", "lists"),
                                        ("walled", "hash_grid", "every-step")}),
             "frictional-periodic-linear", "frictional-periodic-hertz", "frictional-walled-hertz",
             "lammps-hertz-viscoelastic-projected", "lammps-hertz-tsuji-rescaled",
             "fields-periodic", "chute-restart", "sliding-plate", "mesh-trough-restart-stl-edited",
             "mesh-drum", "moving-walls", "moving-walls-restart", "programmed-walls", "servo-bed",
             "tube", "wall-pressure-cone", "wall-pressure-mesh", "packing-1:3",
             "two-materials-restart", "lognormal-pour", "heap-pour",
             "outlet-pour-frictionless-linked-cells", "cohesion-dmt-frictionless",
             "cohesion-sjkr-two-materials", "shear-cell-pressure", "triaxial-set-box"}
assert TWO_RANKS <= {c.name for c in CASES}, TWO_RANKS - {c.name for c in CASES}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name,
                                               marks=[pytest.mark.slow] if c.slow else [])
                                  for c in CASES])
def test_same_bits(run_case, comm, case):
    if comm.size > 2 and case.name in TWO_RANKS:
        pytest.skip("on 2 ranks alone: another case has its feature on more")
    run_case(case)
