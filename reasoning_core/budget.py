"""Reasoning budgets: how many tokens a model may think before it must answer.

A budget counts the generated tokens the parser puts on the reasoning side
(every block of the answer together) and, once the budget is spent, names the
token that must come next so that reasoning closes: the optional
``closing_text`` (tokenized once), then the family's end delimiter as the
vocabulary's own ids (the special token where there is one, never the
delimiter re-tokenized as text).

The same automaton that splits the output decides here where reasoning is,
so a budget never disagrees with the parser: implicit ends (a tool-call
opener), multi-token delimiters, channel formats and several blocks per
answer are handled as the parser handles them.

Rules, for :class:`ReasoningBudget` and :class:`BudgetBatch` alike:

- A token *counts* when the parser decides it is reasoning text.  Held
  tokens (a possible delimiter prefix) count once they are released as
  reasoning; delimiters never count.
- Once ``count >= budget`` while reasoning is open, forcing starts.  With
  ``soft_margin=k`` it starts at the first token from the budget on that ends
  a line or a sentence, and at ``budget + k`` at the latest.
- Forcing emits ``closing_text`` then the end delimiter, one token per step.
  A step whose token is not the forced one (an engine that did not apply
  the mask) is still taken as generated; the same position is forced again.
- The budget is per answer: once it is spent, a block that opens later is
  closed at once, by the end delimiter alone (the closing text is said once).
- ``budget=0`` closes every block as soon as it opens (a prompt that opened
  reasoning is closed by the first generated tokens).
- Speculative decoding: :meth:`ReasoningBudget.accept_draft` and
  :meth:`BudgetBatch.step_ragged` take draft tokens up to the first position
  where a forced token was due and the draft differs; the draft tokens from
  there on are rejected (not consumed), and that position takes the forced
  token.
"""
from __future__ import annotations

import functools
import re
import weakref
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from ._shared import brief
from ._bytes import token_bytes
from ._tables import END, REASONING, SEEDED, ids_of_kind
from ._tokenizer import _encode_sync, describe_tokenizer
from .batch import ReasoningBatch
from .parser import FamilyParser, get_parser

__all__ = ["BudgetBatch", "BudgetStep", "GrammarRegion", "ReasoningBudget", "boundary_mask"]

# A token ends a line or a sentence when its text ends in one of these,
# optionally followed by closing quotes/brackets and spaces.
_BOUNDARY = re.compile(rb"(?:\n|[.!?\xe3\x80\x82\xef\xbc\x81\xef\xbc\x9f][\"')\]\s]*)\Z")


