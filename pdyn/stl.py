"""STL files (ASCII and binary): their triangles as an array (T, 3, 3) of corner coordinates.

Binary STL: an 80-byte header, a little-endian uint32 triangle count n, then n records of 50
bytes (normal, three corners as float32, a 2-byte attribute); a file of 84 + 50 n bytes is
binary even when its header starts with ``solid``. ASCII STL: ``solid``, then ``facet normal
… / outer loop / vertex x y z (×3) / endloop / endfacet`` blocks, ``endsolid`` (one or more
solids). The stored normals are ignored (pdyn computes its own from the corners). A file that
is neither, truncated, or holds no triangle is refused with a one-line :class:`StlError`, and
so is a path that is not a regular file (a FIFO, a device such as ``/dev/zero``, a folder),
before anything is read.

Units: whatever the file's (scaled by the caller).
"""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np


class StlError(ValueError):
    """An unreadable or malformed STL file; ``str()`` is one line."""


_RECORD = np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attr", "<u2")])


def read_stl(path: str | Path) -> np.ndarray:
    """The triangles of the STL file ``path`` (ASCII or binary) as float64 (T, 3, 3)."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):  # a FIFO would wait for a writer, a device never end
            raise StlError(f"not a regular file ({_kind(mode)}): give an STL file")
        raw = path.read_bytes()
    except OSError as exc:
        raise StlError(f"cannot read ({exc.strerror})") from None
    if len(raw) >= 84:
        n = int(np.frombuffer(raw, "<u4", 1, 80)[0])
        if len(raw) == 84 + 50 * n:
            if n == 0:
                raise StlError("binary STL with no triangles")
            rec = np.frombuffer(raw, _RECORD, n, 84)
            return rec["corners"].astype(np.float64)
    if raw.lstrip()[:5].lower() != b"solid":
        if len(raw) >= 84:
            n = int(np.frombuffer(raw, "<u4", 1, 80)[0])
            raise StlError(f"binary STL of {len(raw)} bytes, but its header counts {n} "
                           f"triangles ({84 + 50 * n} bytes): truncated or damaged")
        raise StlError(f"not an STL file ({len(raw)} bytes: neither 'solid …' text nor a "
                       "binary header)")
    return _ascii(raw)


def _kind(mode: int) -> str:
    """What a file that is not a regular file is (``os.stat`` mode)."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"


def _ascii(raw: bytes) -> np.ndarray:
    """The triangles of an ASCII STL text."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as exc:
        raise StlError(f"ASCII STL with a non-ASCII byte at offset {exc.start} (and not a "
                       "binary STL either: truncated?)") from None
    corners = []
    expect = "solid"
    count = 0
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words:
            continue
        head = words[0].lower()

        def bad(why: str):
            return StlError(f"ASCII STL line {number}: {why} (got {line.strip()[:40]!r})")

        if expect == "solid":
            if head != "solid":
                raise bad("expected 'solid'")
            expect = "facet"
        elif expect == "facet":
            if head == "endsolid":
                expect = "solid"
            elif head == "facet":
                expect = "outer"
            else:
                raise bad("expected 'facet' or 'endsolid'")
        elif expect == "outer":
            if words[:2] != ["outer", "loop"]:
                raise bad("expected 'outer loop'")
            expect, count = "vertex", 0
        elif expect == "vertex":
            if head != "vertex" or len(words) != 4:
                raise bad("expected 'vertex x y z'")
            try:
                corners.append([float(w) for w in words[1:]])
            except ValueError:
                raise bad("a vertex coordinate is not a number") from None
            count += 1
            if count == 3:
                expect = "endloop"
        elif expect == "endloop":
            if head != "endloop":
                raise bad("expected 'endloop' after three vertices")
            expect = "endfacet"
        elif expect == "endfacet":
            if head != "endfacet":
                raise bad("expected 'endfacet'")
            expect = "facet"
    if expect not in ("solid", "facet"):
        raise StlError(f"ASCII STL ends inside a facet (expected {expect!r}): truncated")
    if expect == "facet":
        raise StlError("ASCII STL ends without 'endsolid': truncated")
    if not corners:
        raise StlError("STL with no triangles")
    return np.array(corners, float).reshape(-1, 3, 3)


def write_stl(path: str | Path, triangles, binary: bool = True, name: str = "pdyn") -> None:
    """Write triangles (T, 3, 3) as an STL file (binary, or ASCII with ``binary=False``);
    normals from the corners' order (right-handed)."""
    tri = np.asarray(triangles, float).reshape(-1, 3, 3)
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.divide(n, length, out=np.zeros_like(n), where=length > 0)
    if binary:
        rec = np.zeros(tri.shape[0], _RECORD)
        rec["normal"], rec["corners"] = n, tri
        head = name.encode()[:80].ljust(80, b" ")
        Path(path).write_bytes(head + np.uint32(tri.shape[0]).tobytes() + rec.tobytes())
        return
    lines = [f"solid {name}"]
    for normal, corners in zip(n.tolist(), tri.tolist()):
        lines += ["  facet normal " + " ".join(map(repr, normal)), "    outer loop"]
        lines += ["      vertex " + " ".join(map(repr, c)) for c in corners]
        lines += ["    endloop", "  endfacet"]
    Path(path).write_text("\n".join(lines + [f"endsolid {name}", ""]))
