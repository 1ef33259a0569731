"""Result types shared by both backends (plain Python)."""
from __future__ import annotations

import array
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from ._tables import SEG_NAMES

__all__ = ["ReasoningSpan", "ParsedReasoningDelta", "TokenSplit"]


@dataclass(frozen=True)
class ReasoningSpan:
    """Half-open index pairs into a delta (MAX semantics).

    ``reasoning_with_delimiters = (d0, d1)`` and ``reasoning = (r0, r1)`` with
    ``d0 <= r0 <= r1 <= d1``.
    """

    reasoning_with_delimiters: tuple[int, int]
    reasoning: tuple[int, int]

    def __post_init__(self) -> None:
        try:
            d0, d1 = self.reasoning_with_delimiters
            r0, r1 = self.reasoning
        except (TypeError, ValueError):
            raise ValueError("ReasoningSpan takes two (start, end) pairs") from None
        for v in (d0, d1, r0, r1):
            if not isinstance(v, int) or isinstance(v, bool):
                raise ValueError(f"ReasoningSpan indices must be ints, got {type(v).__name__}")
        if not (0 <= d0 <= r0 <= r1 <= d1):
            raise ValueError(f"ReasoningSpan needs 0 <= d0 <= r0 <= r1 <= d1, got {(d0, d1)} and {(r0, r1)}")

    def extract_reasoning(self, seq: Sequence) -> Sequence:
        r0, r1 = self.reasoning
        return seq[r0:r1]

    def extract_content(self, seq: Sequence) -> Sequence:
        d0, d1 = self.reasoning_with_delimiters
        head, tail = seq[:d0], seq[d1:]
        if type(head) is list or type(head) is tuple or isinstance(head, (str, bytes, array.array)):
            return head + tail
        if hasattr(head, "dtype"):  # NumPy: + would add element-wise
            import numpy as np

            return np.concatenate([head, tail])
        # range, memoryview and other sequences without concatenation: a list.
        return [*head, *tail]

    @property
    def is_empty(self) -> bool:
        return self.reasoning_with_delimiters[0] == self.reasoning_with_delimiters[1]


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
        if self._tokens is None:
            d = self._delta
            d = d.tolist() if hasattr(d, "tolist") else list(d)
            self._tokens = list(self._prefix) + d if self._prefix else d
        return self._tokens

    @property
    def segments(self) -> list[tuple[str, int, int]]:
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
        return self._collect(0)

    @property
    def reasoning_ids(self) -> list[int]:
        return self._collect(1)

    @property
    def delimiter_ids(self) -> list[int]:
        return self._collect(2, 4)  # start delimiters and the others

    @property
    def held_ids(self) -> list[int]:
        return self._collect(3)

    def __len__(self) -> int:
        return self._segs[-1][2] if self._segs else 0

    def __repr__(self) -> str:
        return f"TokenSplit(segments={self.segments!r}, is_reasoning={self.is_reasoning!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TokenSplit):
            return NotImplemented
        return (self.tokens, self._segs, self.is_reasoning) == (other.tokens, other._segs, other.is_reasoning)

    __hash__ = None  # type: ignore[assignment]
