"""The published measurements ``pdyn bench --report`` puts beside its own: [Koch2020] Tables
1-10, [Ihmsen2011] Table 2 and [Schornbaum2009] Figs. 25, 28-30, with the rankings they give,
mapped onto pdyn's structure names (Koch's "Linked Cells", "Octree", "Hierarchical Hash Grid"
are ``linked_cells``, ``octree``, ``hash_grid``; Ihmsen's "basic uniform grid" is
``linked_cells``).
"""

from __future__ import annotations

#: [Koch2020] Tables 1-7: scene -> (table, {structure: (total s, collision s, pairs)}), for the
#: scene's full size and step count on Koch's Xeon Gold 5122 at 3.3 GHz
KOCH_SCENES = {
    "reference": (1, {"linked_cells": (5.24, 4.42, 1.75e8), "octree": (20.8, 17.9, 9.04e8),
                      "hash_grid": (17.1, 12.5, 1.92e8)}),
    "inhomogeneous": (2, {"linked_cells": (15.9, 13.3, 7.09e8), "octree": (20.6, 17.3, 8.40e8),
                          "hash_grid": (9.42, 6.50, 1.59e8)}),
    "very_inhomogeneous": (3, {"linked_cells": (93.0, 69.1, 5.06e9),
                               "octree": (19.6, 17.3, 9.72e8),
                               "hash_grid": (7.50, 5.60, 1.42e8)}),
    "checkerboard": (4, {"linked_cells": (19.8, 14.8, 4.87e8), "octree": (73.6, 64.9, 4.12e9),
                         "hash_grid": (30.2, 16.6, 3.71e8)}),
    "polydisperse": (5, {"linked_cells": (2.87, 2.64, 1.12e8),
                         "hash_grid": (12.6, 8.99, 6.54e7)}),
    "more_polydisperse": (6, {"linked_cells": (166.0, 165.8, 1.30e10),
                              "hash_grid": (24.0, 18.7, 4.17e8)}),
    "very_polydisperse": (7, {"linked_cells": (104.4, 104.4, 8.00e9),
                              "hash_grid": (0.154, 0.0965, 3.01e6)}),
}

#: why our ranking can differ from Koch's, per scene (the facts are from the full run: Koch's
#: sizes, 16 steps)
KOCH_WHY = {
    "reference": "Koch tuned every structure per scene; ours size themselves. Our linked "
    "cells rebuild a dense grid each step and sweep every cell of it (~0.1 particles per "
    "cell), and the table cap of 8 N cells makes its cells 1.25 diameters wide (Koch: 1.3), so "
    "it hands twice the candidates of a diameter-sized grid to the exact test. Our hash grid "
    "updates incrementally and visits occupied cells only, which puts it ahead of linked "
    "cells and within ~1.1x of index_sort (not in Koch's study), the fastest here.",
    "inhomogeneous": "Our linked cells' table cap (8 N cells on a 500³ box) makes cells ~5 "
    "diameters wide, so the dense clusters yield 3·10⁷ candidates per step (Koch's hand-set "
    "cell 3.75: 3.5·10⁶ per step) and linked cells falls behind the octree, whose stored "
    "adjacency yields 7·10⁶.",
    "very_inhomogeneous": "Agrees. At full size linked cells would hand 9.3·10⁷ candidates "
    "per step to the exact test and refuses (> 2²⁶; Koch's ran: 93 s, 5·10⁹ pairs), so it "
    "ranks last; the octree's stored adjacency yields 5·10⁶ candidates per step, the hash "
    "grid 2.4·10⁵.",
    "checkerboard": "Koch's linked cells (cell 2.1 by hand) beat his fixed 256³ hash grid. "
    "Ours: the table cap (8·10⁶ cells for 10⁶ particles in 400³) makes linked cells' cells 2 "
    "diameters wide (3.2·10⁶ candidates per step, 9x the diameter grid's) and it sweeps all "
    "of them every step, while our hash grid grows its grids with N (≤ 1/5 object per "
    "cell) and updates incrementally.",
    "polydisperse": "Agrees: at this mild spread (largest / cubic mean radius 1.5) cells of "
    "the largest diameter hold few particles (linked cells: 2.6·10⁵ candidates per step, the "
    "hash grid 1.6·10⁵), so one dense grid rebuilt per step beats a hierarchy of grids "
    "updated incrementally, as in Koch's table.",
    "more_polydisperse": "Agrees: with a size ratio of 40 linked cells' cells are 40 small "
    "diameters wide and would yield 6.9·10⁷ candidates per step (> 2²⁶: refused, last); the "
    "hash grid tests 4.4·10⁵.",
    "very_polydisperse": "Agrees: one sphere spanning the box makes linked cells pair "
    "everything with everything (8·10⁷ candidates per step at full size: refused, last); the "
    "hash grid tests 6·10⁴.",
}

