"""Batch step API: reasoning state for a whole engine batch in flat arrays.

A serving engine decodes one token for each of many requests per step.
``ReasoningBatch.step`` classifies all of them in one call (no per-request
Python in the compiled backend) and reports, per request, whether the token
is reasoning, a consumed delimiter, held (a possible multi-token delimiter
prefix), and whether reasoning ended at this token -- the requests whose
grammar matcher must switch on now.
"""
from __future__ import annotations

from abc import ABC
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
import numpy.typing as npt

from . import _dispatch
from ._bytes import byte_batch_engine
from ._tables import CONTENT, END, STATE_NAMES, TERM, ids_of_kind
from .parser import FamilyParser, get_parser

__all__ = ["BatchStepResult", "ReasoningBatch", "ReasoningEndIds", "thinking_end_ids"]


class BatchStepResult(ABC):
    """The per-token output of a batch step, whichever backend made it.

    Each backend has its own concrete class (the compiled one writes through
    raw pointers); both are registered here, so ``isinstance(res,
    reasoning_core.BatchStepResult)`` holds for a result of either.  The
    arrays have ``capacity`` entries, of which the last step wrote the first
    ``size`` (see ``ReasoningBatch`` for what each says); ``repr()`` shows those.
    """

    # What both concrete classes have (declared for type checkers): 1-D arrays.
    is_reasoning: np.ndarray[tuple[int], np.dtype[np.bool_]]
    is_delimiter: np.ndarray[tuple[int], np.dtype[np.bool_]]
    reasoning_ended: np.ndarray[tuple[int], np.dtype[np.bool_]]
    is_held: np.ndarray[tuple[int], np.dtype[np.bool_]]
    in_reasoning: np.ndarray[tuple[int], np.dtype[np.bool_]]
    released: np.ndarray[tuple[int], np.dtype[np.uint8]]
    completed: np.ndarray[tuple[int], np.dtype[np.uint8]]
    size: int

    @property
    def capacity(self) -> int:  # pragma: no cover - the concrete classes define it
        """How many tokens one step can write (the arrays' length)."""
        raise NotImplementedError

    def view(self, n: int) -> "BatchStepResult":  # pragma: no cover - the concrete classes define it
        """The first ``n`` entries (views, no copy)."""
        raise NotImplementedError


for _backend in ("python", "cython"):
    try:
        BatchStepResult.register(_dispatch.backend_module(_backend).BatchStepResult)
    except ValueError:  # the compiled engine is not built
        pass


@dataclass(frozen=True)
class ReasoningEndIds:
    """What ends reasoning for a parser: for grammar set-up code.

    ``end`` are the consumed end delimiters, ``terminators`` the implicit
    ends that stay in content (a tool-call opener).  ``single_token`` is the
    end id when the family's end delimiter is exactly one token (MAX's
    ``reasoning_end_token_id``), else None.
    """

    end: tuple[tuple[int, ...], ...]
    terminators: tuple[tuple[int, ...], ...]

    @property
    def single_token(self) -> int | None:
        """The end id when the end delimiter is exactly one token (MAX's ``reasoning_end_token_id``), else None."""
        return self.end[0][0] if len(self.end) == 1 and len(self.end[0]) == 1 else None


def thinking_end_ids(parser: FamilyParser | str, tokenizer: Any = None) -> ReasoningEndIds:
    """End-of-reasoning ids of a parser (or of a family name plus tokenizer)."""
    if isinstance(parser, str):
        parser = get_parser(parser, tokenizer)
    if not isinstance(parser, FamilyParser):
        raise TypeError(f"expected a reasoning_core parser or a family name, not {type(parser).__name__}")
    return ReasoningEndIds(end=ids_of_kind(parser.tables, END), terminators=ids_of_kind(parser.tables, TERM))


