"""Token-id input checking shared by both engines.

Accepted: list, tuple, range, array.array with an integer typecode, NumPy
arrays of any integer dtype, and integer memoryviews.  Anything else, or an
element that is not an integer, raises TypeError; a multi-dimensional array
raises ValueError.  Ids outside int64 (or negative ones) are valid input that
simply never match a delimiter.
"""
from __future__ import annotations

import array
import operator

from typing import Any

import numpy as np

_INT_TYPECODES = frozenset("bBhHiIlLqQ")
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
# Batch slots and per-step token counts are int32 in the engines.
MAX_CAPACITY = _INT32_MAX


def bad_element(index: int, value: object) -> TypeError:
    return TypeError(
        f"token ids must be integers; element {index} is {type(value).__name__}"
    )


def bad_container(obj: object) -> TypeError:
    return TypeError(
        "token ids must be a list, tuple, range, array.array, NumPy integer array "
        f"or integer memoryview, not {type(obj).__name__}"
    )


def index_of(index: int, value: object) -> int:
    """operator.index with our error message (rejects float, None, str)."""
    try:
        return operator.index(value)
    except TypeError:
        raise bad_element(index, value) from None


def plain_ids(obj: Any) -> Any:
    """A list or tuple subclass as the plain list or tuple of the elements it
    stores, a range as a list.

    The subclass's own ``__len__``, ``__getitem__`` and ``__iter__`` are never
    called: a length that lies cannot size a buffer, and both engines read the
    same elements.  Exact lists and tuples are returned as they are.
    """
    if type(obj) is list or type(obj) is tuple:
        return obj
    if isinstance(obj, range):
        return list(obj)
    if isinstance(obj, list):
        return list.__getitem__(obj, slice(None))
    if isinstance(obj, tuple):
        return tuple.__getitem__(obj, slice(None))
    return obj


def _behaved(arr: np.ndarray, dtype: type) -> np.ndarray:
    """``arr`` as a C-contiguous, aligned, native-order array of ``dtype``,
    copied only when it is not one already (the engines read it raw)."""
    if arr.dtype == dtype and arr.flags.c_contiguous and arr.flags.aligned:
        return arr
    out = np.ascontiguousarray(arr, dtype=dtype)
    return out if out.flags.aligned else out.copy()


def to_int64_array(obj: object) -> np.ndarray:
    """Array-like input as a contiguous 1-D int64 array.

    Lists and tuples are handled by the callers' own loops; this covers the
    buffer types.  uint64 values above 2**63-1 wrap to negative ids, which are
    never delimiters, so nothing can match by accident.
    """
    if isinstance(obj, np.ndarray):
        arr = _plain_array(obj, "token ids")
    elif isinstance(obj, array.array):
        if obj.typecode not in _INT_TYPECODES:
            raise TypeError(f"token ids must be integers; array typecode {obj.typecode!r} is not")
        arr = np.frombuffer(obj, dtype=np.dtype(obj.typecode)) if len(obj) else np.zeros(0, np.int64)
    elif isinstance(obj, memoryview):
        try:
            arr = np.asarray(obj)
        except (TypeError, ValueError):
            raise TypeError(f"token ids must be integers; memoryview format {obj.format!r} is not") from None
    else:
        raise bad_container(obj)
    _check_int_vector(arr, "token ids")
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8:
        # (wrapped, in native order: never delimiters, so never a false match)
        return arr.astype(np.uint64).view(np.int64)
    return _behaved(arr, np.int64)


def _check_int_vector(arr: np.ndarray, what: str) -> None:
    """TypeError unless an integer dtype, ValueError unless one-dimensional."""
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{what} must be integers; got an array of dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional; got an array of shape {arr.shape}")


def _plain_array(obj: np.ndarray, what: str) -> np.ndarray:
    """A NumPy array as a base-class ndarray; masked arrays are refused.

    A masked array's hidden entries have no id to give, and treating them as
    their underlying data would silently route tokens the caller masked out.
    """
    if isinstance(obj, np.ma.MaskedArray):
        raise TypeError(f"{what} must not be a masked array; pass arr.compressed() or arr.filled(value)")
    return obj if type(obj) is np.ndarray else np.asarray(obj)


