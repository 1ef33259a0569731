"""Result types shared by both backends (plain Python)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from ._shared import TOKEN_SPLIT as _TOKEN_SPLIT
from ._shared import content_of as _content_of
from ._tables import SEG_NAMES

__all__ = ["ReasoningSpan", "ParsedReasoningDelta", "TokenSplit"]


def _pair(pair: object) -> tuple[int, int]:
    try:
        a, b = pair  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ValueError("ReasoningSpan takes two (start, end) pairs") from None
    for v in (a, b):
        if not isinstance(v, int) or isinstance(v, bool):
            raise ValueError(f"ReasoningSpan indices must be ints, got {type(v).__name__}")
    return a, b


class ReasoningSpan:
    """Half-open index pairs into a delta (MAX semantics).

    ``reasoning_with_delimiters = (d0, d1)`` and ``reasoning = (r0, r1)`` with
    ``0 <= d0 <= r0 <= r1 <= d1``.  Immutable.  With the compiled engine the
    class is its compiled twin (same behaviour, extraction in C).
    """

    __slots__ = ("_d0", "_d1", "_r0", "_r1")

    def __init__(self, reasoning_with_delimiters: tuple[int, int], reasoning: tuple[int, int]) -> None:
        d0, d1 = _pair(reasoning_with_delimiters)
        r0, r1 = _pair(reasoning)
        if not (0 <= d0 <= r0 <= r1 <= d1):
            raise ValueError(f"ReasoningSpan needs 0 <= d0 <= r0 <= r1 <= d1, got {(d0, d1)} and {(r0, r1)}")
        if d1 > sys.maxsize:
            raise ValueError(f"ReasoningSpan index {d1} is too large")
        for name, v in (("_d0", d0), ("_d1", d1), ("_r0", r0), ("_r1", r1)):
            object.__setattr__(self, name, v)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ReasoningSpan is immutable: cannot set {name!r}")

    __delattr__ = __setattr__  # type: ignore[assignment]

    @property
    def reasoning_with_delimiters(self) -> tuple[int, int]:
        """``(d0, d1)``: the reasoning block with its delimiters, as half-open indices into the delta."""
        return (self._d0, self._d1)

    @property
    def reasoning(self) -> tuple[int, int]:
        """``(r0, r1)``: the reasoning text alone, without its delimiters."""
        return (self._r0, self._r1)

    @property
    def is_empty(self) -> bool:
        """Whether the span covers nothing (no reasoning and no delimiter in the delta)."""
        return self._d0 == self._d1

    def extract_reasoning(self, seq: Sequence) -> Sequence:
        """The reasoning part of ``seq`` (the delta's ids, or its text when the indices are into text)."""
        return seq[self._r0:self._r1]

    def extract_content(self, seq: Sequence) -> Sequence:
        """``seq`` without the reasoning block and its delimiters, as the same kind of sequence where it concatenates."""
        return _content_of(seq, self._d0, self._d1)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.reasoning_with_delimiters == other.reasoning_with_delimiters and \
            self.reasoning == other.reasoning  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.reasoning_with_delimiters, self.reasoning))

    def __repr__(self) -> str:
        return f"ReasoningSpan(reasoning_with_delimiters={self.reasoning_with_delimiters!r}, reasoning={self.reasoning!r})"

    def __reduce__(self):
        return (type(self), (self.reasoning_with_delimiters, self.reasoning))


@dataclass(frozen=True)
class ParsedReasoningDelta:
    span: ReasoningSpan
    is_still_reasoning: bool
    reasoning_text_formatter: Optional[Callable[[str], Optional[str]]] = None


