"""The numba cache of pdyn's kernels is stamped with the whole package (``pdyn._jit``): a kernel
that inlines a function from another file is recompiled when that file changes."""

import shutil

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
