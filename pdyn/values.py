"""Checks of single values — numbers, integers, choices, flags, text, vectors, arrays — the one
set used by the config (``pdyn.config``), file reading (``pdyn.io.schema``) and the broad-phase
parameters (``pdyn.broadphase.params``). A failure is :class:`BadValue`, one line
``<name> = <value>: <why>``; each caller turns it into its own error."""

from __future__ import annotations

import math

import numpy as np

_NUMBER = (int, float, np.integer, np.floating)
_BOOL = (bool, np.bool_)


class BadValue(ValueError):
    """A value that fails its check; ``str()`` is ``<name> = <value>: <why>`` on one line."""

    def __init__(self, name: str, value, why: str):
        self.name, self.value, self.why = name, value, why
        super().__init__(f"{name} = {short(value)}: {why}")


def short(value) -> str:
    """``repr`` of a value on one line, at most 60 characters (bytes decoded, numpy as
    Python values)."""
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    if isinstance(value, (np.ndarray, np.generic)):
        value = value.tolist()
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _bound(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _range(v, above, lo, hi) -> str | None:
    """Why ``v`` is outside (``above``, or [``lo``, ...``hi``]), or None."""
    low = above is not None and not v > above or lo is not None and not v >= lo
    if not (low or (hi is not None and not v <= hi)):
        return None
    left = f"({_bound(above)}" if above is not None else (f"[{_bound(lo)}" if lo is not None
                                                          else None)
    if left is not None and hi is not None:
        return f"must be in {left}, {_bound(hi)}]"
    if hi is not None:
        return f"must be <= {_bound(hi)}"
    return f"must be > {_bound(above)}" if above is not None else f"must be >= {_bound(lo)}"


def number(name: str, value, *, above=None, lo=None, hi=None, note: str = "") -> float:
    """A finite number (booleans are not numbers) > ``above``, >= ``lo``, <= ``hi``, as a
    float; ``note`` is added to a range failure."""
    if isinstance(value, _BOOL) or not isinstance(value, _NUMBER):
        raise BadValue(name, value, "expected a number")
    try:
        v = float(value)
    except OverflowError:
        v = math.inf
    if not math.isfinite(v):
        raise BadValue(name, value, "must be finite")
    why = _range(v, above, lo, hi)
    if why:
        raise BadValue(name, value, f"{why} ({note})" if note else why)
    return v


def integer(name: str, value, *, lo=None, hi=None) -> int:
    """An integer (booleans are not integers) in [``lo``, ``hi``], as an int."""
    if isinstance(value, _BOOL) or not isinstance(value, (int, np.integer)):
        raise BadValue(name, value, "expected an integer")
    why = _range(value, None, lo, hi)
    if why:
        raise BadValue(name, value, why)
    return int(value)


def choice(name: str, value, choices) -> str:
    """One of the strings ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise BadValue(name, value, f"choose from {', '.join(choices)}")
    return value


def flag(name: str, value) -> bool:
    """True or false."""
    if not isinstance(value, _BOOL):
        raise BadValue(name, value, "expected true or false")
    return bool(value)


def text(name: str, value) -> str:
    """A string (bytes decoded)."""
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    if not isinstance(value, str):
        raise BadValue(name, value, "expected a string")
    return value


def _has_bool(value) -> bool:
    """True if a (nested) list holds a boolean: numpy would read it as 0 or 1."""
    if isinstance(value, (list, tuple)):
        return any(_has_bool(v) for v in value)
    return isinstance(value, _BOOL) or (isinstance(value, np.ndarray) and value.dtype == bool)


def numbers(name: str, value, what: str) -> np.ndarray:
    """``value`` as a float array, refusing strings, booleans and ragged lists."""
    try:
        arr = np.asarray(value)
    except ValueError:  # ragged nested lists
        raise BadValue(name, value, f"expected {what}") from None
    if arr.dtype.kind not in "iuf" or _has_bool(value):
        raise BadValue(name, value, f"expected {what}")
    return arr.astype(float)


def vector(name: str, value, n: int = 3) -> tuple:
    """``n`` finite numbers, as a tuple of floats."""
    arr = numbers(name, value, f"{n} numbers")
    if arr.shape != (n,):
        raise BadValue(name, value, f"expected {n} numbers")
    if not np.isfinite(arr).all():
        raise BadValue(name, value, "must be finite")
    return tuple(float(x) for x in arr)


def axes(name: str, value) -> tuple:
    """A value per axis given as a table of axes (``{z = 1e3}``: keys x, y, z) or as 3 values
    (None: not given): the 3 values, each still to check."""
    if isinstance(value, dict):
        for k in value:
            if k not in ("x", "y", "z"):
                raise BadValue(f"{name}.{k}", value[k], "unknown axis (x, y or z)")
        return tuple(value.get(k) for k in "xyz")
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        raise BadValue(name, value, "expected a table of axes ({z = 1e3}) or 3 values "
                       "(None: not given)")
    return tuple(value)


def integers(name: str, value, n: int | None = None, *, lo=None) -> np.ndarray:
    """A list of integers (``n`` of them if given), each >= ``lo``, as an int64 array; a value
    out of range is named by its index."""
    want = f"expected {n or 'a list of'} integers"
    try:
        arr = np.atleast_1d(np.asarray(value))
    except ValueError:  # ragged nested lists
        raise BadValue(name, value, want) from None
    if (arr.ndim != 1 or arr.dtype.kind not in "iu" or _has_bool(value)
            or (n is not None and arr.shape != (n,))):
        raise BadValue(name, value, want)
    for k, x in enumerate(arr.tolist()):
        if lo is not None and x < lo:
            raise BadValue(f"{name}[{k}]", x, f"must be >= {lo}")
    return arr.astype(np.int64)


def choices(name: str, value, options, n: int = 3) -> tuple:
    """``n`` strings (bytes decoded), each one of ``options``."""
    items = list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value]
    items = [x.decode(errors="replace") if isinstance(x, bytes) else x for x in items]
    if len(items) != n or any(not isinstance(x, str) or x not in options for x in items):
        raise BadValue(name, value, f"expected {n} of {', '.join(options)}")
    return tuple(items)


def array(name: str, value, shape_tail: tuple, *, positive=False) -> np.ndarray:
    """An (N, *shape_tail) float array of finite values (> 0 with ``positive``); a bad value
    is named by its row."""
    arr = numbers(name, value, "an array of numbers")
    if arr.ndim != 1 + len(shape_tail) or arr.shape[1:] != shape_tail:
        tail = "".join(", %d" % s for s in shape_tail)
        raise BadValue(name, value, f"expected shape (N{tail}), got {arr.shape}")
    for bad, why in ((~np.isfinite(arr), "must be finite"),
                     (~(arr > 0) if positive else None, "must be > 0")):
        if bad is not None and bad.any():
            idx = np.argwhere(bad)[0]
            raise BadValue(f"{name}[{idx[0]}]", float(arr[tuple(idx)]), why)
    return arr
