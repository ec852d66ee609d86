"""How long does a run take to start with a large triangle mesh, and where does the time go?

Writes a binary STL of ``--triangles`` triangles (``pdyn.mesh.grid_surface``: an irregular,
gently bumpy sheet, about 2 n² triangles, over the floor of the ``drop`` scene's 8 m × 8 m
box, 0.45-0.55 m up), then

* **stages**, in this process, each timed by CPU time (``time.process_time``: what other jobs
  of a shared machine take is not counted) and wall time: reading the STL
  (``pdyn.stl.read_stl``), building the mesh (``pdyn.mesh.Mesh``: checks, weld, edges,
  adjacency, grid, packed records), packing it (``pdyn.mesh.pack``), and the start-up check's
  distance of each of the scene's spheres from it (``Mesh.gaps``), after numba's kernels
  were compiled or loaded on a tiny mesh;
* **runs**: ``pdyn run`` of the ``drop`` scene for 1 step on each of ``--ranks``, with the
  mesh as a wall and without it, each after a discarded run of the same kind (a small mesh)
  that fills numba's cache: the wall time of the whole command, its largest rank's CPU time
  (user + system), and the peak resident set of rank 0 (which builds the mesh: the ranks of a
  node share one copy, ``pdyn.parallel.shared``) and of the largest other rank
  (``/usr/bin/time``; a shared page counts in each rank that touched it). The mesh's start-up
  is the difference of the two; the load average (1 min) is printed beside each row.

    python benchmarks/mesh_startup.py [--triangles 1000000] [--ranks 1 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import print_rows, write_json  # noqa: E402

from pdyn.mesh import Mesh, grid_surface, pack  # noqa: E402
from pdyn.scenarios import make_scene  # noqa: E402
from pdyn.stl import read_stl, write_stl  # noqa: E402

BIN = Path(sys.executable).parent


def write_sheet(path: Path, triangles: int) -> int:
    """The STL of the benchmark (module docstring) at ``path``; returns its triangle count."""
    n = max(1, round((triangles / 2) ** 0.5))
    v, t = grid_surface(n, 4.0, lift=lambda x, y: 0.5 + 0.05 * np.sin(3 * x) * np.cos(2 * y),
                        jitter=0.2)
    v[:, :2] += 4.0
    write_stl(path, v[t])
    return len(t)


def timed(what: str, fn):
    """(row, result) of one call of ``fn``: CPU and wall seconds."""
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return {"stage": what, "cpu (s)": f"{time.process_time() - c0:.2f}",
            "wall (s)": f"{time.perf_counter() - w0:.2f}"}, out


def stages(stl: Path) -> list[dict]:
    """The in-process stages (module docstring), in order."""
    v, t = grid_surface(2, 1.0)
    Mesh(v[t]).gaps(np.zeros((1, 3)))  # numba's kernels compiled or loaded: not timed
    rows = []
    row, corners = timed("read STL", lambda: read_stl(stl))
    rows.append(row)
    row, mesh = timed("build Mesh", lambda: Mesh(corners))
    rows.append(row)
    row, _ = timed("pack", lambda: pack([mesh], [6]))
    rows.append(row)
    pos = make_scene("drop").materialised().positions
    row, _ = timed(f"gaps of {len(pos)} spheres", lambda: mesh.gaps(pos))
    rows.append(row)
    return rows


def config(folder: Path, stl: Path | None) -> Path:
    """A config of the ``drop`` scene, 1 step, no snapshot; the STL as a mesh wall."""
    text = 'scene = "drop"\nsteps = 1\n[output]\nsnapshot_every = 0\noverwrite = true\n'
    if stl is not None:
        text += f'[[walls]]\ntype = "mesh"\nfile = "{stl}"\n'
    path = folder / (f"{stl.stem}.toml" if stl else "plain.toml")
    path.write_text(text)
    return path


def run(cfg: Path, ranks: int, out: Path) -> tuple[float, float, float, float]:
    """Wall seconds of ``pdyn run cfg`` on ``ranks`` ranks, the largest rank's CPU seconds
    (user + system), rank 0's peak resident set and the largest other rank's (MiB, 0 on one
    rank; ``/usr/bin/time`` around each rank)."""
    cmd = [str(BIN / "mpiexec"), "-n", str(ranks), "sh", "-c",
           '/usr/bin/time -f "rank $PMI_RANK %U %S %M" "$0" "$@"',
           sys.executable, "-m", "pdyn", "run", str(cfg), "--output", str(out), "--no-progress"]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    wall = time.perf_counter() - t0
    ranks = sorted((int(r), float(u) + float(s), int(m) / 1024.0) for r, u, s, m in
                   (line.split()[1:] for line in done.stderr.splitlines()
                    if line.startswith("rank ")))
    if len(ranks) != int(cmd[2]):
        sys.exit(f"mesh_startup: {len(ranks)} of {cmd[2]} ranks reported their time (is "
                 "/usr/bin/time, Debian's package 'time', installed?): " + done.stderr[-300:])
    return (wall, max(c for _, c, _ in ranks), ranks[0][2],
            max((m for _, _, m in ranks[1:]), default=0.0))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--triangles", type=int, default=1_000_000)
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    p.add_argument("--json")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        stl, small = tmp / "sheet.stl", tmp / "small.stl"
        n_tri = write_sheet(stl, args.triangles)
        write_sheet(small, 200)
        print(f"{n_tri} triangles, {os.path.getsize(stl) / 2**20:.0f} MiB of binary STL")
        stage_rows = print_rows(stages(stl))
        plain, meshed, warm = config(tmp, None), config(tmp, stl), config(tmp, small)
        run_rows = []
        for ranks in args.ranks:
            run(plain, ranks, tmp / "warm")  # numba's cache, for each kind of run
            plain_run = run(plain, ranks, tmp / "out")
            run(warm, ranks, tmp / "warm")
            load = os.getloadavg()[0]
            mesh_run = run(meshed, ranks, tmp / "out")
            row = {"ranks": ranks}
            for what, i, unit in (("wall", 0, "s"), ("cpu", 1, "s"), ("peak rank 0", 2, "MiB"),
                                  ("peak other", 3, "MiB")):
                row[f"{what} without ({unit})"] = f"{plain_run[i]:.1f}"
                row[f"{what} with ({unit})"] = f"{mesh_run[i]:.1f}"
            row["load"] = f"{(load + os.getloadavg()[0]) / 2:.1f}"
            run_rows.append(row)
        run_rows = print_rows(run_rows)
    write_json(args.json, {"triangles": n_tri, "stages": stage_rows, "runs": run_rows})


if __name__ == "__main__":
    main()