#: [Koch2020] Tables 8 and 10: particles -> (total s, collision s, pairs), 1024³ box, r = 0.5,
#: 10 static steps
KOCH_SCALING = {
    "octree": {1e4: (0.0692, 0.0583, 2.95e6), 2e4: (0.188, 0.1711, 1.12e7),
               4e4: (0.391, 0.336, 2.00e7), 8e4: (0.692, 0.541, 2.51e7),
               1.6e5: (1.88, 1.61, 9.53e7), 3.2e5: (4.32, 3.32, 1.66e8),
               6.4e5: (8.24, 5.46, 2.08e8), 1.28e6: (19.8, 14.7, 7.87e8),
               2.56e6: (44.3, 29.1, 1.37e9), 5.12e6: (86.5, 48.9, 1.69e9)},
    "hash_grid": {1e4: (0.0262, 0.00757, 6.33e3), 2e4: (0.0472, 0.0173, 2.55e4),
                  4e4: (0.106, 0.0488, 1.05e5), 8e4: (0.286, 0.150, 4.19e5),
                  1.6e5: (0.802, 0.479, 1.69e6), 3.2e5: (2.15, 1.47, 6.72e6),
                  6.4e5: (6.07, 4.60, 2.69e7), 1.28e6: (17.6, 14.4, 1.08e8),
                  2.56e6: (47.0, 40.3, 4.31e8), 5.12e6: (115.1, 100.0, 1.72e9)},
}
#: [Koch2020] Sec. 4.2.3: fitted exponents of the total time (octree n^1.143); the hash grid's
#: from Table 10 the same way: (115.1 / 0.0262)^(1/9) per doubling -> n^1.35
KOCH_EXPONENTS = {"octree": 1.143, "hash_grid": 1.35}

#: [Ihmsen2011] Table 2 (CBD 130K, ms per step with reordering: construction, query, total)
IHMSEN_TABLE2 = {"compact_hash": (8.2, 32.1, 40.3), "zindex_sort": (16.5, 26.6, 43.1),
                 "linked_cells": (25.7, 38.1, 63.8), "index_sort": (35.8, 29.1, 64.9),
                 "spatial_hash": (41.9, 86.0, 127.9)}
IHMSEN_WHY = (
    "Ihmsen's scene is an SPH fluid (~28 neighbours per particle, 24 threads); Koch's "
    "reference scene has ~1 particle per cell. Z-index sort's edge in his Table 2 came from a "
    "slow parallel radix sort (25 ms for 130k keys) that insertion sort avoided; our serial "
    "radix sort takes ~1 ms for 10⁵ keys, so a full re-sort (index_sort) costs about what "
    "the insertion sort does. Compact hashing's gain is many particles per used cell; at ~1 "
    "per cell its per-particle bookkeeping is pure overhead."
)

#: [Schornbaum2009] Sec. 4.1, 4.5 (Figs. 20, 28-30) and 4.3 (Fig. 25), in words: series ->
#: (published order, fastest first, of the structures compared there; what the text says)
SCHORNBAUM = {
    "motion 20 %": (["hash_grid", "brute", "sweep_prune"],
                    "Figs. 20, 28: the hash grid scales linearly; sweep and prune drops so far "
                    "that even all-pairs is faster"),
    "motion 1 %": (["hash_grid", "sweep_prune"],
                   "Fig. 29: sweep and prune improves but the hash grid stays up to 5x faster"),
    "tiny, no contacts": (["sweep_prune", "hash_grid"],
                          "Fig. 30: objects 10⁵ x smaller, nothing collides: sweep and prune "
                          "2-3x faster than the hash grid"),
}
SCHORNBAUM_UPDATE = ("Fig. 25: at 20 % motion updating each object individually is ~40 % "
                     "faster than removing and re-inserting all; when every object changes "
                     "cell every step the individual update loses its advantage")