class TokenSplit:
    """One delta split into reasoning, content, delimiters and held tokens.

    Segment kinds: ``content``, ``reasoning``, ``start`` (a consumed start
    delimiter), ``delimiter`` (any other consumed delimiter: end, header,
    frame) and ``held``.  ``tokens`` is the sequence the ``segments`` index: tokens held over from
    the previous delta followed by this delta.  Every token of it is in
    exactly one segment, in order; ``held`` tokens are decided by a later
    delta (or ``finish()``).
    """

    __slots__ = ("_prefix", "_delta", "_segs", "is_reasoning", "awaiting_start", "_tokens", "_bounds")

    def __init__(self, prefix, delta, segs, is_reasoning: bool, awaiting_start: bool = False,
                 boundaries: tuple = ()) -> None:
        self._prefix = prefix
        self._delta = delta
        self._segs = segs
        self.is_reasoning = is_reasoning
        self.awaiting_start = awaiting_start
        self._tokens = None
        self._bounds = boundaries

    @property
    def boundaries(self) -> list[tuple[int, list[tuple[str, int, int]]]]:
        """Tokens whose bytes fall on more than one side of a delimiter.

        Only a parser that matches markers over token bytes (a marker that is
        not one whole token, e.g. ``.H`` + ``ere is my response:``) reports
        them.  Each is ``(index, pieces)``: ``index`` into ``tokens``, and
        ``pieces`` the ``(kind, byte_start, byte_end)`` ranges of that token's
        bytes, in order, with the segment kinds of ``segments``.  The token
        itself is in the segment of the delimiter it carries (``start`` or
        ``delimiter``; a terminator's token is ``content``, as the terminator is).
        """
        return [(i, [(SEG_NAMES[k], a, b) for k, a, b in pieces]) for i, pieces in self._bounds]

    @property
    def tokens(self) -> list[int]:
        """The ids ``segments`` index: tokens held over from the previous delta, then this delta."""
        if self._tokens is None:
            d = self._delta
            d = d.tolist() if hasattr(d, "tolist") else list(d)
            self._tokens = list(self._prefix) + d if self._prefix else d
        return self._tokens

    @property
    def segments(self) -> list[tuple[str, int, int]]:
        """``(kind, start, end)`` ranges over ``tokens``, in order, each token in exactly one."""
        return [(SEG_NAMES[k], a, b) for k, a, b in self._segs]

    def _collect(self, *kinds: int) -> list[int]:
        toks = self.tokens
        out: list[int] = []
        for k, a, b in self._segs:
            if k in kinds:
                out.extend(toks[a:b])
        return out

    @property
    def content_ids(self) -> list[int]:
        """The content tokens, in order."""
        return self._collect(0)

    @property
    def reasoning_ids(self) -> list[int]:
        """The reasoning tokens (no delimiter), in order."""
        return self._collect(1)

    @property
    def delimiter_ids(self) -> list[int]:
        """The consumed delimiter tokens (start delimiters and the others), in order."""
        return self._collect(2, 4)  # start delimiters and the others

    @property
    def held_ids(self) -> list[int]:
        """Tokens held as a possible delimiter prefix, decided by a later delta (or ``finish()``)."""
        return self._collect(3)

    def __len__(self) -> int:
        return self._segs[-1][2] if self._segs else 0

    def __repr__(self) -> str:
        return f"TokenSplit(segments={self.segments!r}, is_reasoning={self.is_reasoning!r})"

    def __eq__(self, other: object) -> bool:
        # Either engine's TokenSplit (the compiled one is a twin of this class).
        if type(other).__name__ != "TokenSplit" or not hasattr(other, "segments"):
            return NotImplemented
        return (self.tokens, self.segments, self.is_reasoning) == (
            other.tokens, other.segments, other.is_reasoning)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]


# The pure engine's classes, by name, for parity tests; with the compiled
# engine the public names are their compiled twins (the same behaviour, in C).
PyReasoningSpan = ReasoningSpan
PyTokenSplit = TokenSplit
if not TYPE_CHECKING:
    from . import _dispatch

    if _dispatch.BACKEND == "cython":
        from ._engine import ReasoningSpan, TokenSplit  # noqa: F811

# The pure engine builds the public class (reasoning_core._shared).
_TOKEN_SPLIT[:] = [TokenSplit]
