"""What both engines and the public result types share, in a leaf module.

It imports nothing of the package, so the compiled engine, the pure twin and
``reasoning_core.types`` all import it without an import circle:

- ``content_of``: a delta without its reasoning span;
- ``TOKEN_SPLIT``: the public ``TokenSplit`` class, registered by
  ``reasoning_core.types`` once it knows which backend's class is public (the
  package imports it before any engine runs), read by the pure engine;
- ``batch_result_repr``: the ``repr`` of either engine's ``BatchStepResult``;
- ``brief``, ``brief_names``: a caller's value, or list of names, as an
  error message shows it, cut short.
"""
from __future__ import annotations

import array
import reprlib
from typing import Sequence

__all__ = ["content_of", "batch_result_repr", "brief", "brief_names", "TOKEN_SPLIT"]

TOKEN_SPLIT: list = []


def content_of(seq: Sequence, d0: int, d1: int) -> Sequence:
    """``seq[:d0] + seq[d1:]``, as the same kind of sequence where it concatenates."""
    head, tail = seq[:d0], seq[d1:]
    if type(head) is list or type(head) is tuple or isinstance(head, (str, bytes, array.array)):
        return head + tail
    if hasattr(head, "dtype"):  # NumPy: + would add element-wise
        import numpy as np

        return np.concatenate([head, tail])
    # range, memoryview and other sequences without concatenation: a list.
    return [*head, *tail]


_RESULT_FIELDS = ("is_reasoning", "is_delimiter", "reasoning_ended", "in_reasoning", "is_held", "released", "completed")


def batch_result_repr(res: object, limit: int = 8) -> str:
    """``BatchStepResult(size=2, capacity=4, is_reasoning=[1, 0], ...)``: the
    ``size`` entries the last step wrote (the first ``limit``, then ``...``),
    flags as 0/1."""
    size = int(getattr(res, "size"))
    shown = min(size, limit)
    parts = [f"size={size}", f"capacity={int(getattr(res, 'capacity'))}"]
    for name in _RESULT_FIELDS:
        values = [int(v) for v in getattr(res, name)[:shown].tolist()]
        more = ", ..." if size > shown else ""
        parts.append(f"{name}=[{', '.join(map(str, values))}{more}]")
    return f"BatchStepResult({', '.join(parts)})"


_BRIEF = reprlib.Repr()
_BRIEF.maxstring = _BRIEF.maxother = _BRIEF.maxlong = 60
_BRIEF.maxlevel, _BRIEF.maxdict, _BRIEF.maxlist, _BRIEF.maxtuple = 2, 4, 6, 6


def brief(value: object) -> str:
    """``repr(value)`` for an error message, at most about 100 characters
    whatever the value: a long string shows its two ends and its length
    (``'aaaa...aaaa' (1,048,576 characters)``), a large container its first
    items, a huge int its size, so a caller's (or a client's) value cannot
    turn a message, a log line or an error response into megabytes."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 180:
        return f"<an int of {value.bit_length():,} bits>"  # (repr is refused past 4,300 digits)
    try:
        text = _BRIEF.repr(value)
    except Exception:  # a __repr__ that raises
        return f"<{type(value).__name__} object>"
    if isinstance(value, str) and len(value) > _BRIEF.maxstring:
        text += f" ({len(value):,} characters)"
    return text[:160]


def brief_names(names: Sequence[str], limit: int = 8) -> str:
    """``a, b, c`` for an error message: the first ``limit`` names (each cut
    short as ``brief`` cuts a value when long), then ``... (N in all)``."""
    shown = [n if isinstance(n, str) and len(n) <= _BRIEF.maxstring else brief(n) for n in names[:limit]]
    more = f", ... ({len(names):,} in all)" if len(names) > limit else ""
    return ", ".join(shown) + more
