"""Contact forces from the neighbour lists: a loop over rows, partners and walls, the
contact's sub-models chosen at compile time.

The loop walks the lists of ``pdyn.dynamics.neighbours`` row by row, each row an owned,
integrated sphere i, and for each listed partner:

1. **Geometry** (written once, ``pdyn.geometry`` and ``pdyn.walls.wall_contact``): a
   sphere j with the exact overlap predicate every broad phase shares, |x_j − x_i|² ≤
   (r_i + r_j)² (a periodic image at its place: ghosts carry the owner's position plus the
   shift); a wall (plane or cylinder, by a kind code in the wall table) by the overlap
   δ = r_i − (distance of x_i from its surface), its surface velocity entering the relative
   velocity. Partners that do not touch (yet) cost this
   test only.
2. **Sub-models** ([LAMMPSgranular]'s ``pair granular`` split, declared with their
   parameters and history in ``pdyn.dynamics.laws``): the normal law and its damping
   (``pdyn.dynamics.laws``: ``Linear`` or ``Hertz``, a ``Damping``), then with
   friction the tangential spring–dashpot with history (``pdyn.dynamics.friction.Tangential``)
   and with rolling friction the rolling torque (``Rolling``), in one function per contact
   (:func:`_evaluate`, from a :class:`Contact` record to an :class:`Outcome`). Each is a
   parameter record (or None), and numba compiles one loop per combination with the chosen
   parts inlined and the others pruned. Without rotation the loop is :func:`_pass` (the
   normal force alone); with it :func:`_pass_rotating`, whose history
   (``pdyn.dynamics.history``) is an input and output of the pass.
3. **Sum**, in list order: f(i←j) computed from i's side for the partners in ascending
   global id, then the walls in wall order, then gravity m_i g; with rotation also the torque
   on i.

The pieces exist once and the two loops (and the output) share them: the overlap test
(``pdyn.geometry.within``), a list entry's contact (:func:`_sphere_entry`, :func:`_wall_entry`;
records :func:`_sphere_pair`, :func:`_wall_pair`), a row's sphere and its closing sum
(:func:`_row`, :func:`_settle`), the normal force (:func:`_normal`) and the sub-models
(:func:`_evaluate`, records in and out). The hand-over's states have names (:data:`SECOND`,
:data:`POSTED`); its two sides are :func:`_take` and :func:`_post` (with rotation inside
:func:`_handed` and :func:`_kept`), the history cursor is :func:`_cursor` (moved at a row's
end and where an entry's spring is read: moved at every entry, the rotating pass took 1.13x
the time), a history entry is read and written by :func:`_started` and :func:`_keep`. These
small helpers, those that take arrays and branch or loop inside too, are inlined by numba
into the two loops, which are compiled without reference counts (``JIT_LOOP``: they allocate
nothing), so no call counts references to its arrays (in a loop with reference counts, 1.3x
the rotating pass; as functions of their own that LLVM inlined, 1.05x the step).
The large pieces — a contact's sub-models (:func:`_evaluate`), the normal force
(:func:`_normal`, ``pdyn.dynamics.laws.normal_forces``) and a wall's geometry
(``pdyn.walls.wall_contact``) — are functions of their own that LLVM must inline
(``JIT_INLINE``): compiled once for their record types and cached, shared by both loops, the
output and every variant of each, where numba's inlining processed their code anew in each
variant (most of its compile time); the same results, bit for bit. The two
force loops stay two kernels — one source with the rotation behind a pruned test compiled to a
slower step in both —, and the output (contact network, wall loads, statistics) is one walk
over the entries the pass applied a force for (:func:`_walk`; with JKR or liquid bridges
those held past touching too, read from the history the pass wrote) with the contact
evaluated by the same helpers.
Compile-time choices are arguments that are None or not: numba prunes the branch and compiles
one kernel per combination, kept in its on-disk cache like any other, so no kernel factory is
needed (a closure over flags would give the same code, cached per flag tuple by the hash of
its cells). Each combination costs a compilation (the rotating pass 10-30 s), so what the step's
speed does not need is no such choice: the recorded forces are an array, empty when unused.

Why this order ([CundallStrack1979] for the model; the rule is pdyn's): ghost copies carry the
owner's bits, so whichever rank owns i computes the identical sum, whatever order the broad
phase produced and wherever the memory order put the particles. N-rank runs therefore
reproduce the 1-rank trajectory bit for bit, and a contact between an owned sphere and a
ghost is evaluated on both ranks, each applying only its own half.

Where contacts are many, a pair of two rows of this rank is evaluated once, in the row that
comes first in memory order (:func:`_links`): it posts the force on itself (with rotation also
the torque on its partner), and the partner's row, when the loop reaches it, takes them at that
pair's place in its own sum (the force negated) without testing or evaluating the pair again,
as it skips a pair that did not touch; a pair with a ghost is evaluated in each row as before.
With rotation the pair's spring is kept by its first row alone between rebuilds; the second
row's, its negation, is written where something else reads the history (a save, the output, a
pass that evaluates each pair in both rows: ``ContactPass._complete_history``). Seen from
either side a pair gives the same numbers up to sign — every operation of the geometry and of
the normal, tangential and rolling parts is either symmetric in the pair or negates exactly
under i ↔ j (IEEE rounding is symmetric) — given springs that are exact negatives, which those
of a pair that touched through a periodic image are not (its shifted positions round
differently on each side): the first row posts the place of the spring it started from, and a
second row that holds a spring of its own takes the result only if its spring is the negated
one, and evaluates the pair itself otherwise. So which row evaluates a pair changes no bit, and
the sums stay those of the partners in id order on any rank count (tests run both ways, with
and without rotation). The posted results (without rotation four numbers, with it six and the
place of the spring it started from, per pair handed over) are read once, in the same pass;
they wait in a few reused slots (a stack of free ones), as memory order keeps a pair's rows
near, and a pair that finds every slot taken is evaluated in both rows (the second from the
first's spring, negated, if it holds none).

Handing over pays per contact and costs per list entry (each reads its link), so each build of
the lists chooses (:data:`HAND_OVER_FROM`, from the share of entries that touched in the pass
before, the law and its dashpot): where few entries touch — a loose gas — or a contact costs
less than its hand-over (frictionless: the linear law, and without cohesion no dashpot or
LAMMPS' ``mass_velocity`` or ``viscoelastic`` one, :data:`CHEAP_DAMPINGS`) every row evaluates
all its pairs and the kernels, given no links, hold no hand-over code. Where many entries touch
(:data:`GATHER_FROM`; with rotation :data:`GATHER_ROTATING_FROM`, given no cohesion that holds
contacts past touching), a row first gathers the entries it has work with — those that touch
and are evaluated in the row or were posted —, without a branch, then works on those alone:
where a quarter to half the entries touch, whether one does is as good as random to the
processor, and a branch on it stalls the pass at each wrong guess.
``benchmarks/pairs_once.py`` measures one way against the other (one process, the two stepped
alternately, both checked bit for bit).

Walls have infinite mass and radius: R_eff = r_i, m_eff = m_i. Contacts and elastic energy are
this rank's share: a sphere contact where gid_i < gid_j (half of its energy from each side;
a pair handed over counted, with all its energy, by the row that evaluates it), every wall
contact.

Units: N, N·m, m, m/s, kg, J.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .._jit import JIT, JIT_INLINE, JIT_LOOP
from ..fields.exact import emit_rows, limb_add
from ..geometry import sphere_contact, within
from ..heap import Scratch
from ..mesh import contact_geometry
from ..walls import WallSet, entry_contact, mesh_arrays, mesh_entry, wall_spin
from .neighbours import Hanger
from .friction import (Rolling, Tangential, rolling_model, rolling_torque, tangential_force,
                       tangential_model)
from .history import ContactHistory
from .laws import (STORED_HISTORY, chosen, history_layout, law_parameters, normal_force,
                   normal_forces)
from .cohesion import HELD, cohesion_force, cohesion_model, holds, reach
from .cohesion import stiffness as cohesion_stiffness
from .materials import (pair_cohesion, pair_normal, pair_rolling, pair_table, pair_tangential,
                        pair_values)


# ------------------------------------------------------------------ one contact
class Contact(NamedTuple):
    """One touching contact seen from sphere i: the unit normal (nx, ny, nz) from i to its
    partner, the overlap ``delta`` (m), effective radius ``r_eff`` (m) and mass ``m_eff``
    (kg) of the pair (a wall: r_i, m_i), the relative velocity v_i − v_j (m/s; a wall: its
    surface velocity for v_j) and the sum of radii ``s`` (m; a wall: inf), which cohesion
    reads (``pdyn.dynamics.cohesion``)."""

    nx: float
    ny: float
    nz: float
    delta: float
    r_eff: float
    m_eff: float
    dvx: float
    dvy: float
    dvz: float
    s: float


#: the record of no contact (returned where none is read)
NO_CONTACT = Contact(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


class Spin(NamedTuple):
    """The rotation of a contact's two sides: lever arms ``ri``, ``rj`` (m; a wall's 0) and
    angular velocities ω_i, ω_j (rad/s; a wall's own)."""

    ri: float
    rj: float
    wix: float
    wiy: float
    wiz: float
    wjx: float
    wjy: float
    wjz: float


class Outcome(NamedTuple):
    """What one contact does, seen from i: the normal force magnitude ``f`` (N, > 0 repulsive)
    and elastic energy ``e`` (J), the whole force on i (fx, fy, fz: −f n + F_t), the tangential
    force F_t on i (tx, ty, tz), the torques on i (mx, my, mz) and on j (jx, jy, jz) (N·m), the
    new spring (sx, sy, sz, m) and whether the contact slides."""

    f: float
    e: float
    fx: float
    fy: float
    fz: float
    tx: float
    ty: float
    tz: float
    mx: float
    my: float
    mz: float
    jx: float
    jy: float
    jz: float
    sx: float
    sy: float
    sz: float
    sliding: bool


@njit(inline="always", **JIT)
def _sphere_pair(dx, dy, dz, d2, s, ri, rj, mi, mj, gi, gj, dvx, dvy, dvz):
    """The :class:`Contact` of a touching sphere pair (x_j − x_i = (dx, dy, dz), its square
    ``d2``, the sum of radii ``s``; radii, masses, ids; v_i − v_j)."""
    nx, ny, nz, delta = sphere_contact(dx, dy, dz, d2, s, gi, gj)
    return Contact(nx, ny, nz, delta, ri * rj / s, mi * mj / (mi + mj), dvx, dvy, dvz, s)


@njit(inline="always", **JIT)
def _wall_pair(geometry, ri, mi, vix, viy, viz):
    """The :class:`Contact` of a wall entry of sphere i (radius, mass, velocity) from its
    geometry (``pdyn.walls.entry_contact``: normal, overlap, surface velocity)."""
    nx, ny, nz, delta, ux, uy, uz = geometry
    return Contact(nx, ny, nz, delta, ri, mi, vix - ux, viy - uy, viz - uz, math.inf)


@njit(inline="always", **JIT)
def _apart(c, d2):
    """:class:`Contact` ``c`` of a sphere pair held past touching (cohesion: JKR, a liquid
    bridge) with its overlap δ = r_i + r_j − d < 0 (``pdyn.geometry.sphere_contact`` gives 0)."""
    return Contact(c.nx, c.ny, c.nz, c.s - math.sqrt(d2), c.r_eff, c.m_eff, c.dvx, c.dvy,
                   c.dvz, c.s)


@njit(**JIT_INLINE)
def _normal(law, cohesion, c, dt, table, ma, mb):
    """The normal law and the cohesion (None: none, pruned) of the pair of materials ``ma``,
    ``mb`` in ``table`` (as :func:`_evaluate`) on :class:`Contact` ``c``: (force magnitude
    on i, > 0 repulsive, elastic energy). Past zero overlap (a contact cohesion holds) there
    is no repulsion, as in :func:`_evaluate`."""
    if cohesion is None:
        return normal_force(pair_normal(law, table, ma, mb), c.delta,
                            c.dvx * c.nx + c.dvy * c.ny + c.dvz * c.nz, c.r_eff, c.m_eff, dt)
    f = e = 0.0
    if c.delta >= 0.0:
        f, e = normal_force(pair_normal(law, table, ma, mb), c.delta,
                            c.dvx * c.nx + c.dvy * c.ny + c.dvz * c.nz, c.r_eff, c.m_eff, dt)
    f -= cohesion_force(pair_cohesion(cohesion, table, ma, mb), c.delta, c.r_eff, c.s)[0]
    return f, e


@njit(**JIT_INLINE)
def _evaluate(law, tangential, rolling, cohesion, c, w, sx, sy, sz, slid, dt, table, ma, mb):
    """One touching contact (:class:`Contact` ``c``, :class:`Spin` ``w``, the spring s it
    starts from and whether it slid last step) through the sub-models: the normal law, then
    the cohesion, the tangential spring–dashpot and the rolling torque (each None: absent,
    pruned at compile time), those of the pair of materials ``ma``, ``mb`` in the pair
    ``table`` (``pdyn.dynamics.materials``; None: the records given). An :class:`Outcome`;
    the torque on j is what j's own evaluation gives, bit for bit. Without a tangential or
    rolling part those are zero (and False). The tangential step reads the whole window's
    normal force and is scaled to the sample's share of it (they differ at a first touch:
    ``pdyn.dynamics.laws``, "Friction at the first touch"); with cohesion friction's Coulomb
    limit and the rolling torque read the repulsive force plus what the cohesion model adds
    to it (``pdyn.dynamics.cohesion``), the normal force is the repulsive one less the
    attraction."""
    tx = ty = tz = 0.0
    mx = my = mz = 0.0
    jx = jy = jz = 0.0
    sliding = False
    nx, ny, nz = c.nx, c.ny, c.nz
    if tangential is not None:
        # contact-point velocity of i relative to j: dv + (r_i ω_i + r_j ω_j) × n
        wx = w.ri * w.wix + w.rj * w.wjx
        wy = w.ri * w.wiy + w.rj * w.wjy
        wz = w.ri * w.wiz + w.rj * w.wjz
        vcx = c.dvx + (wy * nz - wz * ny)
        vcy = c.dvy + (wz * nx - wx * nz)
        vcz = c.dvz + (wx * ny - wy * nx)
    normal = pair_normal(law, table, ma, mb)
    apart = False  # past zero overlap, held by cohesion (JKR): no repulsion
    if cohesion is not None:
        apart = c.delta < 0.0
    if apart:
        f = e = whole = 0.0
    else:
        f, e, whole = normal_forces(normal, c.delta, c.dvx * nx + c.dvy * ny + c.dvz * nz,
                                    c.r_eff, c.m_eff, dt)
    fn = f  # the normal force; f and whole: what friction and rolling read
    delta_t = c.delta  # the overlap the tangential stiffness reads
    if cohesion is not None:
        pull, added, delta_t = cohesion_force(pair_cohesion(cohesion, table, ma, mb), c.delta,
                                              c.r_eff, c.s)
        fn = f - pull
        f, whole = f + added, whole + added
    if tangential is not None:
        # on the whole window's normal force, then scaled to the sample's share of it: they
        # differ at a first touch (pdyn.dynamics.laws, "Friction at the first touch")
        sx, sy, sz, tx, ty, tz, sliding = tangential_force(
            normal, pair_tangential(law, tangential, table, ma, mb), sx, sy, sz, nx, ny, nz,
            vcx, vcy, vcz, whole, delta_t, c.r_eff, c.m_eff, dt, slid)
        if whole != f and whole > 0.0:
            share = f / whole
            tx, ty, tz = share * tx, share * ty, share * tz
        cx, cy, cz = ny * tz - nz * ty, nz * tx - nx * tz, nx * ty - ny * tx
        mx, my, mz = w.ri * cx, w.ri * cy, w.ri * cz
        jx, jy, jz = w.rj * cx, w.rj * cy, w.rj * cz
    if rolling is not None:
        rx, ry, rz = rolling_torque(pair_rolling(law, tangential, rolling, table, ma, mb), nx,
                                    ny, nz, w.wix - w.wjx, w.wiy - w.wjy, w.wiz - w.wjz, f,
                                    c.r_eff)
        mx += rx
        my += ry
        mz += rz
        jx += -rx
        jy += -ry
        jz += -rz
    return Outcome(fn, e, tx - fn * nx, ty - fn * ny, tz - fn * nz, tx, ty, tz, mx, my, mz,
                   jx, jy, jz, sx, sy, sz, sliding)


# ------------------------------------------------------------------ hand-over
#: slots for the results of pairs handed over, per row (:meth:`ContactPass._slots`), and at
#: least: a result waits from its first row to its second, which memory order keeps near (on
#: the dense gas at μ = 0.5, 39 304 and 97 336 spheres, at most 2 877 and 2 805 pairs waited
#: at once, of 54 817 and 120 130)
SLOTS_PER_ROW = 0.125
MIN_SLOTS = 4096

#: pairs of two rows are handed over (evaluated once) on lists built after a pass in which at
#: least this share of the list entries touched (2 × contacts / entries; the first lists: from
#: their second pass), by (rotation?, law), where a contact costs more than its hand-over
#: (:data:`CHEAP_DAMPINGS`); below, each row evaluates all its pairs, reading no links — the
#: same bits either way. Handing over costs a link read per entry and saves an evaluation per
#: contact (with friction also the second row's spring). Measured in one process, two runs of
#: one state stepped in turn (``benchmarks/pairs_once.py``: chunks of 20 steps; step time of
#: handing over against not, rows gathering as the rules say in both), μ = 0.5: the flowing
#: chute (linear, ``mass_velocity``, 21-25 % of the entries touching) 0.90; the dense linear
#: gas (φ = 0.5, 24 389 spheres, 19 %) 0.90 with pdyn's dashpot, 0.91 with ``mass_velocity``;
#: the settled Hertz bed of 20 000 spheres (48 %) 0.69 with pdyn's dashpot, 0.86 with
#: ``viscoelastic`` (2 ranks 0.88); but the loose gas (φ = 0.3, under 8 %) 1.08 and 1.13.
#: Before: μ = 0 the Hertz bed of 8 000 spheres 0.81; with JKR 0.77 (20 000 spheres, rows not
#: gathering: cohesion). The frictionless linear law is not measured: never.
HAND_OVER_FROM = {(False, "linear"): math.inf, (False, "hertz"): 0.25,
                  (True, "linear"): 0.15, (True, "hertz"): 0.15}

#: the dashpots that make a frictionless contact cost less than its hand-over, as no dashpot
#: does: with them (and without cohesion) frictionless pairs are never handed over. Measured
#: as for :data:`HAND_OVER_FROM`, before rows gathered where pairs are handed over: undamped,
#: the dense elastic Hertz gas (φ = 0.5, 9 700 spheres) μ = 0 1.16. With friction every
#: dashpot's pairs are handed over (:data:`HAND_OVER_FROM`).
CHEAP_DAMPINGS = ("mass_velocity", "viscoelastic")


#: without rotation, a row gathers its entries with work first (:func:`_pass`) in a pass after
#: one in which at least this share of the entries touched (in a loose gas, where few entries
#: touch, the gathering does not pay; the first pass, with no share to go by, does not).
GATHER_FROM = 0.12

#: with rotation (:func:`_pass_rotating`), where cohesion holds no contact past touching, from
#: this share. Measured in one process against not gathering (CPU time, shared machine): the
#: flowing chute (0.27) 0.85 of the pass; the dense frictional gas (0.12) 1.03 of the step; the
#: settled Hertz bed (0.48) handing pairs over 0.93 (two runs of one state stepped in turn). With
#: JKR (that bed at Bo = 1) a gather that also keeps the entries with a history record (a
#: branch-free merge) took 1.2x the pass with links and 1.0-1.04x without: cohesion does not.
GATHER_ROTATING_FROM = 0.2

# The states of a sphere entry's link (:func:`_links`), one per entry: a position ≥ 0 — the
# pair is evaluated in this row; when the position is above the entry's own, it is the pair's
# entry in the later row, which takes the result (:data:`SECOND`) —, or one of:
#: the later row's entry of a pair: the earlier row evaluates it and posts its result (when
#: the pair touches); between passes every such entry holds this
SECOND = -1
#: during a pass, the later row's entry whose result waits in slot h holds POSTED − h; h ≥ the
#: number of slots says that none was free: the later row evaluates the pair itself
POSTED = -2


@njit(**JIT)
def _links(rows, start, split, partner, row_of, link):
    """Who evaluates each sphere entry of new lists (``link``, one per entry, the states
    above): a pair of two rows is evaluated in the row that comes first, whose entry holds the
    position of the pair's entry in the other row (> its own), which holds :data:`SECOND`.
    Entries whose partner has no row (a ghost) hold their own position: evaluated in their
    row alone."""
    for t in range(rows.shape[0]):
        for u in range(start[t], split[t]):
            link[u] = u
    for t in range(rows.shape[0]):
        i = rows[t]
        for u in range(start[t], split[t]):
            t_j = row_of[partner[u]]
            if t_j > t:
                for v in range(start[t_j], split[t_j]):
                    if partner[v] == i:
                        link[u] = v
                        link[v] = SECOND
                        break


@njit(**JIT)
def _second_sides(start, split, link, entry, at, to):
    """Of a history's ``entry`` (ascending list entries), the places of the first rows'
    entries of pairs handed over (into ``at``) and their pairs' entries in the later rows
    (``to``): how many."""
    m = t = 0
    for q in range(entry.shape[0]):
        u = entry[q]
        while start[t + 1] <= u:
            t += 1
        if u < split[t] and link[u] > u:  # (the links of wall entries are not set)
            at[m], to[m] = q, link[u]
            m += 1
    return m


# The hand-over's two sides, and a history entry read and written: straight-line helpers for
# both loops (the module docstring says why straight-line).
@njit(inline="always", **JIT)
def _take(link, done_at, u, w, n_free, n_slots):
    """The later row's entry ``u`` of a pair its first row handed over (link ``w`` ≤
    :data:`POSTED`): (the slot h its result waits in, ≥ ``n_slots`` when none was free — the
    pair is evaluated here; h − ``n_slots`` − 1 is then the place of the spring the first
    row started from, −1: none —, the free slots). The entry is back to :data:`SECOND` and a
    slot read is free again (pushed on the stack in ``done_at[:, 1]``; the push of none lands
    above the stack, at worst in ``done_at``'s spare last row)."""
    h = POSTED - w
    link[u] = SECOND
    done_at[n_free, 1] = h
    return h, n_free + (h < n_slots)


@njit(inline="always", **JIT)
def _post(link, done_at, w, old, n_free, n_slots):
    """The first row's side of the hand-over of a pair whose later entry is ``w`` and whose
    spring the first row started from is at place ``old`` (−1: none): (the slot its result is
    to be written to, ≥ ``n_slots`` when every slot is taken — the later row evaluates the
    pair too, from that spring —, the free slots left)."""
    free = n_free > 0
    n_free -= free
    z = done_at[n_free, 1] * free + (n_slots + 1 + old) * (1 - free)
    link[w] = POSTED - z
    return z, n_free


@njit(inline="always", **JIT)
def _spring(spring, slid, at):
    """The spring (m) and slip flag at place ``at`` ≥ 0 of a history."""
    return spring[at, 0], spring[at, 1], spring[at, 2], slid[at] != 0


@njit(inline="always", **JIT)
def _keep(entry, spring, slid, k, u, sx, sy, sz, sliding):
    """Write entry ``u``'s new spring and slip flag at place ``k`` < the buffers' length of the
    new history."""
    entry[k] = u
    spring[k, 0], spring[k, 1], spring[k, 2] = sx, sy, sz
    slid[k] = sliding


# ------------------------------------------------------------------ a row's pieces
# Helpers of the two loops that take arrays and branch or loop inside: inlined by numba into
# loops compiled without reference counts (JIT_LOOP), so the loops count none per call.
@njit(inline="always", **JIT)
def _row(pos, rad, mass, gid, material, table, i):
    """Row sphere ``i``'s position, radius, mass, id and material (0: one material, no
    ``table``)."""
    ma = 0
    if table is not None:
        ma = np.int64(material[i])
    return pos[i, 0], pos[i, 1], pos[i, 2], rad[i], mass[i], gid[i], ma


@njit(inline="always", **JIT)
def _sphere_entry(pos, vel, rad, mass, gid, may_hold, j, xi, yi, zi, ri, mi, gi, vix, viy,
                  viz):
    """Of sphere ``j`` listed by the row sphere at (``xi``, ``yi``, ``zi``) (radius, mass, id,
    velocity): whether the two touch (the overlap test), and if so — or if ``may_hold`` (a
    contact that touched last step, which cohesion may hold past touching: overlap < 0,
    :func:`_apart`) — their :class:`Contact`."""
    dx, dy, dz = pos[j, 0] - xi, pos[j, 1] - yi, pos[j, 2] - zi
    rj = rad[j]
    d2, touches = within(dx, dy, dz, ri + rj)
    if not touches and not may_hold:
        return False, NO_CONTACT
    c = _sphere_pair(dx, dy, dz, d2, ri + rj, ri, rj, mi, mass[j], gi, gid[j],
                     vix - vel[j, 0], viy - vel[j, 1], viz - vel[j, 2])
    if not touches:
        c = _apart(c, d2)
    return touches, c


@njit(inline="always", **JIT)
def _wall_entry(pos, normal, walls, gid, mesh, slot, geo, j, u, xi, yi, zi, ri, mi, vix, viy,
                viz):
    """The :class:`Contact` of wall entry ``u`` (wall or triangle handle ``j``) of the row
    sphere at (``xi``, ``yi``, ``zi``) (radius, mass, velocity) and the wall's angular
    velocity (``pdyn.walls.wall_spin``)."""
    g = np.uint64(-1 - gid[j])
    c = _wall_pair(entry_contact(xi, yi, zi, ri, pos, normal, walls, j, g,
                                 mesh_entry(mesh, slot, geo, u)), ri, mi, vix, viy, viz)
    return c, wall_spin(walls, g, normal, j)


@njit(inline="always", **JIT)
def _posted(link, done, done_at, c, f, e, u, w, n_free, n_slots):
    """Without rotation, the normal force ``f`` and energy ``e`` of entry ``u`` (link ``w``,
    :class:`Contact` ``c``) posted for the later row when the entry is the first row's of a
    pair of two rows (links given) and a slot is free: (posted, the free slots)."""
    if link is None or w <= np.int64(u):
        return False, n_free
    z, n_free = _post(link, done_at, w, -1, n_free, n_slots)
    if z >= n_slots:
        return False, n_free
    done[z, 0], done[z, 1], done[z, 2] = f * c.nx, f * c.ny, f * c.nz
    done[z, 3] = 0.5 * e
    return True, n_free


@njit(inline="always", **JIT)
def _settle(force, i, fx, fy, fz, mi, gravity):
    """Row sphere ``i``'s force: its contacts' sum and its weight m_i g."""
    force[i, 0] = fx + mi * gravity[0]
    force[i, 1] = fy + mi * gravity[1]
    force[i, 2] = fz + mi * gravity[2]


@njit(inline="always", **JIT)
def _cursor(entry, n, p, u):
    """The history cursor: the first place ≥ ``p`` of a history's ``n`` entries ``entry``
    (ascending list positions) not below list entry ``u``, and whether it is u's."""
    while p < n and np.uint64(entry[p]) < u:
        p += 1
    return p, p < n and np.uint64(entry[p]) == u


@njit(inline="always", **JIT)
def _started(spring, slid, at, had):
    """The spring (m) a contact starts from and whether it slid: place ``at`` of a history
    when ``had``, else none."""
    if had:
        return _spring(spring, slid, np.uint64(at))
    return 0.0, 0.0, 0.0, False


@njit(inline="always", **JIT)
def _pair_spring(entry, n, p, u, held):
    """The history cursor ``p`` moved to list entry ``u``, the place of the spring the pair
    starts from (−1: none) — u's own, else where j's row holds it (``held`` ≥ 0: a pair
    handed over whose result found no slot) — and whether that one is j's (to negate)."""
    p, had = _cursor(entry, n, p, u)
    if had:
        return p, p, False
    return p, held, held >= 0


@njit(inline="always", **JIT)
def _started_pair(spring, slid, at, negated):
    """As :func:`_started` from place ``at`` ≥ 0 (−1: none), the spring ``negated`` if so."""
    sx, sy, sz, sliding = _started(spring, slid, at, at >= 0)
    if negated:
        return -sx, -sy, -sz, sliding
    return sx, sy, sz, sliding


@njit(inline="always", **JIT)
def _taken(done, h, fx, fy, fz, mx, my, mz):
    """A row's sums with the result in slot ``h`` taken: −(the force on j), the torque on i."""
    g = np.uint64(h)
    return (fx - done[g, 0], fy - done[g, 1], fz - done[g, 2], mx + done[g, 3],
            my + done[g, 4], mz + done[g, 5])


@njit(inline="always", **JIT)
def _handed(link, done_at, old_entry, old_spring, old_slid, n_old, u, w, p, n_free, n_slots):
    """With rotation, the later row's entry ``u`` of a pair its first row handed over (link
    ``w`` ≤ :data:`POSTED`): (the slot of the result to take, −1: none — taken unless this row
    holds a spring of its own that is not the negated of the first row's, as after a
    periodic image; a pair taken keeps only the first row's spring —, whether j's row counted
    the pair, the place of the first row's spring where none was free, −1 else, the history
    cursor ``p`` moved to u, the free slots)."""
    h, n_free = _take(link, done_at, u, w, n_free, n_slots)
    if h >= n_slots:  # no slot was free: the pair is evaluated here
        return -1, False, h - n_slots - 1, p, n_free
    p, had = _cursor(old_entry, n_old, p, u)
    if had:
        sx, sy, sz, _ = _spring(old_spring, old_slid, np.uint64(p))
        at = np.int64(done_at[h, 0])  # the spring j's row started from
        ox, oy, oz, _ = _started(old_spring, old_slid, at, at >= 0)
        if not (sx == -ox and sy == -oy and sz == -oz):
            return -1, True, -1, p, n_free
    return h, True, -1, p, n_free


@njit(inline="always", **JIT)
def _kept(new_entry, new_spring, new_slid, link, done, done_at, record, o, k, u, w, old,
          recorded, n_free, n_slots):
    """With rotation, :class:`Outcome` ``o`` of entry ``u`` (link ``w``) kept: its new spring
    at place ``k`` of the new history when it fits and, when the entry is the first row's of
    a pair of two rows (links given) and a slot is free, posted for the later row (the force
    on i, the torque on j, the place of the ``old`` spring, −1: none); its tangential force
    in ``record`` if ``recorded``. (posted, the free slots)."""
    posted = False
    if k < new_entry.shape[0]:
        _keep(new_entry, new_spring, new_slid, k, u, o.sx, o.sy, o.sz, o.sliding)
        if link is not None and w > np.int64(u):
            z, n_free = _post(link, done_at, w, old, n_free, n_slots)
            posted = z < n_slots
            if posted:
                done[z, 0], done[z, 1], done[z, 2] = o.fx, o.fy, o.fz
                done[z, 3], done[z, 4], done[z, 5] = o.jx, o.jy, o.jz
                done_at[z, 0] = old
    if recorded:
        record[u, 0], record[u, 1], record[u, 2] = o.tx, o.ty, o.tz
    return posted, n_free


@njit(inline="always", **JIT)
def _spun(torque, spinning, i, mx, my, mz, q, touched, ended):
    """The torque on row sphere ``i`` written when it ``touched`` something or a torque of
    before may be left (``ended``: a contact of last step ended, new lists, or pairs handed
    over: a row holds no spring of those it took), the row listed in ``spinning`` (at ``q``)
    when it touched; the rows listed."""
    if touched or ended:
        torque[i, 0], torque[i, 1], torque[i, 2] = mx, my, mz
    if touched:
        spinning[q] = i
    return q + touched


@njit(inline="always", **JIT)
def _tally(n_contacts, energy, e, both, counted, lower):
    """With rotation, this rank's share of a contact evaluated here (energy ``e``): all of it
    and one contact when evaluated for ``both`` sides (a wall, a pair posted); else, unless j's
    row ``counted`` it, half its energy, and the contact if i's id is the ``lower``."""
    if both:
        return n_contacts + 1, energy + e
    if counted:
        return n_contacts, energy
    return n_contacts + lower, energy + 0.5 * e


# ------------------------------------------------------------------ the loop
# Handles and list positions are cast to unsigned before indexing: numba then omits its
# negative-index wraparound from every array access (with JIT_IEEE, 13-15 % less time for the
# frictionless pass on the equilibrated 97 336-sphere gas for the handles, 0.93-0.94x again for
# the list positions; forces bit for bit the same).
@njit(**JIT_LOOP)
def _pass(law, cohesion, table, dt, gravity, lists, spheres, wall_set, force, link, slots, todo,
          mesh):
    """The contact loop without rotation (module docstring): sets ``force`` of every row's
    sphere — its partners, then its walls, then gravity. Returns (contacts of this rank's
    share, their elastic energy). ``lists``: the neighbour lists' (rows, start, split,
    partner); ``spheres``: the store's (pos, vel, radius, mass, gid, material); ``wall_set``:
    (the store's normal, the wall table). ``link`` says which row evaluates each pair
    (:func:`_links`; left as found), or None; ``slots`` = (``done``: slots × ≥ 4, the force on
    the second row and its half of the energy; ``done_at``: the stack of free slots in column
    1, left a permutation of them) carries the results of the pairs handed over; ``todo``:
    scratch for as many entries as the longest row has spheres, to gather each row's entries
    with work first (the module docstring), or None. ``mesh``: the step's mesh state
    (:func:`mesh_state`), or None without meshes. ``table``: the pair table of several
    materials (``pdyn.dynamics.materials``), read by the ``material`` of the two sides; None:
    one material, ``law``. ``cohesion``: the cohesion record (``pdyn.dynamics.cohesion``), or
    None."""
    rows, start, split, partner = lists
    pos, vel, rad, mass, gid, material = spheres
    normal, walls = wall_set
    done, done_at = slots
    slot, geo = mesh_arrays(mesh)  # None: no mesh
    energy = 0.0
    n_contacts = mb = 0
    n_slots = n_free = done.shape[0]
    for t in range(rows.shape[0]):
        i = np.uint64(rows[t])
        xi, yi, zi, ri, mi, gi, ma = _row(pos, rad, mass, gid, material, table, i)
        fx = fy = fz = 0.0
        first = np.uint64(start[t])
        n_todo = np.uint64(split[t]) - first  # without todo: every sphere entry
        if todo is not None:
            n_todo = _gather(todo, link, first, np.uint64(split[t]), partner, pos, rad, xi, yi,
                             zi, ri)
        for b in range(n_todo):
            u = first + b if todo is None else np.uint64(todo[b])
            w = np.int64(u)  # (no links: every pair evaluated in each of its rows)
            if link is not None:
                w = link[u]
                if w == SECOND:  # apart
                    continue
                if w <= POSTED:  # evaluated in j's (earlier) row
                    h, n_free = _take(link, done_at, u, w, n_free, n_slots)
                    if h < n_slots:  # posted: −(−F n) and its energy
                        g = np.uint64(h)
                        fx, fy, fz = fx + done[g, 0], fy + done[g, 1], fz + done[g, 2]
                        energy += done[g, 3]
                        continue
            j = np.uint64(partner[u])
            touches, c = _sphere_entry(pos, vel, rad, mass, gid, False, j, xi, yi, zi, ri, mi, gi,
                                       vel[i, 0], vel[i, 1], vel[i, 2])
            if not touches:
                continue
            if table is not None:
                mb = np.int64(material[j])
            f, e = _normal(law, cohesion, c, dt, table, ma, mb)
            fx, fy, fz = fx - f * c.nx, fy - f * c.ny, fz - f * c.nz
            energy += 0.5 * e
            posted, n_free = _posted(link, done, done_at, c, f, e, u, w, n_free, n_slots)
            n_contacts += posted or gi < gid[j]  # posted: the pair, counted here
        for u in range(np.uint64(split[t]), np.uint64(start[t + 1])):  # walls (pdyn.walls)
            w = np.uint64(partner[u])
            c = _wall_entry(pos, normal, walls, gid, mesh, slot, geo, w, u, xi, yi, zi, ri, mi,
                            vel[i, 0], vel[i, 1], vel[i, 2])[0]
            if c.delta >= 0.0:
                if table is not None:
                    mb = np.int64(material[w])
                f, e = _normal(law, cohesion, c, dt, table, ma, mb)
                fx, fy, fz = fx - f * c.nx, fy - f * c.ny, fz - f * c.nz
                energy += e
                n_contacts += 1
        _settle(force, i, fx, fy, fz, mi, gravity)
    return n_contacts, energy


@njit(inline="always", **JIT)
def _gather(todo, link, first, end, partner, pos, rad, xi, yi, zi, ri):
    """The row's sphere entries ``first`` … ``end`` − 1 with work, in list order, into
    ``todo``, and how many: with links those to evaluate here that touch and those whose
    result j's row posted, else those that touch; without a branch (every entry stored, those
    with work counted)."""
    n = np.uint64(0)
    for u in range(first, end):
        j = np.uint64(partner[u])
        keep = within(pos[j, 0] - xi, pos[j, 1] - yi, pos[j, 2] - zi, ri + rad[j])[1]
        if link is not None:
            w = link[u]
            keep = (w <= POSTED) | ((w >= 0) & keep)
        todo[n] = u
        n += np.uint64(keep)
    return n


@njit(**JIT_LOOP)
def _pass_rotating(law, tangential, rolling, cohesion, table, dt, gravity, lists, spheres,
                   wall_set, omega, out, history, link, slots, record, record_pairs, mesh, todo):
    """:func:`_pass` with the tangential and rolling parts (module docstring): sets the
    ``force`` and ``torque`` of every row's sphere (``out`` = (force, torque, spinning):
    the rows that touch something, the only nonzero torques) and advances ``history`` (last
    step's touching entries, ascending, springs, slips, their number, whether every row's
    torque must be written — new lists —, then this step's entries, springs, slips).
    ``record`` (entries × 3, or empty: none): the tangential force of every touching entry
    with ``record_pairs`` (each pair evaluated in both rows), else of the wall entries alone.
    Returns (contacts, energy, entries written — more than fit: the caller grows the buffers
    and runs again, the inputs left as found —, rows in ``spinning``). ``todo``: as for
    :func:`_pass` (None with ``cohesion``, which evaluates contacts past touching). As
    :func:`_pass`."""
    rows, start, split, partner = lists
    pos, vel, rad, mass, gid, material = spheres
    normal, walls = wall_set
    force, torque, spinning = out
    done, done_at = slots
    slot, geo = mesh_arrays(mesh)  # None: no mesh
    old_entry, old_spring, old_slid, n_old, all_torques, new_entry, new_spring, new_slid = \
        history
    recording = record.shape[0] != 0
    energy = 0.0
    n_contacts = mb = 0
    p = k = q = np.int64(0)  # (a literal 0 compiled the helpers for it too)
    n_slots = n_free = done.shape[0]
    for t in range(rows.shape[0]):
        i = np.uint64(rows[t])
        k_row, p_row = k, p  # (p: moved past the rows before at their ends)
        xi, yi, zi, ri, mi, gi, ma = _row(pos, rad, mass, gid, material, table, i)
        # read with every row (a stream in memory order), not at each contact (a cache miss)
        vix, viy, viz = vel[i, 0], vel[i, 1], vel[i, 2]
        wix, wiy, wiz = omega[i, 0], omega[i, 1], omega[i, 2]
        fx = fy = fz = mx = my = mz = 0.0
        took = False  # a result handed over (this row holds no spring of it)
        first, u_split = np.uint64(start[t]), np.uint64(split[t])
        n_todo = u_split - first  # without todo: every sphere entry
        if todo is not None:  # (recording pairs: every pair evaluated here, links unread)
            n_todo = (_gather(todo, None, first, u_split, partner, pos, rad, xi, yi, zi, ri)
                      if record_pairs else
                      _gather(todo, link, first, u_split, partner, pos, rad, xi, yi, zi, ri))
        for b in range(n_todo + (np.uint64(start[t + 1]) - u_split)):  # then the walls
            if b >= n_todo:
                u = u_split + (b - n_todo)
            else:
                u = first + b if todo is None else np.uint64(todo[b])
            j = np.uint64(partner[u])
            counted, held = False, -1  # (j's row counted it; where j's row holds its spring)
            w = np.int64(u)  # (no links or recording pairs: every pair evaluated in each row)
            if u < u_split:
                if link is not None and not record_pairs:
                    w = link[u]
                    if w == SECOND:  # apart
                        continue
                    if w <= POSTED:  # evaluated in j's (earlier) row
                        h, counted, held, p, n_free = _handed(
                            link, done_at, old_entry, old_spring, old_slid, n_old, u, w, p,
                            n_free, n_slots)
                        if h >= 0:
                            fx, fy, fz, mx, my, mz = _taken(done, h, fx, fy, fz, mx, my, mz)
                            took = True
                            continue
                may_hold = False  # cohesion may hold only what touched last step
                if cohesion is not None:
                    p, at, _ = _pair_spring(old_entry, n_old, p, u, held)
                    may_hold = at >= 0
                touches, c = _sphere_entry(pos, vel, rad, mass, gid, may_hold, j, xi, yi, zi, ri,
                                           mi, gi, vix, viy, viz)
                if not touches and not may_hold:
                    continue
                spin = Spin(ri, rad[j], wix, wiy, wiz, omega[j, 0], omega[j, 1], omega[j, 2])
            else:
                c, (wjx, wjy, wjz) = _wall_entry(pos, normal, walls, gid, mesh, slot, geo, j, u,
                                                 xi, yi, zi, ri, mi, vix, viy, viz)
                touches = not c.delta < 0.0
                if cohesion is None and not touches:
                    continue
                spin = Spin(ri, 0.0, wix, wiy, wiz, wjx, wjy, wjz)
            if table is not None:
                mb = np.int64(material[j])
            p, at, negated = _pair_spring(old_entry, n_old, p, u, held)
            if cohesion is not None and not touches and not (  # held past zero overlap
                    at >= 0 and holds(pair_cohesion(cohesion, table, ma, mb), c.delta, c.r_eff)):
                continue
            sx, sy, sz, slid = _started_pair(old_spring, old_slid, at, negated)
            o = _evaluate(law, tangential, rolling, cohesion, c, spin, sx, sy, sz, slid, dt,
                          table, ma, mb)
            posted, n_free = _kept(new_entry, new_spring, new_slid, link, done, done_at, record,
                                   o, k, u, w, at,
                                   recording and (record_pairs or u >= u_split), n_free, n_slots)
            k += 1
            fx, fy, fz = fx + o.fx, fy + o.fy, fz + o.fz
            mx, my, mz = mx + o.mx, my + o.my, mz + o.mz
            n_contacts, energy = _tally(n_contacts, energy, o.e, u >= u_split or posted,
                                        counted, gi < gid[j])
        _settle(force, i, fx, fy, fz, mi, gravity)
        p = _cursor(old_entry, n_old, p, np.uint64(start[t + 1]))[0]  # the row's ended ones
        q = _spun(torque, spinning, i, mx, my, mz, q, k > k_row or took,
                  all_torques or p > p_row or link is not None)
    return n_contacts, energy, k, q


# ------------------------------------------------------------------ output
# Output only (snapshots' contact network, the wall-force series, statistics): not called in
# the step. One walk finds the entries the force pass applied a force for; each output reads
# them. Which those are the pass decides (a touching entry; with cohesion that holds contacts
# past touching also one that touched last step and holds, ``pdyn.dynamics.cohesion.holds``)
# and records as the contact history it writes: :func:`_acts` reads that record, so the walks
# and the pass never disagree and the decision is written once. Right after a pass with
# rotation (a step's writers) that history names the entries: :func:`_walk_acting` reads them.
@njit(inline="always", **JIT)
def _acts(touches, evaluated, p, u):
    """Whether list entry ``u`` (ascending over a walk) carries a force of the last pass, and
    the cursor ``p`` in ``evaluated`` moved up to it: ``touches`` (the overlap test), or with
    ``evaluated`` (the entries the pass evaluated, ascending: ``ContactPass.evaluated``; None
    where only touching entries act, pruned) whether it is one of them."""
    if evaluated is None or touches:
        return touches, p
    while p < evaluated.shape[0] and evaluated[p] < u:
        p += 1
    return p < evaluated.shape[0] and evaluated[p] == u, p


@njit(inline="always", **JIT)
def _once(gi, gj, fixed):
    """Whether the row of sphere ``gi`` holds its pair with ``gj`` once over all rows:
    ``fixed`` None, when gi ≤ gj (the contact network); else (the fixed spheres' sorted ids:
    they have no rows) when gi < gj or gj is fixed (``pdyn.fields.once.once_mask``)."""
    if fixed is None:
        return gi <= gj
    if gi < gj:
        return True
    at = np.searchsorted(fixed, gj)
    return at < fixed.shape[0] and fixed[at] == gj


@njit(**JIT)
def _walk(rows, start, split, partner, pos, rad, gid, normal, walls, mesh, spheres, walls_too,
          lower, fixed, found, evaluated):
    """The acting entries (:func:`_acts`) of every row in list order — its sphere partners
    when ``spheres`` (when ``lower`` only those :func:`_once` keeps: each pair once), then its
    walls when ``walls_too`` — written to ``found`` (rows (entry, row); room for every entry);
    returns how many. ``mesh`` as for :func:`_pass`."""
    slot, geo = mesh_arrays(mesh)  # None: no mesh
    k = p = 0
    for t in range(rows.shape[0]):
        i = rows[t]
        xi, yi, zi, ri = pos[i, 0], pos[i, 1], pos[i, 2], rad[i]
        for u in range(start[t] if spheres else split[t],
                       start[t + 1] if walls_too else split[t]):
            j = partner[u]
            if u < split[t]:
                if lower and not _once(gid[i], gid[j], fixed):
                    continue
                touches = within(pos[j, 0] - xi, pos[j, 1] - yi, pos[j, 2] - zi, ri + rad[j])[1]
            else:
                touches = entry_contact(xi, yi, zi, ri, pos, normal, walls, j, -1 - gid[j],
                                        mesh_entry(mesh, slot, geo, u))[3] >= 0.0
            acts, p = _acts(touches, evaluated, p, u)
            if acts:
                found[k, 0] = u
                found[k, 1] = t
                k += 1
    return k


@njit(**JIT)
def _walk_acting(rows, start, split, partner, gid, spheres, walls_too, lower, fixed, acting,
                 found):
    """:func:`_walk`'s rows from ``acting``, the entries the force pass just applied a force
    for (ascending: the contact history it wrote), instead of testing every entry of the
    lists: the same entries in the same order; returns how many."""
    k = t = 0
    for q in range(acting.shape[0]):
        u = acting[q]
        while start[t + 1] <= u:
            t += 1
        if u < split[t]:
            if not spheres or (lower and not _once(gid[rows[t]], gid[partner[u]], fixed)):
                continue
        elif not walls_too:
            continue
        found[k, 0] = u
        found[k, 1] = t
        k += 1
    return k


@njit(inline="always", **JIT)
def _found(xi, yi, zi, xj, yj, zj, ri, rj, mi, mj, gi, gj, dvx, dvy, dvz):
    """An acting sphere entry (:func:`_walk`) from its two sides' centres, radii, masses, ids
    and v_i − v_j: its :class:`Contact` (past touching with its negative overlap) and the far
    end x_j. Scalars only: the caller reads the arrays (the module docstring)."""
    dx, dy, dz = xj - xi, yj - yi, zj - zi
    d2, touches = within(dx, dy, dz, ri + rj)
    c = _sphere_pair(dx, dy, dz, d2, ri + rj, ri, rj, mi, mj, gi, gj, dvx, dvy, dvz)
    if not touches:
        c = _apart(c, d2)
    return c, xi + dx, yi + dy, zi + dz


@njit(inline="always", **JIT)
def _wall_found(geometry, i, pos, vel, rad, mass):
    """Sphere i's wall contact of ``geometry`` (``pdyn.walls.entry_contact``): its
    :class:`Contact` and the contact point on the wall's surface."""
    ri = rad[i]
    c = _wall_pair(geometry, ri, mass[i], vel[i, 0], vel[i, 1], vel[i, 2])
    dist = ri - c.delta  # the centre's distance from the wall's surface
    return c, pos[i, 0] + dist * c.nx, pos[i, 1] + dist * c.ny, pos[i, 2] + dist * c.nz


@njit(**JIT)
def _contact_list(law, cohesion, dt, found, rows, split, partner, pos, vel, rad, mass, gid,
                  normal, walls, tangential, mesh, material, table, out):
    """The contacts ``found`` by :func:`_walk` with their forces: ``(ids (K, 2), ends (2K, 3),
    f_n (K,), normal force (K, 3), tangential force (K, 3))`` — in ``out`` (those five
    arrays, returned) —: ids = (gid_i, gid_j) with a wall's (negative) gid second, ends =
    x_i and x_j (a wall: the contact point on its surface), forces on i from j — the same
    numbers the contact loop computes. ``tangential`` (entries, 3): the tangential force on
    the row's sphere per list entry, or 0 rows (none: zeros). ``mesh``, ``material``,
    ``table`` as for :func:`_pass`."""
    slot, geo = mesh_arrays(mesh)  # None: no mesh
    k = found.shape[0]
    ma = mb = 0
    ids, ends, f_n, fvec, tvec = out
    for q in range(k):
        u, t = found[q, 0], found[q, 1]
        i, j = rows[t], partner[u]
        if u < split[t]:
            c, xj, yj, zj = _found(pos[i, 0], pos[i, 1], pos[i, 2], pos[j, 0], pos[j, 1],
                                   pos[j, 2], rad[i], rad[j], mass[i], mass[j], gid[i], gid[j],
                                   vel[i, 0] - vel[j, 0], vel[i, 1] - vel[j, 1],
                                   vel[i, 2] - vel[j, 2])
        else:
            c, xj, yj, zj = _wall_found(entry_contact(
                pos[i, 0], pos[i, 1], pos[i, 2], rad[i], pos, normal, walls, j, -1 - gid[j],
                mesh_entry(mesh, slot, geo, u)), i, pos, vel, rad, mass)
        if table is not None:
            ma, mb = np.int64(material[i]), np.int64(material[j])
        f, e = _normal(law, cohesion, c, dt, table, ma, mb)
        ids[q, 0] = gid[i]
        ids[q, 1] = gid[j]
        ends[2 * q] = pos[i]
        ends[2 * q + 1, 0] = xj
        ends[2 * q + 1, 1] = yj
        ends[2 * q + 1, 2] = zj
        f_n[q] = f
        fvec[q, 0] = -f * c.nx
        fvec[q, 1] = -f * c.ny
        fvec[q, 2] = -f * c.nz
        for a in range(3):
            tvec[q, a] = tangential[u, a] if tangential.shape[0] > 0 else 0.0
    return ids, ends, f_n, fvec, tvec


@njit(**JIT)
def _wall_sums(law, cohesion, dt, rows, start, split, partner, pos, vel, rad, mass, gid, normal,
               walls, tangential, mesh, material, table, column, limbs, used, held, keys,
               values, n, evaluated):
    """Every acting wall entry of the rows (:func:`_walk`, :func:`_wall_found`'s contact)
    added exactly into the long accumulators of its wall (``column[−1 − wall id]``): at
    6 column + c, c = 0..2 the force on the wall F = −(normal + tangential force on the
    sphere) (N), c = 3..5 its moment (c − p) × F about the wall's point p (N·m; c the contact
    point on its surface) (``pdyn.fields.exact.limb_add``; ``used`` marks the accumulators
    added to), then kept as the step held ``held``'s rows from ``n`` of ``keys``, ``values``
    (``pdyn.fields.exact.emit_rows``: returns the new row count). ``evaluated``: as for
    :func:`_walk`. One compiled call (the wall-force series calls it every step)."""
    slot, geo = mesh_arrays(mesh)  # None: no mesh
    found = np.empty((partner.shape[0], 2), np.int64)  # pages touched only where written
    k = _walk(rows, start, split, partner, pos, rad, gid, normal, walls, mesh, False, True,
              False, None, found, evaluated)
    ma = mb = 0
    load = np.empty(6)
    bits = load.view(np.int64)
    for q in range(k):
        u, t = found[q, 0], found[q, 1]
        i, j = rows[t], partner[u]
        c, xj, yj, zj = _wall_found(entry_contact(
            pos[i, 0], pos[i, 1], pos[i, 2], rad[i], pos, normal, walls, j, -1 - gid[j],
            mesh_entry(mesh, slot, geo, u)), i, pos, vel, rad, mass)
        if table is not None:
            ma, mb = np.int64(material[i]), np.int64(material[j])
        f = _normal(law, cohesion, c, dt, table, ma, mb)[0]
        tx = ty = tz = 0.0
        if tangential.shape[0] > 0:
            tx, ty, tz = tangential[u, 0], tangential[u, 1], tangential[u, 2]
        fx, fy, fz = -(-f * c.nx + tx), -(-f * c.ny + ty), -(-f * c.nz + tz)
        ax, ay, az = xj - pos[j, 0], yj - pos[j, 1], zj - pos[j, 2]
        load[0], load[1], load[2] = fx, fy, fz
        load[3] = ay * fz - az * fy
        load[4] = az * fx - ax * fz
        load[5] = ax * fy - ay * fx
        g = 6 * column[-1 - gid[j]]
        for r in range(6):
            limb_add(limbs[g + r], bits[r])
            used[g + r] = True
    return emit_rows(held, limbs, used, keys, values, n)


@njit(**JIT)
def _stats(found, rows, split, partner, pos, vel, rad, mass, gid, normal, walls, mesh):
    """Over the acting entries ``found`` (:func:`_walk`, every sphere and wall entry):
    contacts counted once (a sphere pair from the row with the lower gid, every wall
    contact), sphere–sphere contact ends, and the largest overlap over the row sphere's
    radius."""
    slot, geo = mesh_arrays(mesh)  # None: no mesh
    once = 0
    ends = 0
    worst = 0.0
    for q in range(found.shape[0]):
        u, t = found[q, 0], found[q, 1]
        i, j = rows[t], partner[u]
        if u < split[t]:
            ends += 1
            once += gid[i] < gid[j]
            d = _found(pos[i, 0], pos[i, 1], pos[i, 2], pos[j, 0], pos[j, 1], pos[j, 2], rad[i],
                       rad[j], mass[i], mass[j], gid[i], gid[j], 0.0, 0.0, 0.0)[0].delta
        else:
            once += 1
            d = entry_contact(pos[i, 0], pos[i, 1], pos[i, 2], rad[i], pos, normal, walls, j,
                              -1 - gid[j], mesh_entry(mesh, slot, geo, u))[3]
        worst = max(worst, d / rad[i])
    return once, ends, worst


NO_BORDER = np.zeros(0, np.int64)
NO_LINKS = np.zeros(0, np.int32)
NO_FORCES = np.zeros((0, 3))  # no tangential forces recorded
NO_WALLS = np.zeros((0, 1))  # a wall table for walks that read no wall


def mesh_state(store, lists, bundle, geo=None, border=None) -> tuple | None:
    """What the kernels take of the meshes (``pdyn.walls.entry_contact``): the lists' slot of
    each entry and the normal and overlap of every mesh entry now (``geo``, (M, 4): by
    ``pdyn.mesh.contact_geometry`` from the lists' mesh entries; ``border`` its scratch,
    both allocated when not given); None without meshes (``bundle`` None)."""
    if bundle is None:
        return None
    n = lists.mesh_sphere.shape[0]
    geo = np.empty((n, 4)) if geo is None else geo
    border = np.empty(n, np.int64) if border is None else border
    contact_geometry(lists.mesh_sphere, lists.mesh_facet, lists.mesh_wall, store.pos,
                     store.radius, bundle, lists.mesh_home, geo, border)
    return lists.slot, geo


def contact_stats(store, lists, walls, mesh=None, evaluated=None) -> tuple[int, int, float]:
    """This rank's share of the contacts now (as the force pass counts them: a sphere pair
    once, on the rank of its lower-id sphere; wall contacts), the sphere–sphere contact ends
    of its rows (each pair twice over all ranks: the coordination) and the largest overlap /
    radius of its rows' contacts (the radius of the row's sphere, so over both sides that of
    the smaller one). Integers and a maximum: the same on any rank count. ``walls``: the wall
    table (``ContactPass.wall_table``), ``mesh`` the mesh bundle (``ContactPass.mesh``),
    ``evaluated`` the contacts held past touching (``ContactPass.evaluated``; None: the
    touching ones alone act)."""
    state = mesh_state(store, lists, mesh)
    found = touching_entries(store, lists, walls, state, evaluated=evaluated)
    once, ends, worst = _stats(found, lists.rows, lists.split, lists.partner, store.pos,
                               store.vel, store.radius, store.mass, store.gid, store.normal,
                               walls, state)
    return int(once), int(ends), float(worst)


def touching_entries(store, lists, walls, mesh, *, spheres: bool = True, walls_too: bool = True,
                     lower: bool = False, evaluated: np.ndarray | None = None,
                     fixed: np.ndarray | None = None, found: np.ndarray | None = None,
                     acting: np.ndarray | None = None) -> np.ndarray:
    """The entries of the rows of ``lists`` that act now (:func:`_walk`), (K, 2) int64 rows
    (list entry, row) in list order: sphere entries when ``spheres`` (``lower``: only those
    whose partner has the higher gid — or with ``fixed``, sorted global ids, the lower and is
    one of them: every contact once, :func:`_once`), wall entries when ``walls_too``.
    ``walls``: the wall table, ``mesh``: the mesh state (:func:`mesh_state`) or None;
    ``evaluated``: the entries the last force pass evaluated (``ContactPass.evaluated``: with
    cohesion that holds contacts past touching), None: the touching entries; ``found``: where
    to write them ((entries, 2) int64: room for every entry, one walk), None: a new array;
    ``acting``: the entries that act, if known (``ContactPass.acting``: read, not tested)."""
    if found is None:
        found = np.empty((lists.partner.shape[0], 2), np.int64)
    fixed = None if fixed is None else np.ascontiguousarray(fixed, np.int64)
    if acting is not None:
        k = _walk_acting(lists.rows, lists.start, lists.split, lists.partner, store.gid,
                         spheres, walls_too, lower, fixed, acting, found)
    else:
        k = _walk(lists.rows, lists.start, lists.split, lists.partner, store.pos, store.radius,
                  store.gid, store.normal, walls, mesh, spheres, walls_too, lower, fixed, found,
                  evaluated)
    return found[:k]


def touching_pairs(store, lists, evaluated: np.ndarray | None = None) -> np.ndarray:
    """The sphere–sphere contacts of the rows of ``lists`` now, as sorted global-id pairs
    (K, 2) with the lower id first, each once (``evaluated`` as for :func:`touching_entries`)."""
    found = touching_entries(store, lists, NO_WALLS, None, walls_too=False, evaluated=evaluated)
    if found.shape[0] == 0:
        return np.zeros((0, 2), np.int64)
    pairs = np.stack([store.gid[lists.rows[found[:, 1]]], store.gid[lists.partner[found[:, 0]]]],
                     axis=1)
    return np.unique(np.sort(pairs, axis=1), axis=0)


def _lists(lists) -> tuple:
    """The arrays of neighbour lists a force pass walks: (rows, start, split, partner)."""
    return lists.rows, lists.start, lists.split, lists.partner


def _spheres(store) -> tuple:
    """The per-sphere arrays a force pass reads: (pos, vel, radius, mass, gid, material)."""
    return store.pos, store.vel, store.radius, store.mass, store.gid, store.material


#: the rows that spin without rotation: none
NO_SPINNING = np.zeros(0, np.int64)


#: what the first pass of a restart keeps from the checkpoint rather than from its own
#: evaluation: forces and torques (damping saw the half-step velocities, which are gone); the
#: contact history is kept too (that pass reads the checkpoint's records and does not advance
#: them, so the next pass reads them again)
RESTART_KEPT = ("force", "torque")


#: the default (and largest accepted) time step with Hertz contacts, as a fraction of the
#: Rayleigh time of the smallest sphere ([EDEMtimestep])
RAYLEIGH_FRACTION = 0.2


def _itself(x):
    return x


class ContactLaw:
    """A contact law with its parameters, immutable: what a contact between two spheres (or a
    sphere and a wall) does, and the time step that follows from it.

    ``law`` (:attr:`name`) is ``"linear"`` (default) or ``"hertz"``; ``youngs_modulus`` E
    (Pa), ``stiffness`` (N/m, linear only; default E·R_eff), ``restitution`` e (1 = elastic)
    and its ``damping`` (``"tangent"``, default, or ``"constant"``); ``friction`` μ and
    ``rolling_friction`` μ_r (0: no tangential force, no torque), ``poisson_ratio`` ν
    (Hertz–Mindlin's tangential stiffness); ``damping_coefficient`` γ of the dampings
    ``"mass_velocity"`` and ``"viscoelastic"``; ``tangential_history`` ``"rescaled"``
    (default) or ``"projected"`` (``pdyn.dynamics.friction``); ``cohesion`` ``"none"``,
    ``"dmt"`` or ``"jkr"`` (``work_of_adhesion`` w, J/m²) or ``"sjkr"``
    (``cohesion_energy_density`` k, J/m³) (``pdyn.dynamics.cohesion``). :attr:`models` are
    the chosen sub-models (``pdyn.dynamics.laws``); their records (:attr:`parameters`, the
    normal law with its damping, ``pdyn.dynamics.laws``; :attr:`tangential_model` and
    :attr:`rolling_model`, ``pdyn.dynamics.friction``; :attr:`cohesion_model`) are what the
    kernels read. With μ or μ_r > 0, or JKR, the spheres rotate (:attr:`rotating`) and a pass
    keeps the contact history.
    """

    __slots__ = ("name", "E", "k", "restitution", "poisson_ratio", "parameters",
                 "tangential_model", "rolling_model", "rotating", "damping", "models",
                 "table", "pairs", "cohesion", "cohesion_model")

    def __init__(self, law: str = "linear", youngs_modulus: float = 1e6,
                 stiffness: float | None = None, restitution: float = 1.0,
                 friction: float = 0.0, poisson_ratio: float = 0.3,
                 rolling_friction: float = 0.0, damping: str = "tangent",
                 damping_coefficient: float | None = None, tangential_history: str = "rescaled",
                 materials: list | None = None, interactions: dict | None = None,
                 occurs: set | None = None, cohesion: str = "none",
                 work_of_adhesion: float | None = None,
                 cohesion_energy_density: float | None = None,
                 liquid_volume: float | None = None, surface_tension: float | None = None,
                 contact_angle: float | None = None):
        if materials is not None and len(materials) == 1 and not interactions:
            # one material: its values are the law's (the same bits as a [contact] alone)
            youngs_modulus, stiffness, restitution, friction, poisson_ratio, rolling_friction = (
                materials[0][k] for k in ("youngs_modulus", "stiffness", "restitution",
                                          "friction", "poisson_ratio", "rolling_friction"))
            (cohesion, work_of_adhesion, cohesion_energy_density, liquid_volume,
             surface_tension, contact_angle) = (
                materials[0].get(k, d) for k, d in (
                    ("cohesion", cohesion), ("work_of_adhesion", work_of_adhesion),
                    ("cohesion_energy_density", cohesion_energy_density),
                    ("liquid_volume", liquid_volume), ("surface_tension", surface_tension),
                    ("contact_angle", contact_angle)))
            materials = None
        pairs = None
        if materials is not None:  # several: a law per pair, the first pair's the template
            values = pair_values(law, materials, interactions or {})
            pairs = [[ContactLaw(law, damping=damping, damping_coefficient=damping_coefficient,
                                 tangential_history=tangential_history, **v) for v in row]
                     for row in values]
            youngs_modulus, stiffness, restitution, poisson_ratio = (
                values[0][0][k] for k in ("youngs_modulus", "stiffness", "restitution",
                                          "poisson_ratio"))
            friction = max(v["friction"] for row in values for v in row)
            rolling_friction = max(v["rolling_friction"] for row in values for v in row)
            cohesion = next((p.cohesion for row in pairs for p in row if p.cohesion != "none"),
                            "none")
        cohesion = cohesion or "none"
        E, k = float(youngs_modulus), float(stiffness or 0.0)
        models = chosen(law, damping, friction, rolling_friction, cohesion)
        if history_layout(models) not in ((), STORED_HISTORY):
            raise ValueError(f"contact sub-models {[m.name for m in models]}: their history "
                             "is not the one pdyn.dynamics.history stores")
        parameters = law_parameters(law, E, k, float(restitution), poisson_ratio, damping,
                                    damping_coefficient)
        for name, value in (
                ("name", law), ("E", E), ("k", k), ("restitution", float(restitution)),
                ("poisson_ratio", float(poisson_ratio)), ("damping", damping),
                ("models", models), ("parameters", parameters),
                ("tangential_model", tangential_model(law, friction, poisson_ratio,
                                                      tangential_history)),
                ("rolling_model", rolling_model(rolling_friction)),
                # contacts past zero overlap (JKR, bridges) need the history (one touched?)
                ("rotating", friction > 0.0 or rolling_friction > 0.0 or cohesion in HELD),
                ("cohesion", cohesion),
                ("cohesion_model", cohesion_model(cohesion, {
                    "work_of_adhesion": work_of_adhesion,
                    "cohesion_energy_density": cohesion_energy_density,
                    "liquid_volume": liquid_volume, "surface_tension": surface_tension,
                    "contact_angle": contact_angle}, parameters.law.E))):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "table", None if pairs is None else self._pair_table(pairs))
        if pairs is not None:
            n = len(pairs)
            occurs = {(a, b) for a in range(n) for b in range(n)} if occurs is None else occurs
            pairs = {(a, b): pairs[a][b] for a, b in sorted(occurs)}
        #: the laws of the pairs of materials that can occur, (a, b) -> law (None: one)
        object.__setattr__(self, "pairs", pairs)

    def _pair_table(self, pairs: list) -> np.ndarray:
        """The pair table (``pdyn.dynamics.materials.pair_table``) of the laws of every pair
        of materials ``pairs`` [a][b]; :attr:`parameters` is the first pair's record, and
        the tangential and rolling templates are set from any pair that has them (a pair
        without: μ = 0, μ_r = 0)."""
        object.__setattr__(self, "parameters", pairs[0][0].parameters)
        tangential = [[p.tangential_model for p in row] for row in pairs]
        rolling = [[p.rolling_model for p in row] for row in pairs]
        if self.tangential_model is not None:
            turn = self.tangential_model.history  # as every pair's
            tangential = [[t or Tangential(0.0, tangential_model(self.name, 1.0,
                                                                 p.poisson_ratio).kt_ratio, turn)
                           for t, p in zip(ts, row)] for ts, row in zip(tangential, pairs)]
            object.__setattr__(self, "tangential_model",
                               next(t for ts in tangential for t in ts if t.mu > 0.0))
        if self.rolling_model is not None:
            rolling = [[r or Rolling(0.0) for r in rs] for rs in rolling]
            object.__setattr__(self, "rolling_model",
                               next(r for rs in rolling for r in rs if r.mu_roll > 0.0))
        cohesion = None
        if self.cohesion != "none":  # one model: a pair without it holds its record of 0
            cohesion = [[p.cohesion_model or cohesion_model(self.cohesion, {},
                                                            p.parameters.law.E)
                         for p in row] for row in pairs]
            object.__setattr__(self, "cohesion_model", cohesion[0][0])
        return pair_table([[p.parameters for p in row] for row in pairs], tangential, rolling,
                          cohesion)

    def __setattr__(self, name, value):
        raise AttributeError(f"ContactLaw.{name}: a contact law is immutable")

    @classmethod
    def from_config(cls, cfg, **materials) -> "ContactLaw":
        """The law of a ``pdyn.config.ContactConfig``; ``materials``: several materials
        (``SimulationConfig.material_pairs``: ``materials``, ``interactions``, ``occurs``)."""
        return cls(cfg.law, cfg.youngs_modulus, cfg.stiffness, cfg.restitution, cfg.friction,
                   cfg.poisson_ratio, cfg.rolling_friction, cfg.damping,
                   cfg.damping_coefficient, cfg.tangential_history, **materials,
                   cohesion=cfg.cohesion, work_of_adhesion=cfg.work_of_adhesion,
                   cohesion_energy_density=cfg.cohesion_energy_density,
                   liquid_volume=cfg.liquid_volume, surface_tension=cfg.surface_tension,
                   contact_angle=cfg.contact_angle)

    def reach(self, r_max: float) -> float:
        """How far past touching (m) a contact acts, for spheres of radius up to ``r_max``:
        JKR's largest |δ_c| or a bridge's rupture separation over the pairs
        (``pdyn.dynamics.cohesion.reach``), else 0."""
        laws = self.pairs.values() if self.pairs is not None else (self,)
        return max(reach(p.cohesion_model, r_max) for p in laws)

    @property
    def damped(self) -> bool:
        """Whether contacts have a dashpot (a coefficient > 0; with several materials: in any
        pair)."""
        laws = self.pairs.values() if self.pairs is not None else (self,)
        return any(p.parameters.damping.coefficient > 0.0 for p in laws)

    @property
    def stiff(self) -> bool:
        """Whether contacts push at all (a Young's modulus or a stiffness; with several
        materials: in any pair)."""
        if self.pairs is not None:
            return any(p.stiff for p in self.pairs.values())
        return self.E > 0 or self.k > 0

    def contact_time(self, radius: np.ndarray, mass: np.ndarray) -> float:
        """Shortest contact duration t_c = π √(m_eff / k) over sphere–sphere (like pairs)
        contacts of the given particles (s); inf without stiffness. Hertz uses its tangent
        stiffness at an overlap of 1 % of the radius, with JKR cohesion the larger of that and
        JKR's at rest (``pdyn.dynamics.cohesion.stiffness``: sticky soft spheres rest deeper).
        With several materials the shortest over the pairs that can occur, each for every
        sphere (the stiffest pair bounds)."""
        if self.pairs is not None:
            return min(p.contact_time(radius, mass) for p in self.pairs.values())
        if radius.size == 0 or (self.E == 0.0 and self.k == 0.0):
            return math.inf
        m_eff = mass / 2.0  # like pairs are the stiffest relative to their mass
        k = self.parameters.stiffness(radius / 2.0, radius)
        held = cohesion_stiffness(self.cohesion_model, radius / 2.0, 0.01 * radius)
        if held is not None:  # JKR: stiffer at rest than Hertz at the 1 % overlap
            k = np.maximum(k, held)
        return float(np.min(np.pi * np.sqrt(m_eff / k)))

    def rayleigh_time(self, radius: np.ndarray, mass: np.ndarray) -> float:
        """Shortest Rayleigh time t_R = π r √(ρ/G) / (0.1631 ν + 0.8766) of the given spheres
        (s; ρ from mass and radius, G = E/(2(1 + ν)); inf for the linear law, whose E is no
        material modulus) — the time a shear (Rayleigh) wave takes to cross a sphere
        ([EDEMtimestep]). With several materials the shortest over the spheres' materials
        (each for every sphere: a bound)."""
        if self.pairs is not None:
            return min(p.rayleigh_time(radius, mass) for (a, b), p in self.pairs.items()
                       if a == b)
        if radius.size == 0 or self.name != "hertz" or self.E == 0.0:
            return math.inf
        nu = self.poisson_ratio
        rho = mass / (4.0 / 3.0 * np.pi * radius**3)
        shear = self.E / (2.0 * (1.0 + nu))
        return float(np.min(np.pi * radius * np.sqrt(rho / shear) / (0.1631 * nu + 0.8766)))

    def time_step_limit(self, radius: np.ndarray, mass: np.ndarray, dt_safety: float,
                        reduce_min=_itself) -> tuple[float, str]:
        """The largest dt pdyn accepts without ``allow_large_dt`` and uses by default (s), and
        what sets it, for spheres of ``radius`` and ``mass`` (the smallest over the ranks:
        ``reduce_min``, ``comm.allreduce_min``): the shortest contact time t_c /
        ``dt_safety`` and, with Hertz, :data:`RAYLEIGH_FRACTION` of the Rayleigh time t_R of
        the smallest, stiffest sphere ([EDEMtimestep]: 0.2 t_R for dense packings)."""
        t_c = reduce_min(self.contact_time(radius, mass))
        t_r = reduce_min(self.rayleigh_time(radius, mass))
        by_contact = t_c / dt_safety
        if RAYLEIGH_FRACTION * t_r < by_contact:
            return RAYLEIGH_FRACTION * t_r, f"{RAYLEIGH_FRACTION:g} x Rayleigh time {t_r:.4g} s"
        return by_contact, f"contact time {t_c:.4g} s / dt_safety {dt_safety:g}"

    def time_step(self, given: float | None, radius: np.ndarray, mass: np.ndarray,
                  dt_safety: float, allow_large: bool = False, reduce_min=_itself) -> float:
        """The time step (s): ``given`` — refused (``ValueError``, one line) above
        :meth:`time_step_limit` unless ``allow_large`` — or, when None, the limit itself."""
        limit, why = self.time_step_limit(radius, mass, dt_safety, reduce_min)
        if given is None:
            if not math.isfinite(limit):
                raise ValueError(f"contact.youngs_modulus = {self.E!r}: no contact "
                                 "stiffness, so no time step follows from the contact time; "
                                 "give dt (or a stiffness)")
            return limit
        if given > limit and not allow_large:
            raise ValueError(f"dt = {given!r}: above the time-step limit {limit:.4g} s ({why}); "
                             "give a smaller dt, or set allow_large_dt = true to force it")
        return float(given)


