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

import numpy as np

_INT_TYPECODES = frozenset("bBhHiIlLqQ")


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


def to_int64_array(obj: object) -> np.ndarray:
    """Array-like input as a contiguous 1-D int64 array.

    Lists and tuples are handled by the callers' own loops; this covers the
    buffer types.  uint64 values above 2**63-1 wrap to negative ids, which are
    never delimiters, so nothing can match by accident.
    """
    if isinstance(obj, np.ndarray):
        arr = obj
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
    if arr.dtype.kind not in "iu":
        raise TypeError(f"token ids must be integers; got an array of dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"token ids must be one-dimensional; got an array of shape {arr.shape}")
    if arr.dtype == np.int64 and arr.flags.c_contiguous:
        return arr
    return np.ascontiguousarray(arr, dtype=np.int64) if arr.dtype != np.uint64 else arr.view(np.int64).copy()


def to_int_list(obj: object) -> list[int] | tuple[int, ...]:
    """Input as a sequence of Python ints (the pure-Python engine's form)."""
    if type(obj) is list or type(obj) is tuple:
        seq = obj
    elif isinstance(obj, range):
        return list(obj)
    elif isinstance(obj, (list, tuple)):
        seq = obj
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


def to_int32_array(obj: object, what: str) -> np.ndarray:
    """Batch API input: a 1-D integer array as contiguous int32."""
    if isinstance(obj, np.ndarray):
        arr = obj
    elif isinstance(obj, (list, tuple, range)):
        arr = np.asarray([index_of(i, x) for i, x in enumerate(obj)], dtype=np.int64)
    else:
        raise TypeError(f"{what} must be a NumPy integer array, not {type(obj).__name__}")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{what} must be integers; got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional; got shape {arr.shape}")
    if arr.dtype == np.int32 and arr.flags.c_contiguous:
        return arr
    if arr.size and (arr.max() > np.iinfo(np.int32).max or arr.min() < np.iinfo(np.int32).min):
        # Out-of-range ids can never be delimiters; map them to -1 rather than wrapping.
        big = (arr > np.iinfo(np.int32).max) | (arr < np.iinfo(np.int32).min)
        arr = np.where(big, -1, arr)
    return np.ascontiguousarray(arr, dtype=np.int32)
