"""The numba cache of pdyn's kernels is stamped with the whole package (``pdyn._jit``): a kernel
that inlines a function from another file is recompiled when that file changes."""

import pickle
import shutil
import sys

import numba
import pytest
from numba.core.caching import IndexDataCacheFile

from pdyn import _jit
from pdyn.dynamics import contact, laws


def test_kernels_are_stamped_with_the_package():
    for kernel in (contact._pass, laws.linear):
        locator = kernel._cache._impl.locator
        assert type(locator).__name__.startswith("Pdyn")
        assert locator.get_source_stamp() == _jit.PACKAGE_STAMP


def test_a_change_in_any_file_changes_the_stamp(tmp_path):
    root = tmp_path / "pdyn"
    shutil.copytree(_jit.PACKAGE_DIR, root, ignore=shutil.ignore_patterns("__pycache__"))
    before = _jit.package_stamp(root)
    assert before == _jit.PACKAGE_STAMP
    laws_py = root / "dynamics" / "laws.py"
    laws_py.write_text(laws_py.read_text() + "\n# changed\n")
    assert _jit.package_stamp(root) != before


def _index_naming_a_removed_type(path, stamp):
    """A numba cache index at ``path`` whose one entry names a class that no longer exists (as
    one written before a record type of pdyn was removed)."""
    module = sys.modules[__name__]
    module.Removed = type("Removed", (), {"__module__": __name__})
    try:
        data = pickle.dumps((stamp, {("sig", module.Removed): "old.1.nbc"}))
    finally:
        del module.Removed
    with open(path, "wb") as f:
        pickle.dump(numba.__version__, f)
        f.write(data)


def test_an_index_of_another_pdyn_version_that_names_a_removed_type_is_a_miss(tmp_path):
    _index_naming_a_removed_type(tmp_path / "kernel.nbi", "an older package stamp")
    index = IndexDataCacheFile(str(tmp_path), "kernel", _jit.PACKAGE_STAMP)
    assert index._load_index() == {}
    index.save(("sig",), "machine code")  # written anew, and read back
    assert index.load(("sig",)) == "machine code"


def test_an_unreadable_index_of_another_package_is_left_to_numba(tmp_path):
    _index_naming_a_removed_type(tmp_path / "kernel.nbi", (1.0, 2))
    index = IndexDataCacheFile(str(tmp_path), "kernel", (1.0, 2))
    with pytest.raises(AttributeError):
        index._load_index()
