"""The import graph of ``pdyn``: every module sits on a layer and imports only from layers below
it (or from its own package), and no modules import each other in a loop. Imports inside
functions count too, so a cycle cannot hide behind a lazy import. A new module must be given
a layer here."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pdyn"

#: bottom to top; a name stands for the module or package and everything below it
LAYERS = [
    ("pdyn._jit", "pdyn.version", "pdyn.interrupt", "pdyn.values", "pdyn.heap",
     "pdyn.analysis", "pdyn.timers", "pdyn.clock"),  # numba options; version; signals; value
    # checks; the C heap's free pages; fits and profiles of output arrays (numpy only: it runs
    # nothing); seconds per phase; the time of a step
    ("pdyn.cell_index", "pdyn.lattice", "pdyn.geometry", "pdyn.sizes", "pdyn.regions",
     "pdyn.scenefile"),  # positions to cells; lattices of cells over a box; the sphere–sphere
    # overlap predicate and contact normal; size distributions; insertion regions; spheres
    # read from a file
    ("pdyn.placement",),  # particles generated per lattice cell, non-overlapping placement
    # triangle-mesh walls, a package whose modules have layers of their own:
    ("pdyn.mesh.frame", "pdyn.mesh.shapes", "pdyn.mesh.place", "pdyn.stl", "pdyn.wallshapes",
     "pdyn.programs"),
    # a mesh's frame; test surfaces; where a mesh's arrays live; STL files; wall surfaces in
    # numpy (distances, drawing); walls' programs of time
    ("pdyn.mesh.geometry",),  # the sphere–triangle geometry (closest feature, kept contacts)
    ("pdyn.mesh.grid", "pdyn.mesh.bundle"),  # the grid over triangles; meshes packed for kernels
    ("pdyn.mesh.model",),  # Mesh: welded triangles, adjacency, motion, grid
    ("pdyn.mesh",),  # the package's face (re-exports)
    ("pdyn.wallkinds",),  # one spec per wall kind: fields, table row, gaps, drawing, glued
    ("pdyn.zorder", "pdyn.particles", "pdyn.scenarios", "pdyn.walls", "pdyn.stageplan"),  # data; wall geometry
    ("pdyn.domain", "pdyn.broadphase", "pdyn.fields"),  # box and blocks (no MPI); contact
    # detection; continuum quantities from spheres and contacts (arrays in, arrays out)
    ("pdyn.config", "pdyn.dynamics", "pdyn.parallel", "pdyn.io", "pdyn.checks"),  # the pieces
    ("pdyn.initial", "pdyn.components", "pdyn.timestep", "pdyn.schedule", "pdyn.capture",
     "pdyn.reorder", "pdyn.stages"),  # the initial state; feature components set up; the time step; the
    # schedule; what writers read of the contacts; handles in their orders
    ("pdyn.assembly", "pdyn.observables"),  # build(): a run's parts; readings of a run
    ("pdyn.changing",),  # changes of a run between its steps (Simulation.change)
    ("pdyn.simulation",),  # the driver
    ("pdyn.restart", "pdyn.bench", "pdyn.validation"),  # build and run drivers
    ("pdyn.cli",),
    ("pdyn", "pdyn.__main__"),  # the package's face
]


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package at ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its file (functions included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:  # a name inside a module: the module
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def unit(name: str, layers=LAYERS) -> tuple[int, str]:
    """(layer, the table's name) for a module: the longest name in the table that holds it."""
    best = None
    for level, names in enumerate(layers):
        for u in names:
            if (name == u or name.startswith(u + ".")) and (best is None or len(u) > len(best[1])):
                best = (level, u)
    if best is None:
        raise LookupError(f"module {name} has no layer: add it to LAYERS in {__file__}")
    return best


def violations(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """Imports that do not go down a layer (inside one package they may stay level)."""
    bad = []
    for a, targets in sorted(graph.items()):
        la, ua = unit(a, layers)
        for b in sorted(targets):
            lb, ub = unit(b, layers)
            if not (lb < la or ub == ua):
                bad.append(f"{a} (layer {la}) imports {b} (layer {lb})")
    return bad


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Import loops (each as the modules on it), found by depth-first search."""
    state, stack, found = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                found.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return found


@pytest.fixture(scope="module")
def graph():
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_every_module_has_a_layer(graph):
    for name in graph:
        unit(name)


def test_imports_go_down(graph):
    assert violations(graph) == []


def test_no_import_cycle(graph):
    assert cycles(graph) == []


def test_the_checks_catch_an_upward_import_and_a_cycle(tmp_path):
    pkg = tmp_path / "pdyn"
    (pkg / "io").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "simulation.py").write_text("from .io import make_writers\n")
    (pkg / "io" / "__init__.py").write_text("from .checkpoint import read\n")
    (pkg / "io" / "checkpoint.py").write_text(
        "def read():\n    from ..simulation import Simulation\n    from .. import version\n")
    (pkg / "version.py").write_text("")
    known = modules(pkg)
    g = {name: imports(name, path, known) for name, path in known.items()}
    assert g["pdyn.io.checkpoint"] == {"pdyn.simulation", "pdyn.version"}
    io, sim = unit("pdyn.io")[0], unit("pdyn.simulation")[0]
    assert violations(g) == [
        f"pdyn.io.checkpoint (layer {io}) imports pdyn.simulation (layer {sim})"]
    assert cycles(g) == [["pdyn.io", "pdyn.io.checkpoint", "pdyn.simulation", "pdyn.io"]]


def private_imports(name: str, path: Path, known) -> list[str]:
    """Imports in ``name`` of a private name (``_x``) from another module of the package, or
    of a private module (``pkg._m``) from outside ``pkg``: what is shared must be public in the
    module that owns it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    bad = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [(f"{base}.{a.name}", None) if f"{base}.{a.name}" in known
                       else (base, a.name) for a in node.names]
        else:
            continue
        for module, item in targets:
            if not module.startswith("pdyn"):
                continue
            if item and item.startswith("_") and not item.startswith("__") and module != name:
                bad.append(f"{name} imports {item} from {module}")
            parts = module.split(".")
            for k, part in enumerate(parts):
                owner = ".".join(parts[:k])
                if part.startswith("_") and not part.startswith("__") and not (
                        name == owner or name.startswith(owner + ".")):
                    bad.append(f"{name} imports the private module {module}")
                    break
    return bad


def test_no_private_cross_module_import():
    known = modules()
    assert [b for name, path in known.items() for b in private_imports(name, path, known)] == []


def test_the_check_catches_a_private_import(tmp_path):
    pkg = tmp_path / "pdyn"
    (pkg / "broadphase").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_jit.py").write_text("")
    (pkg / "domain.py").write_text("def _helper():\n    pass\n")
    (pkg / "broadphase" / "__init__.py").write_text("")
    (pkg / "broadphase" / "_kernels.py").write_text("from .._jit import x\n")
    (pkg / "broadphase" / "base.py").write_text("from ._kernels import y\n")
    (pkg / "ghosts.py").write_text(
        "def f():\n    from .domain import _helper\n    from .broadphase._kernels import y\n")
    known = modules(pkg)
    found = {name: private_imports(name, path, known) for name, path in known.items()}
    assert found["pdyn.broadphase._kernels"] == [] and found["pdyn.broadphase.base"] == []
    assert found["pdyn.ghosts"] == ["pdyn.ghosts imports _helper from pdyn.domain",
                                    "pdyn.ghosts imports the private module "
                                    "pdyn.broadphase._kernels"]