class ReasoningBatch:
    """Per-request reasoning state for up to ``capacity`` concurrent requests.

    ``ReasoningBatch(parser, capacity)`` or ``ReasoningBatch("qwen3", capacity,
    tokenizer=tok)``.  Slots are the engine's request slots: ``open(slot,
    prompt_token_ids)`` seeds one from its prompt, ``close(slot)`` frees it.

    ``step(slots, token_ids, out=None)`` takes one new token per listed
    request (equal-length integer arrays; int32 avoids a conversion) and
    returns a ``BatchStepResult`` whose arrays are indexed like ``slots``:

    - ``is_reasoning``: this token is reasoning text.
    - ``is_delimiter``: this token completes a consumed start/end delimiter
      (implicit terminators are content, not delimiters).
    - ``reasoning_ended``: reasoning closed at this token (switch the grammar on).
    - ``in_reasoning``: after this token the request is inside a reasoning
      block (the side its held tokens will be released to).
    - ``is_held``: this token may begin a multi-token delimiter; decided later.
    - ``released``: how many earlier held tokens were decided now, as the side
      the request was on before this step.
    - ``completed``: how many earlier held tokens belong to the delimiter this
      token completed (they share its class).

    Pass a ``BatchStepResult`` (``new_result(n)``) as ``out`` to reuse buffers:
    a steady-state step then allocates nothing.  A rejected call (bad slots,
    lengths or types) raises before any request's state changes.
    """

    def __init__(self, parser: FamilyParser | str, capacity: int, *, tokenizer: Any = None,
                 backend: str | None = None) -> None:
        if isinstance(parser, str):
            parser = get_parser(parser, tokenizer, backend=backend)
        elif not isinstance(parser, FamilyParser):
            raise TypeError(f"expected a reasoning_core parser or a family name, not {type(parser).__name__}")
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)):
            raise TypeError(f"capacity must be an int, not {type(capacity).__name__}")
        self.backend, mod = _dispatch.resolve_backend(backend or parser.backend)
        self.parser = parser
        if parser.matches_bytes:
            # Markers matched over token bytes: per-request byte engines.
            self._engine = byte_batch_engine(parser, int(capacity))
            self._result_cls = _dispatch.backend_module("python").BatchStepResult
        else:
            self._engine = mod.BatchEngine(parser.tables, int(capacity))
            self._result_cls = mod.BatchStepResult
        # Bound methods of the engine, so a step costs one call (the methods
        # below document them and give their types).
        self.step = self._engine.step  # type: ignore[method-assign]
        self.step_ragged = self._engine.step_ragged  # type: ignore[method-assign]

    def step(self, slots: npt.ArrayLike, token_ids: npt.ArrayLike,
             out: Optional[BatchStepResult] = None) -> BatchStepResult:  # pragma: no cover - bound in __init__
        """Classify one new token per listed request.

        ``slots`` and ``token_ids``: equal-length integer arrays (int32 avoids a
        conversion).  Returns a ``BatchStepResult`` indexed like ``slots`` (see
        the class docstring for its arrays), written into ``out`` when given.
        Bad slots, lengths or types raise ``ValueError``/``TypeError`` before
        any request's state changes.
        """
        return self._engine.step(slots, token_ids, out)

    def step_ragged(self, slots: npt.ArrayLike, offsets: npt.ArrayLike, token_ids: npt.ArrayLike,
                    out: Optional[BatchStepResult] = None) -> BatchStepResult:  # pragma: no cover - bound in __init__
        """Classify several new tokens per listed request (speculative decoding,
        chunked outputs).

        Request ``slots[k]`` gets ``token_ids[offsets[k]:offsets[k + 1]]``
        (``offsets`` has ``len(slots) + 1`` entries, non-decreasing from 0 to
        ``len(token_ids)``).  Returns a ``BatchStepResult`` indexed like
        ``token_ids``, written into ``out`` when given; rejected input raises
        before any request's state changes.
        """
        return self._engine.step_ragged(slots, offsets, token_ids, out)

    @property
    def capacity(self) -> int:
        """How many request slots the batch has."""
        return int(self._engine.capacity)

    def open(self, slot: int, prompt_token_ids: Sequence[int] | None = None) -> bool:
        """Start a request in ``slot``; returns whether it starts in its thinking region."""
        if prompt_token_ids is None:
            state = self.parser.tables.default_state
        else:
            state = self.parser.engine.prompt_state(prompt_token_ids)
        self._engine.open(slot, state)
        return state != CONTENT  # thinking: reasoning, seeded or awaiting a start

    def close(self, slot: int) -> None:
        """Free ``slot`` (the request finished or was aborted); its held tokens are dropped."""
        self._engine.close(slot)

    def finish(self, slot: int) -> tuple[tuple[int, ...], bool]:
        """End of generation for ``slot``: its held tokens and whether they are reasoning."""
        held, reasoning = self._engine.finish(slot)
        return tuple(held), bool(reasoning)

    def is_open(self, slot: int) -> bool:
        """Whether ``slot`` holds a request (opened and not closed)."""
        return bool(self._engine.is_open(slot))

    def held_ids(self, slot: int) -> tuple[int, ...]:
        """The tokens ``slot`` holds as a possible delimiter prefix, decided by a later step."""
        return tuple(self._engine.held_ids(slot))

    def state(self, slot: int) -> str:
        """Where ``slot``'s request is: ``"content"``, ``"reasoning"``, ``"seeded"`` (reasoning
        from the prompt, no start delimiter seen in the output yet) or ``"awaiting"`` a start."""
        return str(STATE_NAMES[self._engine.state_of(slot)])

    def thinking_mask(self) -> np.ndarray:
        """Bool mask over slots: open requests whose grammar must stay suspended.

        That is every open request not in content: inside reasoning, or
        awaiting a start delimiter the prompt enabled (Gemma 4).
        """
        return self._engine.thinking_mask()

    def new_result(self, n: int) -> BatchStepResult:
        """Output buffers for ``out=`` (size ``n`` = tokens per step)."""
        return self._result_cls(n)

    def end_ids(self) -> ReasoningEndIds:
        """The ids that end reasoning for this batch's parser (``thinking_end_ids``)."""
        return thinking_end_ids(self.parser)

    def __repr__(self) -> str:
        return f"<ReasoningBatch family={self.parser.family.name!r} capacity={self.capacity} backend={self.backend!r}>"