SCHORNBAUM_WHY = {
    "motion 20 %": "Agrees where all-pairs still runs (our all-pairs stops at 3000 objects). "
    "At constant density a sweep along one axis tests every pair whose extents overlap along "
    "it, ~N^(5/3) pairs, so our sweep and prune is the slowest structure from 10⁴ objects on "
    "(25-27 ms per step at 10⁴, 6-7 s at 3·10⁵) while the grids grow linearly.",
    "motion 1 %": "Agrees, with a wider gap than Schornbaum's 5x: slower motion makes our "
    "sweep and prune's insertion sort cheaper but not its scan of the sorted axis, which it "
    "repeats at every query.",
    "tiny, no contacts": "Our sweep and prune re-sorts one axis and scans it every query; "
    "pe's kept its overlap set between steps and only re-checked swapped endpoints, which is "
    "what makes it win when nothing moves past anything.",
}


def published_order(table: dict, column: int = 0) -> list[str]:
    """Structures of a published table, fastest first by ``column`` (0: total time)."""
    return sorted(table, key=lambda s: table[s][column])

#: the update strategies compared with Fig. 25: structure -> (row of the incremental strategy,
#: row of the one that rebuilds or re-sorts everything) in ``report.UPDATE_PAIRS``
UPDATE_COMPARED = {"hash_grid": ("hash_grid incremental", "hash_grid rebuild"),
                   "octree": ("octree incremental", "octree rebuild"),
                   "zindex_sort": ("zindex_sort insertion", "zindex_sort merge"),
                   "compact_hash / spatial_hash": ("compact_hash (moves changed)",
                                                   "spatial_hash (rebuilds)")}
#: why our update-strategy ratios can differ from Fig. 25, per row of ``UPDATE_COMPARED``
UPDATE_WHY = {
    "hash_grid": "Agrees: at 20 % motion few objects change cell and the incremental update "
    "moves only those (about 0.6, Schornbaum's ~40 % gain); when every object changes cell "
    "each move is a swap-remove and an insert, dearer than refilling the cells in one pass "
    "(about 1.5).",
    "octree": "Differs when every object changes cell: the incremental update keeps its "
    "advantage (about 0.6-0.7). Our leaves hold several objects and are larger than a hash "
    "cell, so a jump of 1-2 diameters often stays inside the leaf, and a rebuild also "
    "recomputes the stored adjacency of every leaf.",
    "zindex_sort": "Not in Fig. 25 ([Ihmsen2011]'s two re-sorts, insertion against merge of the "
    "out-of-order tail): about 1.1 either way; the re-sort is a small part of the query next to "
    "recomputing every key and emitting the pairs.",
    "compact_hash / spatial_hash": "Differs: compact hashing updates only the particles that "
    "changed cell, yet is slower than spatial hashing's rebuild (about 1.2 and 1.8-1.9): with ~1 "
    "particle per used cell its per-move bookkeeping costs more than a refill ([Ihmsen2011] "
    "measured its gain on a fluid with ~28 neighbours per particle).",
}
#: why our full-step ranking can differ from [Koch2020] Table 1, per variant of ``full_step``
FULL_STEP_WHY = {
    "no neighbour lists (skin 0)": "Our hash grid is ahead of linked cells (and of "
    "`index_sort`; `auto` switches to it at the first step, rule 2 of `auto.py`). The gas "
    "moves ~0.15 % of a diameter per step, so the hash grid's incremental update moves few "
    "objects, and it hands only touching pairs to the contact kernel; linked cells and the "
    "index sorts re-sort every particle every step and hand all their candidates to the "
    "kernel's exact test. On Schornbaum's scene, where objects move 20 % of their size per "
    "step, the order is the other way round.",
    "neighbour lists (default skin)": "The ranking is noise: with neighbour lists the "
    "structure runs only when the lists are rebuilt (its median time per step is 0), so every "
    "structure's step is within ~10 % of the others'.",
}
