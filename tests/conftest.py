"""Shared helpers of the command-line tests: run ``pdyn.cli.main`` in-process and check the
one-line error contract (exit 2, one line on stderr, the field named, nothing written)."""

import gc
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

# Python's bytecode cached, as numba's kernels are, even where PYTHONDONTWRITEBYTECODE says not
# to (container images set it): without the cache each test process and each subprocess (a
# CLI run, a rank) compiles pdyn's modules and pytest rewrites every test module again (4 of
# the fast lane's ~70 s on two cores). Before pdyn is imported here, and for the subprocesses.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

from pdyn.cli import main  # noqa: E402

from .jit_lock import cache_the_tests_kernels, install as install_jit_lock  # noqa: E402


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def pytest_report_header(config):
    """One line naming the fast lane (tests/lanes.py), unless a selection is already given."""
    if not config.option.markexpr:
        return ('pdyn: development loop: python -m pytest -m "not slow" (tests/lanes.py); '
                "everything, as CI: python -m pytest")


# The longest tests (each runs a whole pytest session under mpiexec), longest first: each
# starts its pytest-xdist worker's share, so that the workers finish together rather than one
# running them all in turn while the others wait at the end.
LONGEST_FIRST = tuple(f"tests/test_mpi_suite.py::test_mpi_suite[{k}]"
                      for k in ("2-fast", "4", "2-slow"))


#: the cyclic garbage collector's thresholds in a test process (``gc.set_threshold``; Python's
#: are 700, 10, 10): a test process holds a few hundred thousand long-lived objects (numba's
#: types and loaded kernels, the test modules), which every full collection walks; larger young
#: generations, and what collection imported frozen (:func:`pytest_collection_finish`), leave
#: few full collections.
GC_THRESHOLDS = (5000, 20, 10)


def pytest_addoption(parser):
    parser.addoption("--reverse", action="store_true",
                     help="run the collected tests in reverse order (tests/test_mpi_suite.py: "
                          "two multi-rank sessions that run at the same time start at opposite "
                          "ends, so that on a fresh numba cache they compile different kernels "
                          "instead of one waiting for the other's)")


def pytest_configure(config):
    """Under ``mpiexec`` (``--with-mpi``) each rank is one pytest process: the ``-n auto`` of
    pyproject.toml (pytest-xdist workers) is turned off there. In every test process a kernel
    is compiled once, not by each worker or rank at the same time (tests/jit_lock.py), the
    tests' own kernels are cached, the tests' subprocesses import the pdyn under test
    (:func:`share_the_tested_package`) and garbage is collected as :data:`GC_THRESHOLDS`
    says."""
    gc.set_threshold(*GC_THRESHOLDS)
    install_jit_lock()
    cache_the_tests_kernels()
    share_the_tested_package()
    if config.getoption("with_mpi", False) and hasattr(config.option, "numprocesses"):
        config.option.numprocesses = 0
        config.option.dist = "no"


def pytest_collection_finish(session):
    """The objects alive once the tests are collected (the imported modules, numba's types)
    are left out of every later garbage collection (``gc.freeze``; :data:`GC_THRESHOLDS`)."""
    gc.freeze()


def share_the_tested_package() -> None:
    """Puts the folder of the pdyn under test first on the ``PYTHONPATH`` of every subprocess
    the tests start (``python -m pdyn`` in a temporary folder, the ranks under ``mpiexec``, a
    Slurm job), so that they run that pdyn, not another installed copy (after ``pip install
    .`` the one in site-packages), and load the kernels the test processes compiled: numba
    caches a kernel by its source file, so a copy compiled every kernel again, on each rank."""
    import pdyn

    root = str(Path(pdyn.__file__).resolve().parent.parent)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])


def pytest_collection_modifyitems(session, config, items):
    """Puts the tests named in ``LONGEST_FIRST`` at the front of the workers' shares in turn
    (pytest-xdist's ``worksteal`` hands each worker a contiguous share of the run to start
    with; the k-th longest starts share k mod workers); with ``--reverse`` all in reverse."""
    if config.getoption("reverse"):
        items.reverse()
    longest = sorted((i for i in items if i.nodeid in LONGEST_FIRST),
                     key=lambda i: LONGEST_FIRST.index(i.nodeid))
    rest = [i for i in items if i.nodeid not in LONGEST_FIRST]
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    shares = [rest[k * len(rest) // workers:(k + 1) * len(rest) // workers]
              for k in range(workers)]
    for k, item in enumerate(longest):
        shares[k % workers].insert(k // workers, item)
    items[:] = [i for share in shares for i in share]


def benchmark_script(name: str):
    """The program ``benchmarks/<name>.py`` imported as a module (the folder on the path for
    its own imports)."""
    import importlib.util
    import sys

    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"{name}_script", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def listing(folder: Path) -> dict:
    """Every file and folder below ``folder`` (links not followed) -> (size, mtime)."""
    out = {}
    for p in sorted(Path(folder).rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(folder))] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture
def cli(tmp_path, capsys):
    """``cli(args, cwd=tmp_path)`` runs ``pdyn.cli.main(args)`` in ``cwd`` (``args`` made
    strings); returns (exit code, stdout, stderr). The tests' one way to run the command line
    in-process; a run that needs its own process (signals, mpiexec, the entry point) is a
    subprocess."""

    def run(args, cwd=tmp_path):
        old = os.getcwd()
        os.chdir(cwd)
        try:
            code = main([str(a) for a in args])
        finally:
            os.chdir(old)
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def assert_user_error(code, err, *needles):
    """Exit code 2, exactly one line on stderr starting ``pdyn: error:``, holding every
    needle, and no traceback."""
    lines = err.strip().splitlines()
    assert code == 2, f"exit code {code}, stderr: {err}"
    assert len(lines) == 1 and lines[0].startswith("pdyn: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"


@contextmanager
def tmpfs(where: Path, options: str):
    """A tmpfs mounted at the new folder ``where`` with ``options`` (``size=256k``, ``ro``);
    needs root: skips the test where mounting is not allowed."""
    where.mkdir()
    try:
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                             capture_output=True, timeout=10)
    except OSError as exc:
        pytest.skip(f"cannot mount: {exc}")
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {res.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], capture_output=True, timeout=10)


#: the venv's ``mpiexec`` (the 'mpich' wheel), for tests that run pdyn on several ranks
MPIEXEC = Path(sys.executable).parent / "mpiexec"


def mpiexec_pdyn(ranks: int, args, cwd, timeout: float = 180):
    """``mpiexec -n ranks python -m pdyn ARGS`` in ``cwd``: (exit code, stdout, stderr). The
    timeout guards against a hang (it measures nothing): then the whole job is killed (its
    process group, so no rank is left behind) and the test fails."""
    import signal

    if not MPIEXEC.exists():
        pytest.skip(f"no mpiexec next to {sys.executable} (install the 'mpich' wheel)")
    env = dict(os.environ, MPIR_CVAR_ENABLE_HEAVY_YIELD="1", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([str(MPIEXEC), "-n", str(ranks), sys.executable, "-m", "pdyn",
                             *map(str, args)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"mpiexec -n {ranks} pdyn {' '.join(map(str, args))}: no end within "
                    f"{timeout} s (a hang); stderr: {err[-2000:]}")
    return proc.returncode, out, err
