"""``benchmarks/packings.py``: its ``--quick`` scene (300 spheres, bidisperse 1:3, poured) run
in this process on one rank by the benchmark's own worker comes to rest with a big sphere
holding more than 16 contacts and consistent contact-history records, and the half-way
checkpoint continued gives the same bits. (The multi-rank identity of such packings is
``tests/mpi/test_packings_mpi.py``; the benchmark itself runs every rank count under
mpiexec.)"""


import numpy as np
import pytest

from pdyn.parallel import SerialComm

from .conftest import benchmark_script


@pytest.fixture(scope="module")
def packings():
    return benchmark_script("packings")


@pytest.fixture(scope="module")
def at_rest(packings, tmp_path_factory):
    """The quick scene run to rest on one rank (the benchmark's reference run)."""
    spec = {"scene": "pour3", "n": 300, "seed": 0, "steps": None, "settle_speed": 0.01,
            "max_time": 4.0, "folder": str(tmp_path_factory.mktemp("rest") / "out")}
    return packings.worker(spec, comm=SerialComm())


def test_quick_packing_comes_to_rest_with_many_contacts(packings, at_rest):
    r, state = at_rest, at_rest["state"]
    assert r["spheres"] == 300 and np.array_equal(state["gid"], np.arange(300))
    assert r["time"] > packings.POUR_TIME and r["rms_speed"] < 0.01  # poured and at rest
    assert r["most_contacts"] > 16  # beyond the old cap of the contact history
    big = packings.big_count("pour3", 300)
    assert big == 11 and r["big_contacts"] > 12
    assert 3.0 < r["mean_Z"] < 7.0 and r["no_contact"] < 0.1  # a frictional packing
    # the records: counts add up, each sphere's keys ascend, sphere contacts come in pairs
    count, keys = state["history_count"], state["history_key"]
    assert count.sum() == keys.size == state["history_spring"].shape[0]
    owner = np.repeat(state["gid"], count)
    assert (np.diff(keys)[np.diff(owner) == 0] > 0).all()
    sphere = keys < packings.WALL_KEY_BASE
    pairs = {(int(a), int(b) - 1) for a, b in zip(owner[sphere], keys[sphere])}
    assert pairs == {(b, a) for a, b in pairs}
    assert count.max() == r["most_contacts"] and sphere.sum() == round(r["mean_Z"] * 300)


@pytest.mark.slow  # the run to rest twice more (the fast lane's restarts are tests/io's)
def test_quick_packing_restart_is_bit_identical(packings, at_rest, tmp_path):
    steps = at_rest["steps"]
    half = steps // 2
    base = {"scene": "pour3", "n": 300, "seed": 0, "steps": steps}
    again = packings.worker({**base, "checkpoint_every": half, "folder": str(tmp_path / "a")},
                            comm=SerialComm())
    assert packings.same(again["state"], at_rest["state"])  # in chunks or in one go
    ckpt = tmp_path / "a" / "checkpoints" / f"ckpt_{half:08d}.h5"
    cont = packings.worker({**base, "restart": str(ckpt), "folder": str(tmp_path / "b")},
                           comm=SerialComm())
    assert cont["steps"] == steps and packings.same(cont["state"], at_rest["state"])
    assert cont["checksum"] == at_rest["checksum"]