def _n_slots(rows: int) -> int:
    """The slots of a pass over ``rows`` rows (:data:`SLOTS_PER_ROW`, :data:`MIN_SLOTS`)."""
    return max(MIN_SLOTS, int(rows * SLOTS_PER_ROW))


class ContactPass(Hanger):
    """The force evaluation of a :class:`ContactLaw` over a particle store and its neighbour
    lists, with the state the passes keep from one to the next: the contact history (with
    rotation, :attr:`history`), who evaluates each pair (links), the row scratch, the rows
    that spun, the mesh buffers and the recorded tangential forces. It hangs on the lists
    (:attr:`hangers`, ``pdyn.dynamics.neighbours.Hanger``), which tell it of each rebuild.
    ``walls``: the wall table (``pdyn.walls.WallSet.table``; None: planes at rest),
    ``mesh``: the meshes' bundle (``WallSet.bundle``; None: no mesh). A pass told to
    ``record`` leaves the tangential force on the row's sphere of each contact evaluated in
    its row in :attr:`tangential` (entries × 3, aligned with ``lists.partner``;
    :attr:`recorded` says whether the last pass did: ``"all"``, or ``"walls"`` for the wall
    contacts alone, which keeps the pairs handed over).
    """

    def __init__(self, law: ContactLaw, walls: np.ndarray | None = None,
                 mesh: tuple | None = None):
        self.law, self.walls, self.mesh = law, walls, mesh
        self.recorded = None  # what the last pass recorded tangential forces of: "all", "walls"
        self._history_current = False  # the history holds the last pass's entries (acting)
        self._halved = False  # the history holds a pair handed over once (_complete_history)
        self._geo, self._border = np.zeros((0, 4)), NO_BORDER  # mesh_state's buffers
        self.tangential = self._tangential = np.zeros((0, 3))  # (a view of the buffer)
        self.history = ContactHistory()  # with rotation: the springs between rebuilds
        self.spinning = NO_SPINNING  # rows (handles) that touched in the last pass
        # who evaluates each list entry (_links; empty: every row its own pairs), found at the
        # first pass over a build (``_link_found``)
        self._link, self._link_found = NO_LINKS, False
        self._hand_over = None  # hand_over
        self._touching = None  # the share of list entries that touched in the last pass
        self._todo, self._gather = np.zeros(0, np.int64), False  # did the last pass gather
        self._todo_sized = False  # for the rows of this build of the lists
        self._done = np.zeros((0, 6))  # the slots of results that later rows take over
        self._done_at = np.zeros((0, 2), np.int32)  # their first rows' springs; free slots
        self._n_slots = 0  # the slots the last pass had, and their views
        self._slot_views = self._no_slots = self._done[:0], self._done_at[:0]
        self.n_spinning = -1  # rows in ``spinning`` (-1: no pass over this build yet)

    @property
    def rotating(self) -> bool:
        """The law's spheres rotate (friction or rolling friction)."""
        return self.law.rotating

    def contact_list(self, store, lists, dt: float, *, spheres: bool = True,
                     tangential: np.ndarray | None = None, lower: bool = True,
                     fixed: np.ndarray | None = None, scratch: Scratch | None = None,
                     just_passed: bool = False) -> dict:
        """The contacts of the rows of ``lists`` with their forces as the force pass of a step
        of ``dt`` s computed them (those cohesion holds past touching too: :meth:`evaluated`),
        for output and servo loads: ``id`` (K, 2)
        int64 — (gid_i, gid_j), a sphere pair once (lower gid first), a wall's negative gid
        second —, ``ends`` (2K, 3) m — x_i, then x_j or the contact point on the wall —,
        ``force`` (K,) N — the normal force magnitude, > 0 repulsive —, ``normal_force`` and
        ``tangential_force`` (K, 3) N on i from j. ``spheres=False``: wall contacts only (the
        cheap pass of the wall-force series); ``lower=False``: every row's sphere pairs from
        its own side (each pair twice over the ranks: per-sphere sums, ``pdyn.fields``);
        ``fixed`` (the fixed spheres' sorted global ids; with ``lower``): every contact once
        from its row's side, a pair on its lower-id sphere's row unless that sphere is fixed
        (no row: its partner's) — ``pdyn.fields.once.once_mask`` of the ``lower=False`` list.

        ``tangential`` is where a tangential (friction) force enters: an (entries, 3) array,
        aligned with ``lists.partner``, of the tangential force on each row's sphere per list
        entry; None: no friction, zeros. ``scratch`` (``pdyn.heap.Scratch``): the arrays,
        kept there (valid until its next use), None: new ones. ``just_passed``: called right
        after the force pass over ``lists`` (nothing moved since), whose contact history then
        names the contacts (:meth:`acting`)."""
        t = np.zeros((0, 3)) if tangential is None else np.ascontiguousarray(tangential, float)
        walls, mesh = self.wall_table(store), self.mesh_state(store, lists)
        found = touching_entries(
            store, lists, walls, mesh, spheres=spheres, lower=lower,
            evaluated=self.evaluated(store, lists), fixed=fixed,
            found=None if scratch is None else scratch.take("found", lists.partner.shape[0], 2,
                                                            np.int64),
            acting=self.acting(store, lists) if just_passed else None)
        k = found.shape[0]
        out = ((np.empty((k, 2), np.int64), np.empty((2 * k, 3)), np.empty(k),
                np.empty((k, 3)), np.empty((k, 3))) if scratch is None else
               (scratch.take("id", k, 2, np.int64), scratch.take("ends", 2 * k, 3),
                scratch.take("force", k, None), scratch.take("normal_force", k, 3),
                scratch.take("tangential_force", k, 3)))
        ids, ends, f_n, fvec, tvec = _contact_list(
            self.law.parameters, self.law.cohesion_model, float(dt), found, lists.rows,
            lists.split, lists.partner, store.pos, store.vel, store.radius, store.mass,
            store.gid, store.normal, walls, t, mesh, store.material, self.law.table, out)
        return {"id": ids, "ends": ends, "force": f_n, "normal_force": fvec,
                "tangential_force": tvec}

    def wall_sums(self, store, lists, dt: float, sums, column: np.ndarray, held: int) -> None:
        """This step's sphere–wall contacts, as the force pass of a step of ``dt`` s computed
        them (with the tangential forces it recorded), summed exactly per wall into ``sums``
        (``pdyn.fields.exact.GroupSums`` of 6 groups a wall: the force on the wall (N) and its
        moment about the wall's point (N·m); ``column[−1 − wall id]`` the wall's) as the step
        held ``held``: the wall-force series' one compiled call a step."""
        t = self.recorded_tangential(lists, spheres=False)
        sums.emit(held, _wall_sums(
            self.law.parameters, self.law.cohesion_model, float(dt), lists.rows, lists.start,
            lists.split, lists.partner, store.pos, store.vel, store.radius, store.mass,
            store.gid, store.normal, self.wall_table(store), NO_FORCES if t is None else t,
            self.mesh_state(store, lists), store.material, self.law.table, column, sums.limbs,
            sums.used, held, sums.keys, sums.values, sums.n, self.evaluated(store, lists)))

    def acting(self, store, lists) -> np.ndarray | None:
        """The entries of ``lists`` the last force pass applied a force for (ascending), right
        after it: with rotation its contact history holds exactly those (every touching entry,
        and those cohesion held, is given its spring); None without (or after a pass that
        did not advance the history, or new lists): a walk must test the entries."""
        if not self._history_current:
            return None
        self._complete_history(lists)
        return self.history.entries(store, lists)

    def evaluated(self, store, lists) -> np.ndarray | None:
        """The entries of ``lists`` the last force pass evaluated (ascending), where cohesion
        holds contacts past touching (``pdyn.dynamics.cohesion.HELD``: the pass decides
        whether one still acts and records it in the contact history, read here — or from the
        particles' records once saved); None otherwise: the touching entries are those."""
        if self.law.cohesion not in HELD:
            return None
        self._complete_history(lists)
        return self.history.entries(store, lists)

    @property
    def hangers(self) -> tuple:
        """What hangs on the builds of the lists this model's passes run over, in the order
        to register them (``NeighbourList.hang``): the model (its links, scratch and spinning
        rows), then its contact history."""
        return (self, self.history)

    def before_rebuild(self, store, lists) -> None:
        """The lists are rebuilt: the links to their entries go (not held through the broad
        phase's query; first, so the history's records never sit beside them)."""
        self._complete_history(lists)
        self._link, self._link_found = NO_LINKS, False

    def after_build(self, store, lists) -> None:
        """New lists: links, row scratch and spinning rows are found again by the next pass."""
        self._link, self._link_found, self._todo_sized = NO_LINKS, False, False
        self.n_spinning = -1
        self._history_current = False

    def save(self, store, lists) -> None:
        """With rotation the history is saved next (its own hook): the links go first, so
        the records never sit beside them (found again by the next pass)."""
        if self.rotating:
            self._complete_history(lists)
            self._link, self._link_found = NO_LINKS, False

    def resume(self, store, lists, gravity: np.ndarray, dt: float) -> tuple[int, float]:
        """The first pass of a restarted run: (contacts, elastic energy) of the checkpoint's
        state, which it keeps — the forces and torques (:data:`RESTART_KEPT`) and the contact
        history (not advanced: the next pass reads the checkpoint's again)."""
        kept = {k: getattr(store, k).copy() for k in RESTART_KEPT if k in store.fields}
        out = self.forces(store, lists, gravity, dt, advance=False)
        for k, v in kept.items():
            getattr(store, k)[:] = v
        return out

    def forces(self, store, lists, gravity: np.ndarray, dt: float,
               record: bool = False, advance: bool = True,
               walls_only: bool = False) -> tuple[int, float]:
        """Set ``store.force`` (and with rotation ``store.torque``, advancing the contact
        history by ``dt`` s unless not ``advance``) of the rows of the neighbour ``lists``
        (:class:`~pdyn.dynamics.neighbours.NeighbourList`, on which :attr:`hangers` hang);
        return (contacts, elastic energy) of this rank's share. With rotation the history
        between rebuilds is kept in :attr:`history`. ``record``: keep each entry's tangential
        force in :attr:`tangential` (``walls_only``: each touching wall entry's alone, the
        wall-force series' need, at no cost to the pairs)."""
        dt = float(dt)
        self.recorded = ("walls" if walls_only else "all") if record else None
        record = NO_FORCES
        if self.recorded:
            n = lists.partner.shape[0]
            if self._tangential.shape[0] < n:  # a buffer kept from pass to pass, grown
                self._tangential = np.zeros((n + n // 4, 3))
            elif self.tangential.shape[0] != n or not walls_only:  # (every touching wall
                self._tangential[:n] = 0.0  # entry is written: no need to clear for those)
            record = self.tangential = self._tangential[:n]
        walls = self.wall_table(store)
        if not self.rotating:
            link = self._links(store, lists)
            done, done_at = self._slots(lists.rows.shape[0], link is not None)
            n, e = _pass(self.law.parameters, self.law.cohesion_model, self.law.table, dt,
                         gravity, _lists(lists), _spheres(store), (store.normal, walls),
                         store.force, link, (done, done_at), self._row_scratch(lists),
                         self.mesh_state(store, lists))
            self._touched(lists, n)
            self._history_current = False  # (a law changed in place: no history of this pass)
            return n, e
        mesh = self.mesh_state(store, lists)
        if self.recorded == "all" or not self._link_found:  # every pair evaluated in each row,
            self._complete_history(lists)  # or links found anew: each row's springs its own
        old_entry, old_spring, old_slid, n_old, fresh = self.history.prepare(store, lists)
        link = self._links(store, lists)  # after the load: never beside the records
        if self.spinning.shape[0] < lists.rows.shape[0]:
            n = lists.rows.shape[0] + lists.rows.shape[0] // 4
            self.spinning = np.empty(n, np.int64)  # as lists.rows: one kick compiled
        while True:  # the history's buffers grow with the contacts
            new_entry, new_spring, new_slid = self.history.next_buffer()
            done, done_at = self._slots(lists.rows.shape[0], link is not None)
            n, e, k, q = _pass_rotating(
                self.law.parameters, self.law.tangential_model, self.law.rolling_model,
                self.law.cohesion_model, self.law.table, dt, gravity, _lists(lists),
                _spheres(store), (store.normal, walls), store.omega,
                (store.force, store.torque, self.spinning),
                (old_entry, old_spring, old_slid, n_old, fresh, new_entry, new_spring,
                 new_slid), link, (done, done_at), record, self.recorded == "all", mesh,
                self._row_scratch(lists, self.law.cohesion_model is None))
            if k <= new_entry.shape[0]:
                break
            self.history.reserve(k)
        if advance:
            self.history.advanced(k)
            self._halved = link is not None and self.recorded != "all"
        self._history_current = advance
        self._touched(lists, n)
        self.n_spinning = q
        return n, e

    def _complete_history(self, lists) -> None:
        """The contact history as each row would hold it: a pair handed over keeps one spring
        between rebuilds, its first row's (``_handed``), here its second row's written too
        (the negated: what that row's own evaluation gives) — for whatever reads the history
        but the pass (a save, the output's walks) and a pass that evaluates pairs in both
        rows."""
        if not self._halved:
            return
        self._halved = False
        entry = self.history.entry
        at, to = np.empty(entry.shape[0], np.int32), np.empty(entry.shape[0], np.int32)
        m = _second_sides(lists.start, lists.split, self._link, entry, at, to)
        order = np.argsort(to[:m])
        self.history.add_negated(at[order], to[order])

    def mesh_state(self, store, lists) -> tuple | None:
        """The mesh state of a pass over ``lists`` now (:func:`mesh_state`, in buffers kept
        here), or None without meshes."""
        if self.mesh is None:
            return None
        n = lists.mesh_sphere.shape[0]
        if self._geo.shape[0] < n:
            self._geo, self._border = np.zeros((0, 4)), NO_BORDER
            self._geo, self._border = np.empty((n + n // 4, 4)), np.empty(n + n // 4, np.int64)
        return mesh_state(store, lists, self.mesh, self._geo[:n], self._border[:n])

    @property
    def hand_over(self) -> bool | None:
        """Hand pairs of two rows over (True), never (False), or as :data:`HAND_OVER_FROM`
        decides (None, the default); set, it takes effect at the next pass."""
        return self._hand_over

    @hand_over.setter
    def hand_over(self, value: bool | None) -> None:
        if value != self._hand_over:
            self._hand_over = value
            self._link_found = False  # found again, between passes

    def _links(self, store, lists) -> np.ndarray | None:
        """Who evaluates each sphere entry of ``lists`` (:func:`_links`), found once per build
        of the lists (kept from pass to pass); None — every pair evaluated in each of its rows
        — where handing pairs over does not pay (:attr:`hand_over`, :data:`HAND_OVER_FROM`)."""
        if not self._link_found:
            once = self.hand_over
            if once is None:  # from the pass before (the same bits either way): none
                once = (self._touching is not None  # before the first, decided again after it
                        and self._touching >= self._hand_over_from())
            self._link = NO_LINKS
            # (a link holds POSTED − a slot or, none free, − the slots − a history place: int32)
            if once and lists.entries() + _n_slots(lists.rows.shape[0]) < 2**31 - 4:
                link = np.empty(lists.entries(), np.int32)
                row_of = np.full(store.capacity, -1, np.int32)  # the row of each handle
                row_of[lists.rows] = np.arange(lists.rows.shape[0], dtype=np.int32)
                _links(lists.rows, lists.start, lists.split, lists.partner, row_of, link)
                del row_of
                self._link = link
            self._link_found = True
        return self._link if self._link.shape[0] else None

    def _hand_over_from(self) -> float:
        """The share of touching entries from which pairs are handed over: by rotation and
        law (:data:`HAND_OVER_FROM`), never for frictionless contacts without cohesion whose
        dashpot is cheap (:data:`CHEAP_DAMPINGS`) or none (they cost less than their
        hand-over)."""
        law = self.law
        if (not self.rotating and law.cohesion_model is None
                and (law.damping in CHEAP_DAMPINGS or not law.damped)):
            return math.inf
        return HAND_OVER_FROM[self.rotating, law.name]

    def _row_scratch(self, lists, allowed: bool = True) -> np.ndarray | None:
        """Scratch for the sphere entries of the longest row of ``lists`` (kept from pass to
        pass, grown when too small) where this pass gathers each row's entries with work
        first — where ``allowed``, decided at each pass from the share of entries that
        touched in the pass before (:data:`GATHER_FROM`, :data:`GATHER_ROTATING_FROM`; not
        at the first) —, else None."""
        self._gather = allowed and self._touching is not None and self._touching >= (
            GATHER_ROTATING_FROM if self.rotating else GATHER_FROM)
        if self._gather and not self._todo_sized and lists.rows.shape[0]:
            n = int(np.max(lists.split - lists.start[:-1]))
            if self._todo.shape[0] < n:
                self._todo = np.empty(n + n // 4, np.int64)
            self._todo_sized = True
        return self._todo if self._gather else None

    def _touched(self, lists, contacts: int) -> None:
        """Keep the share of list entries that touched in this pass (2 × ``contacts`` /
        entries): what decides whether the next pass gathers and, for the next lists (and
        for these after the first pass, which had no share to go by), whether pairs are
        handed over."""
        if self._touching is None:
            self._link_found = self._link.shape[0] != 0  # (links only if hand_over said so)
        self._touching = 2.0 * contacts / max(lists.entries(), 1)

    def _slots(self, rows: int, used: bool = True) -> tuple:
        """The pass's slots for the results of pairs handed over (``done``; ``done_at``: the
        place of the spring each started from, and in its last column the stack of free slots,
        all of them between passes; one spare row, :func:`_take`): :data:`SLOTS_PER_ROW` of
        the rows, at least :data:`MIN_SLOTS`, views of buffers kept from pass to pass (grown
        when too small); none unless ``used`` (no pair handed over)."""
        if not used:  # no pair handed over: no slots
            return self._no_slots
        n = _n_slots(rows)
        if self._n_slots == n:  # the views of the pass before (a pass leaves them as found)
            return self._slot_views
        if self._done.shape[0] < n:  # (the old buffers freed first: no views of them kept)
            self._slot_views = self._no_slots = None
            self._done, self._done_at = np.zeros((0, 6)), np.zeros((0, 2), np.int32)
            self._done, self._done_at = np.empty((n, 6)), np.empty((n + 1, 2), np.int32)
            self._no_slots = self._done[:0], self._done_at[:0]
        self._done_at[:n, 1] = np.arange(n, dtype=np.int32)
        self._n_slots = n
        self._slot_views = self._done[:n], self._done_at[:n + 1]
        return self._slot_views

    def wall_table(self, store) -> np.ndarray:
        """The wall table the kernels read (:attr:`walls`, or planes at rest for the walls of
        ``store`` when none was given)."""
        if self.walls is not None:  # (a step reads it as is: no scan of the store)
            return self.walls
        n = store.walls.shape[0]
        return WallSet(np.zeros((n, 3)), np.zeros((n, 3))).table

    def spins(self, store, lists) -> tuple:
        """The spin arrays the kicks integrate (``pdyn.dynamics.integrate``): the store's
        ``omega``, ``torque``, ``radius`` and :meth:`spinning_rows`; Nones and no rows without
        rotation."""
        if not self.rotating:
            return None, None, None, NO_SPINNING
        return store.omega, store.torque, store.radius, self.spinning_rows(lists)

    def spinning_rows(self, lists) -> np.ndarray:
        """Handles of the rows of ``lists`` that touched something in the last pass over them:
        the only ones whose torque may be nonzero (the spin kicks integrate these); every row
        where no pass has run over these lists yet (a rebuild, a restart)."""
        if self.n_spinning < 0:
            return lists.rows
        return self.spinning[:self.n_spinning]

    def recorded_tangential(self, lists, spheres: bool = True) -> np.ndarray | None:
        """The tangential force per entry of ``lists`` for output: what the last pass recorded
        (:attr:`tangential`); None (zeros) without friction or record. The one place
        friction's per-contact history enters the contact network and wall forces. A pass that
        recorded the wall entries alone serves only ``spheres=False`` (a caller's error else)."""
        if self.rotating and self.recorded and self.tangential.shape[0] == lists.entries():
            if spheres and self.recorded != "all":
                raise ValueError("the last force pass recorded the wall contacts' tangential "
                                 "forces only")
            return self.tangential
        return None