def to_int_list(obj: object) -> list[int] | tuple[int, ...]:
    """Input as a sequence of Python ints (the pure-Python engine's form)."""
    if type(obj) is list or type(obj) is tuple:
        seq = obj
    elif isinstance(obj, (list, tuple, range)):
        seq = plain_ids(obj)
    elif isinstance(obj, (str, bytes, bytearray)) or obj is None:
        raise bad_container(obj)
    else:
        return to_int64_array(obj).tolist()
    for i, x in enumerate(seq):
        if type(x) is not int:
            break
    else:
        return seq
    return [x if type(x) is int else index_of(i, x) for i, x in enumerate(seq)]


def to_int32_array(obj: object, what: str, ids: bool = True) -> np.ndarray:
    """Batch API input: a 1-D integer array as contiguous int32.

    ``ids=True`` (token ids): values outside int32 can never be delimiters
    and become -1.  ``ids=False`` (slots, offsets): such a value is an error
    that names it.
    """
    if isinstance(obj, np.ndarray):
        arr = _plain_array(obj, what)
    elif isinstance(obj, (list, tuple, range)):
        vals = [index_of(i, x) for i, x in enumerate(plain_ids(obj))]
        for i, v in enumerate(vals):
            if not _INT32_MIN <= v <= _INT32_MAX:
                if not ids:
                    raise ValueError(f"{what}[{i}] = {v} is out of range (at most {_INT32_MAX})")
                vals[i] = -1
        arr = np.asarray(vals, dtype=np.int64)
    else:
        raise TypeError(f"{what} must be a NumPy integer array, not {type(obj).__name__}")
    _check_int_vector(arr, what)
    if arr.dtype == np.int32 and arr.flags.c_contiguous and arr.flags.aligned:
        return arr
    if arr.size and (arr.max() > _INT32_MAX or arr.min() < _INT32_MIN):
        big = (arr > _INT32_MAX) | (arr < _INT32_MIN)
        if not ids:
            i = int(np.flatnonzero(big)[0])
            raise ValueError(f"{what}[{i}] = {int(arr[i])} is out of range (at most {_INT32_MAX})")
        # Out-of-range ids can never be delimiters; map them to -1 rather than wrapping.
        arr = np.where(big, -1, arr)
    return _behaved(arr, np.int32)


def check_capacity(capacity: object, minimum: int) -> int:
    """A batch or result capacity as an int in [minimum, MAX_CAPACITY]."""
    if isinstance(capacity, bool):
        raise TypeError("capacity must be an int, not bool")
    try:
        value = operator.index(capacity)
    except TypeError:
        raise TypeError(f"capacity must be an int, not {type(capacity).__name__}") from None
    if not minimum <= value <= MAX_CAPACITY:
        raise ValueError(f"capacity must be between {minimum} and {MAX_CAPACITY}, not {value}")
    return value


_RESULT_DTYPES = (bool, bool, bool, bool, bool, np.uint8, np.uint8)


def result_arrays(capacity: int) -> list[np.ndarray]:
    """The seven output arrays of a batch step, as views of one zeroed block.

    Views own no data, so NumPy refuses to resize them: the compiled engine
    writes through pointers taken once, which must stay valid.
    """
    block = np.zeros(len(_RESULT_DTYPES) * capacity, dtype=np.uint8)
    return [block[k * capacity:(k + 1) * capacity].view(dt) for k, dt in enumerate(_RESULT_DTYPES)]


def snapshot(ids: Any) -> Any:
    """A private copy of a delta, so a returned ``TokenSplit`` never changes.

    Immutable inputs are kept; anything the engine would reject is passed
    through for it to raise its usual error.
    """
    kind = type(ids)
    if kind is list:
        return ids[:]
    if kind is tuple or kind is range:
        return ids
    if kind is np.ndarray:
        # Signed ids: the copy is made in the engine's int64 layout, so the
        # engine reads it without converting again (one pass, as before).
        return ids.astype(np.int64) if ids.dtype.kind == "i" else ids.copy()
    if kind is array.array:
        return ids[:]
    if isinstance(ids, memoryview) and ids.ndim == 1:
        return ids.tolist()
    if isinstance(ids, (list, tuple)):
        return list(plain_ids(ids))
    return ids