def _check_budget(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    value = int(value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, not {brief(value)}")
    if value > 2**31 - 1:
        raise ValueError(f"{name} must fit in 31 bits, not {brief(value)}")
    return value


_masks: "weakref.WeakKeyDictionary[Any, np.ndarray]" = weakref.WeakKeyDictionary()


def boundary_mask(tokenizer: Any) -> np.ndarray:
    """Bool array over the vocabulary: the ids whose text ends a line or a sentence.

    Built once per tokenizer from its token bytes (cached while the tokenizer
    lives).  Raises ``ValueError`` when the tokenizer's token texts cannot be
    read.
    """
    try:
        cached = _masks.get(tokenizer)
    except TypeError:  # unhashable: no cache
        cached = None
    if cached is not None:
        return cached
    table = token_bytes(tokenizer)
    if table is None:
        raise ValueError(f"soft_margin needs token texts, and {describe_tokenizer(tokenizer)} does not give them")
    texts = table.table
    mask = np.fromiter((bool(_BOUNDARY.search(b)) for b in texts), dtype=np.bool_, count=len(texts))
    mask.flags.writeable = False
    try:
        _masks[tokenizer] = mask
    except TypeError:
        pass
    return mask


@dataclass(frozen=True)
class _Plan:
    """What a budget forces, resolved once per (parser tables, tokenizer, closing text)."""

    sequence: tuple[int, ...]  # closing ids + end ids
    closing: int  # how many of them are the closing text
    boundary: Optional[np.ndarray]  # soft-margin boundary ids, or None


def _plan(parser: FamilyParser, tokenizer: Any, closing_text: Optional[str], soft_margin: int) -> _Plan:
    ends = ids_of_kind(parser.tables, END)
    if not ends:
        raise ValueError(f"family {parser.family.name!r} has no end delimiter: its reasoning cannot be budgeted")
    end = ends[0]  # the family's own marker first (further entries are other encodings of it)
    closing: tuple[int, ...] = ()
    if closing_text is not None:
        if not isinstance(closing_text, str):
            raise TypeError(f"closing_text must be a str, not {type(closing_text).__name__}")
        if closing_text:
            if tokenizer is None:
                raise ValueError("closing_text needs the tokenizer= to encode it")
            ids = _encode_sync(tokenizer, closing_text)
            if ids is None:
                raise ValueError(f"{describe_tokenizer(tokenizer)} cannot encode closing_text")
            closing = tuple(int(i) for i in ids)
    boundary = None
    if soft_margin:
        if tokenizer is None:
            raise ValueError("soft_margin needs the tokenizer= to find line and sentence ends")
        boundary = boundary_mask(tokenizer)
    return _Plan(closing + tuple(int(i) for i in end), len(closing), boundary)


def _resolve_parser(parser: Any, tokenizer: Any, backend: Optional[str]) -> FamilyParser:
    if isinstance(parser, str):
        return get_parser(parser, tokenizer, backend=backend)
    if not isinstance(parser, FamilyParser):
        raise TypeError(f"expected a reasoning_core parser or a family name, not {type(parser).__name__}")
    return parser


class ReasoningBudget:
    """A thinking-token budget for one request.

    ``ReasoningBudget("qwen3", budget=512, tokenizer=tok)`` or with a parser.
    ``begin(prompt_ids)`` starts a request; after each generated token,
    ``step([token])`` returns the token that must come next (``None`` = the
    model is free).  ``forced`` is that answer without a step.  The parser's
    state after the same ids is :attr:`parser`'s (a private copy).
    """

    __slots__ = ("parser", "budget", "soft_margin", "_plan", "_count", "_pos", "_spent", "_ids",
                 "_history", "_prompt", "_last", "accepted")

    def __init__(self, parser: FamilyParser | str, *, budget: int, tokenizer: Any = None,
                 closing_text: Optional[str] = None, soft_margin: int = 0, backend: Optional[str] = None) -> None:
        self.budget = _check_budget(budget, "budget")
        self.soft_margin = _check_budget(soft_margin, "soft_margin")
        parser = _resolve_parser(parser, tokenizer, backend)
        self._plan = _plan(parser, tokenizer, closing_text, self.soft_margin)
        # A private parser on the same tables: the caller's keeps its own state.
        self.parser = type(parser)(parser.tables, backend=parser.backend)
        self.accepted = 0
        self.begin()

    # -- state -------------------------------------------------------------
    @property
    def reasoning_tokens(self) -> int:
        """Generated tokens the parser has put on the reasoning side so far."""
        return self._count

    @property
    def is_reasoning(self) -> bool:
        """Whether generation is inside a reasoning block now."""
        return self.parser.is_reasoning

    @property
    def forced(self) -> Optional[int]:
        """The token that must come next, or None."""
        return None if self._pos < 0 else self._plan.sequence[self._pos]

    @property
    def end_sequence(self) -> tuple[int, ...]:
        """The ids a close emits: the closing text's, then the end delimiter's."""
        return self._plan.sequence

    def begin(self, prompt_token_ids: Sequence[int] | None = None) -> "ReasoningBudget":
        """Start a request (the parser is seeded from the prompt as ``parser.begin`` does)."""
        self.parser.begin(prompt_token_ids)
        self._prompt = None if prompt_token_ids is None else list(prompt_token_ids)
        self._count = 0
        self._pos = -1
        self._spent = False
        self._ids: list[int] = []
        self._history: list[tuple[int, int, bool]] = []
        self._last = -1
        self._decide(-1)
        return self

    # -- steps -------------------------------------------------------------
    def step(self, new_token_ids: Sequence[int]) -> Optional[int]:
        """Take generated tokens (all of them: they were sampled); the next forced token or None."""
        for tid in _ids(new_token_ids):
            self._take(tid)
        self.accepted = len(new_token_ids)
        return self.forced

    def accept_draft(self, draft_token_ids: Sequence[int]) -> int:
        """Take draft tokens up to the first that contradicts a forced position; how many were taken.

        ``forced`` then names the token for the first rejected position.
        """
        n = 0
        for tid in _ids(draft_token_ids):
            due = self.forced
            if due is not None and tid != due:
                break
            self._take(tid)
            n += 1
        self.accepted = n
        return n

    def rollback(self, num_tokens: int) -> None:
        """Undo the last ``num_tokens`` steps (speculative decoding): the state is replayed."""
        num_tokens = _check_budget(num_tokens, "num_tokens")
        if num_tokens > len(self._ids):
            raise ValueError(f"cannot roll back {num_tokens} tokens: {len(self._ids)} were taken")
        if not num_tokens:
            return
        keep = len(self._ids) - num_tokens
        ids = self._ids[:keep]
        self._count, self._pos, self._spent = self._history[keep]
        del self._history[keep + 1:]
        self._ids = ids
        self.parser.begin(self._prompt)
        if ids:
            self.parser.split(ids)

    def _take(self, tid: int) -> Any:
        plan = self._plan
        due = self.forced
        split = self.parser.split((tid,))
        self._ids.append(tid)
        self._count += len(split.reasoning_ids)
        if due is not None and tid == due:
            self._pos += 1
            if self._pos >= len(plan.sequence):
                self._pos = -1
        if self._pos >= 0 and not self.parser.is_reasoning:
            self._pos = -1  # reasoning closed (by the forced end or on its own)
        self._decide(tid)
        return split

    def _decide(self, tid: int) -> None:
        # Start forcing when the budget is spent (see the module docstring).
        if self._pos < 0 and self.parser.is_reasoning:
            count, budget = self._count, self.budget
            hard = count >= budget + self.soft_margin or self._spent
            soft = (count >= budget and self._plan.boundary is not None and 0 <= tid < len(self._plan.boundary)
                    and bool(self._plan.boundary[tid]))
            if hard or soft:
                self._pos = self._plan.closing if self._spent else 0
                self._spent = True
        self._history.append((self._count, self._pos, self._spent))

    def __repr__(self) -> str:
        return (f"<ReasoningBudget family={self.parser.family.name!r} budget={self.budget} "
                f"reasoning_tokens={self._count} forced={self.forced}>")


def _ids(token_ids: Sequence[int]) -> list[int]:
    if isinstance(token_ids, (str, bytes)):
        raise TypeError(f"token ids must be a sequence of ints, not {type(token_ids).__name__}")
    out = []
    for t in token_ids:
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
            raise TypeError(f"token ids must be ints, not {type(t).__name__}")
        out.append(int(t))
    return out


@dataclass(frozen=True)
class BudgetStep:
    """What a batch step decides, indexed like the step's ``slots``.

    ``forced``: the token each request must take next (-1 = free).
    ``in_grammar``: whether each request is past reasoning now (its grammar applies).
    ``accepted``: tokens taken per request (a ragged step may reject draft tokens).
    """

    forced: np.ndarray
    in_grammar: np.ndarray
    accepted: np.ndarray


class BudgetBatch:
    """Reasoning budgets for a whole engine batch, in arrays (see the module rules).

    ``BudgetBatch("qwen3", capacity, budget=512, tokenizer=tok)``; ``open(slot,
    prompt_ids, budget=None)`` starts a request (a per-request budget may
    replace the default), ``step(slots, token_ids)`` takes one sampled token
    per listed request and returns a :class:`BudgetStep`.  Work per step is a
    few NumPy operations over the listed rows: O(1) per request, whatever the
    reasoning length.
    """

    def __init__(self, parser: FamilyParser | str, capacity: int, *, budget: int, tokenizer: Any = None,
                 closing_text: Optional[str] = None, soft_margin: int = 0, backend: Optional[str] = None) -> None:
        self.budget = _check_budget(budget, "budget")
        self.soft_margin = _check_budget(soft_margin, "soft_margin")
        parser = _resolve_parser(parser, tokenizer, backend)
        self.batch = ReasoningBatch(parser, capacity, backend=backend)
        plan = self._plan = _plan(parser, tokenizer, closing_text, self.soft_margin)
        self._seq = np.asarray(plan.sequence + (-1,), dtype=np.int64)  # [-1] reads "free"
        cap = self.batch.capacity
        self._count = np.zeros(cap, dtype=np.int64)
        self._limit = np.zeros(cap, dtype=np.int64)  # per-slot budget
        self._pos = np.full(cap, -1, dtype=np.int64)
        self._spent = np.zeros(cap, dtype=np.bool_)
        self._in = np.zeros(cap, dtype=np.bool_)

    @property
    def capacity(self) -> int:
        """How many slots the batch has."""
        return self.batch.capacity

    @property
    def end_sequence(self) -> tuple[int, ...]:
        """The ids a close emits: the closing text's, then the end delimiter's."""
        return self._plan.sequence

    def open(self, slot: int, prompt_token_ids: Sequence[int] | None = None, *, budget: Optional[int] = None) -> bool:
        """Start a request in ``slot``; returns whether it starts in its thinking region."""
        limit = self.budget if budget is None else _check_budget(budget, "budget")
        thinking = self.batch.open(slot, prompt_token_ids)
        state = self.batch._engine.state_of(slot) & 3
        self._count[slot] = 0
        self._limit[slot] = limit
        self._pos[slot] = -1
        self._spent[slot] = False
        self._in[slot] = state == REASONING or state == SEEDED
        s = np.array([slot], dtype=np.int64)
        self._decide(s, np.array([-1], dtype=np.int64))
        return thinking

    def close(self, slot: int) -> None:
        """Free ``slot`` (the request ended)."""
        self.batch.close(slot)
        self._pos[slot] = -1
        self._in[slot] = False

    def forced(self, slots: Any) -> np.ndarray:
        """The token each listed request must take next (-1 = free)."""
        s = np.asarray(slots, dtype=np.int64)
        return self._seq[self._pos[s]]

    def reasoning_tokens(self, slots: Any) -> np.ndarray:
        """Generated tokens each listed request has put on the reasoning side so far."""
        return self._count[np.asarray(slots, dtype=np.int64)].copy()

    def step(self, slots: Any, token_ids: Any) -> BudgetStep:
        """One sampled token per listed request: advance and say what comes next."""
        res = self.batch.step(slots, token_ids)  # validates slots and ids first
        s = np.asarray(slots, dtype=np.int64)
        t = np.asarray(token_ids).astype(np.int64, copy=False)
        self._advance(s, t, res)
        return BudgetStep(self._seq[self._pos[s]], ~self.batch.thinking_mask()[s], np.ones(len(s), dtype=np.int64))

    def step_ragged(self, slots: Any, offsets: Any, token_ids: Any) -> BudgetStep:
        """Draft tokens per request (``token_ids[offsets[i]:offsets[i+1]]``, speculative decoding).

        Each request takes its tokens up to the first position where a forced
        token was due and the draft differs; ``accepted`` says how many.
        """
        s = np.asarray(slots, dtype=np.int64)
        off = np.asarray(offsets, dtype=np.int64)
        ids = np.asarray(token_ids)
        if s.ndim != 1 or off.ndim != 1 or ids.ndim != 1 or off.shape[0] != s.shape[0] + 1:
            raise ValueError("step_ragged needs 1-D slots, offsets with len(slots) + 1 entries, and 1-D token_ids")
        if off.size and (off[0] != 0 or off[-1] != ids.shape[0] or np.any(np.diff(off) < 0)):
            raise ValueError("offsets must start at 0, never decrease and end at len(token_ids)")
        if ids.size and ids.dtype.kind not in "iu":
            raise TypeError(f"token_ids must be integers, not {ids.dtype}")
        ids = ids.astype(np.int64, copy=False)
        lengths = np.diff(off)
        accepted = np.zeros(len(s), dtype=np.int64)
        live = np.ones(len(s), dtype=np.bool_)
        for j in range(int(lengths.max()) if lengths.size else 0):
            rows = np.flatnonzero(live & (lengths > j))
            if not rows.size:
                break
            t = ids[off[rows] + j]
            due = self._seq[self._pos[s[rows]]]
            ok = (due < 0) | (t == due)
            live[rows[~ok]] = False
            rows, t = rows[ok], t[ok]
            if not rows.size:
                break
            res = self.batch.step(s[rows].astype(np.int32), t.astype(np.int32))
            self._advance(s[rows], t, res)
            accepted[rows] += 1
        return BudgetStep(self._seq[self._pos[s]], ~self.batch.thinking_mask()[s], accepted)

    def _advance(self, s: np.ndarray, t: np.ndarray, res: Any) -> None:
        prev_in = self._in[s]
        pos = self._pos[s]
        due = self._seq[pos]
        self._count[s] += res.is_reasoning + np.where(prev_in, res.released, 0)
        now_in = res.in_reasoning.astype(np.bool_)
        self._in[s] = now_in
        followed = (due >= 0) & (t == due)
        pos = np.where(followed, pos + 1, pos)
        pos[pos >= len(self._plan.sequence)] = -1
        pos[~now_in] = -1
        self._pos[s] = pos
        self._decide(s, t)

    def _decide(self, s: np.ndarray, t: np.ndarray) -> None:
        count, limit, spent = self._count[s], self._limit[s], self._spent[s]
        start = (self._pos[s] < 0) & self._in[s]
        if not start.any():
            return
        hard = (count >= limit + self.soft_margin) | spent
        trigger = start & hard
        boundary = self._plan.boundary
        if boundary is not None:
            ok = (t >= 0) & (t < len(boundary))
            at_boundary = np.zeros(len(s), dtype=np.bool_)
            at_boundary[ok] = boundary[t[ok]]
            trigger |= start & (count >= limit) & at_boundary
        if trigger.any():
            rows = s[trigger]
            self._pos[rows] = np.where(self._spent[rows], self._plan.closing, 0)
            self._spent[rows] = True

    def __repr__(self) -> str:
        return f"<BudgetBatch family={self.batch.parser.family.name!r} capacity={self.capacity} budget={self.budget}>"


class GrammarRegion:
    """A grammar matcher that applies only after reasoning: xgrammar's ``GrammarMatcher`` shape.

    ``GrammarRegion(matcher, budget)`` wraps any object with ``accept_token``,
    ``fill_next_token_bitmask``, ``rollback``, ``is_terminated`` and ``reset``
    (an ``xgrammar.GrammarMatcher``) and a :class:`ReasoningBudget` (use a
    large budget for no limit).  While the request reasons, every token is
    allowed except where the budget forces one; from the token that ends
    reasoning on, tokens go to the inner matcher (the content side of that
    token first: an implicit end such as a tool-call opener is the grammar's
    first token).  The grammar region, once entered, lasts to the end of the
    request; ``rollback`` crosses the boundary in both directions.
    """

    def __init__(self, matcher: Any, budget: ReasoningBudget) -> None:
        for name in ("accept_token", "fill_next_token_bitmask", "rollback", "is_terminated", "reset"):
            if not callable(getattr(matcher, name, None)):
                raise TypeError(f"matcher needs a {name}() method ({type(matcher).__name__} has none)")
        if not isinstance(budget, ReasoningBudget):
            raise TypeError(f"budget must be a ReasoningBudget, not {type(budget).__name__}")
        self.matcher = matcher
        self.budget = budget
        self._prompt: Optional[list[int]] = None
        # Per accepted token: how many tokens the inner matcher took, and the region after it.
        self._hist: list[tuple[int, bool]] = []
        self._grammar = self._start = budget.parser.state == "content"

    @property
    def in_grammar(self) -> bool:
        """Whether tokens now go to the inner matcher."""
        return self._grammar

    def begin(self, prompt_token_ids: Sequence[int] | None = None) -> "GrammarRegion":
        """Start a request: the budget is seeded from the prompt, the matcher reset."""
        self.budget.begin(prompt_token_ids)
        self.matcher.reset()
        self._prompt = None if prompt_token_ids is None else list(prompt_token_ids)
        self._hist = []
        self._grammar = self._start = self.budget.parser.state == "content"
        return self

    def reset(self) -> None:
        """Start the current request over from its prompt."""
        self.begin(self._prompt)

    def accept_token(self, token_id: int) -> bool:
        """Take one token; False (and no change) when the region rejects it."""
        if self._grammar:
            if not self.matcher.accept_token(token_id):
                return False
            self.budget.step((token_id,))
            self._hist.append((1, True))
            return True
        due = self.budget.forced
        if due is not None and token_id != due:
            return False
        split = self.budget._take(_ids((token_id,))[0])
        if self.budget.parser.state != "content":
            self._hist.append((0, False))
            return True
        # Reasoning ended at this token: its content side starts the grammar.
        content = split.content_ids
        taken = 0
        for tid in content:
            if not self.matcher.accept_token(tid):
                if taken:
                    self.matcher.rollback(taken)
                self.budget.rollback(1)
                return False
            taken += 1
        self._hist.append((taken, True))
        self._grammar = True
        return True

    def fill_next_token_bitmask(self, bitmask: Any, index: int = 0) -> bool:
        """Fill row ``index`` of an xgrammar bitmask (int32 words, 32 ids each); True if it restricts."""
        if self._grammar:
            return bool(self.matcher.fill_next_token_bitmask(bitmask, index))
        due = self.budget.forced
        if due is None:
            bitmask[index] = -1
            return False
        bitmask[index] = 0
        bit = due % 32
        bitmask[index, due // 32] = -(1 << 31) if bit == 31 else 1 << bit
        return True

    def rollback(self, num_tokens: int = 1) -> None:
        """Undo the last ``num_tokens`` accepted tokens, on both sides of the boundary."""
        num_tokens = _check_budget(num_tokens, "num_tokens")
        if num_tokens > len(self._hist):
            raise ValueError(f"cannot roll back {num_tokens} tokens: {len(self._hist)} were accepted")
        if not num_tokens:
            return
        inner = sum(n for n, _ in self._hist[-num_tokens:])
        del self._hist[-num_tokens:]
        if inner:
            self.matcher.rollback(inner)
        self.budget.rollback(num_tokens)
        self._grammar = self._hist[-1][1] if self._hist else self._start

    def is_terminated(self) -> bool:
        """Whether the inner grammar has terminated (never while reasoning)."""
        return self._grammar and bool(self.matcher.is_terminated())

    def __repr__(self) -> str:
        return f"<GrammarRegion in_grammar={self._grammar} budget={self.budget!r}>"
