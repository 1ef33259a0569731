"""MAX-compatible reasoning parsers, driven by the family table.

``ReasoningParser`` is the abstract interface (Modular MAX semantics);
``FamilyParser`` implements it for every row of ``reasoning_core.families``
on top of the backend engine, and adds the stateful ``begin``/``split``/
``finish`` API.  Parsers are per-request objects: sharing one across threads
is unsupported; distinct parsers may be used concurrently.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Optional, Sequence

from . import _dispatch
from ._tables import (
    AWAITING,
    END,
    INSIDE,
    REASONING,
    SEEDED,
    STATE_NAMES,
    TERM,
    Tables,
    ids_of_kind,
    start_state,
)
from ._bytes import ByteEngine
from ._tokenizer import _by_id as _TABLES_BY_TOKENIZER_ID, _cache_key, tables_for, tables_for_async
from .families import FAMILIES, Family, family_names, get_family
from .types import ParsedReasoningDelta, ReasoningSpan, TokenSplit

__all__ = [
    "ReasoningParser",
    "FamilyParser",
    "LabelStripper",
    "get_parser_cls",
    "parser_class",
    "get_parser",
    "create",
    "available_parsers",
]


class LabelStripper:
    """Strips a label (Gemma 4's ``thought\\n``) from the start of a block's text.

    Called with successive pieces of one block's decoded reasoning text; a
    piece that may still be part of the label is held (returns None).  A
    start that does not match the label is emitted unchanged.
    """

    __slots__ = ("label", "_pending", "_active")

    def __init__(self, label: str) -> None:
        self.label = label
        self._pending = ""
        self._active = True

    def begin_block(self) -> None:
        """A new reasoning block starts: its first text is checked for the label again (also ``reset``)."""
        self._pending = ""
        self._active = True

    reset = begin_block

    def __call__(self, text: str) -> Optional[str]:
        if not self._active:
            return text or None
        buf = self._pending + text
        if len(buf) < len(self.label) and self.label.startswith(buf):
            self._pending = buf
            return None
        self._active = False
        self._pending = ""
        out = buf[len(self.label):] if buf.startswith(self.label) else buf
        return out or None

    def flush(self) -> Optional[str]:
        """Text held when the block ended before the label completed."""
        out, self._pending, self._active = self._pending, "", False
        return out or None


class ReasoningParser(ABC):
    """Abstract reasoning parser (Modular MAX interface)."""

    @abstractmethod
    def stream(self, delta_token_ids: Sequence[int], is_currently_reasoning: bool = True) -> ParsedReasoningDelta:
        """Find the reasoning span in one delta of generated token ids."""

    @abstractmethod
    def will_reason_after_prompt(self, prompt_token_ids: Sequence[int]) -> bool:
        """Whether reasoning may come before the answer, given the prompt."""

    def reset(self) -> None:
        """Clear per-request state."""

    @classmethod
    @abstractmethod
    async def from_tokenizer(cls, tokenizer: Any) -> "ReasoningParser":
        """Build a parser, resolving its delimiters with ``tokenizer``."""

    @classmethod
    async def reasoning_end_token_id(cls, tokenizer: Any) -> int | None:
        """The id of the end-of-reasoning token, or None when it is not one token."""
        return None


def _plain_delta(d0: int, r0: int, r1: int, d1: int, still: bool) -> ParsedReasoningDelta:
    """A stream() result without a formatter (cached and shared by the engines)."""
    return ParsedReasoningDelta(ReasoningSpan((d0, d1), (r0, r1)), still, None)


class FamilyParser(ReasoningParser):
    """One parser class for every family; subclasses only bind ``family``."""

    family: ClassVar[Family] = FAMILIES["passthrough"]
    _formatter: LabelStripper | None = None  # set by __init__ for a family with a label

    def __init__(self, tables: Tables | None = None, *, tokenizer: Any = None, backend: str | None = None) -> None:
        if tables is None:
            tables = tables_for(self.family, tokenizer)
        elif not isinstance(tables, Tables):
            raise TypeError(f"expected Tables, not {type(tables).__name__}")
        self.backend, mod = _dispatch.resolve_backend(backend)
        self.tables = tables
        label = self.family.label
        if tables.byte_plan is None:
            # One checked engine per tables and backend is the template every
            # parser copies: no table checks, and stream() results shared.
            template = tables._engines.get(self.backend)
            if template is None:
                template = mod.Engine(tables)
                template.configure_stream(_plain_delta)
                template = tables._engines.setdefault(self.backend, template)
            self._engine = template.copy()
            if not label and type(self).__init__ is FamilyParser.__init__:
                # get_parser makes the next parsers of this class, these tables
                # and this backend argument from this recipe (see there).
                tables._engines.setdefault(_RECIPES, {}).setdefault(
                    backend, (template, self.backend, type(self)))
        else:
            # Some marker is not one whole token in this vocabulary: match
            # markers over the tokens' bytes (reasoning_core._bytes).
            byte_tables, vocab = tables.byte_plan
            self._engine = ByteEngine(byte_tables, vocab, mod.Engine)
            self._engine.configure_stream(_plain_delta)
            self.split = self._split_bytes
            self.finish = self._finish_bytes
        if label:
            formatter = self._formatter = LabelStripper(label)
            self._engine.configure_stream(
                lambda d0, r0, r1, d1, still: ParsedReasoningDelta(ReasoningSpan((d0, d1), (r0, r1)), still,
                                                                   formatter),
                formatter.begin_block,
            )
        # The engine's stream() is the whole MAX stream(), its split() the
        # whole split(): one compiled call each.  (get_parser repeats these
        # stores for a recipe's class.)
        self.stream = self._engine.stream
        self.will_reason_after_prompt = self._engine.will_reason
        if tables.byte_plan is None:
            self.split = self._engine.split

    # -- construction -------------------------------------------------------
    @classmethod
    async def from_tokenizer(cls, tokenizer: Any, *, backend: str | None = None) -> "FamilyParser":
        """A parser for ``tokenizer`` (MAX's async constructor); ``backend``: "cython", "python" or the default."""
        return cls(await tables_for_async(cls.family, tokenizer), backend=backend)

    @classmethod
    def from_tokenizer_sync(cls, tokenizer: Any, *, backend: str | None = None) -> "FamilyParser":
        """``from_tokenizer`` without ``await``."""
        return cls(tables_for(cls.family, tokenizer), backend=backend)

    @classmethod
    async def reasoning_end_token_id(cls, tokenizer: Any) -> int | None:
        """The end delimiter's id when it is exactly one token with ``tokenizer``, else None (MAX API)."""
        seqs = cls.end_id_sequences(await tables_for_async(cls.family, tokenizer))
        return seqs[0][0] if len(seqs) == 1 and len(seqs[0]) == 1 else None

    @classmethod
    def reasoning_end_token_ids(cls, tokenizer: Any) -> list[tuple[int, ...]]:
        """Every id sequence of the end delimiter (``thinking_end_ids`` adds the terminators)."""
        return cls.end_id_sequences(tables_for(cls.family, tokenizer))

    @staticmethod
    def end_id_sequences(tables: Tables, *, terminators: bool = False) -> list[tuple[int, ...]]:
        """The id sequences of the end delimiters in ``tables`` (with ``terminators=True``, the implicit ends too)."""
        return list(ids_of_kind(tables, END, TERM) if terminators else ids_of_kind(tables, END))

    # -- MAX API --------------------------------------------------------------
    def stream(self, delta_token_ids: Sequence[int], is_currently_reasoning: bool = True) -> ParsedReasoningDelta:
        """MAX ``stream()`` (instances call the engine's bound method directly)."""
        return self._engine.stream(delta_token_ids, is_currently_reasoning)

    def will_reason_after_prompt(self, prompt_token_ids: Sequence[int]) -> bool:
        """Whether generation after this prompt starts in (or may open) reasoning: the prompt's
        last delimiter opened a block, the family starts in reasoning, or it awaits a start the
        prompt enabled.  Does not change the parser's state (``begin(prompt)`` does)."""
        return self._engine.prompt_state(prompt_token_ids) in (REASONING, SEEDED, AWAITING)

    def reset(self) -> None:
        """Forget the current request: the family's default start state, nothing held."""
        self._engine.set_state(self.tables.default_state)
        if self._formatter is not None:
            self._formatter.reset()

    # -- beyond MAX: the complete split --------------------------------------
    def begin(self, prompt_token_ids: Sequence[int] | None = None, *,
              starts_in_reasoning: bool | str | None = None) -> "FamilyParser":
        """Start a request: seed the state from the prompt (or the family default).

        ``starts_in_reasoning`` overrides both for this request: True starts
        inside a reasoning block the output has not opened (its first start
        delimiter re-opens it; an awaiting-start family such as Gemma 4
        waits for its start instead), ``"inside"`` continues a block the
        prompt already opened (every family, Gemma 4 included; a family label
        is not stripped from the output's head), False starts in content.
        """
        if starts_in_reasoning is not None:
            state = start_state(starts_in_reasoning, self.tables.awaiting_family)
            self.reset()
            self._engine.set_state(state)
            if starts_in_reasoning == INSIDE and self._formatter is not None:
                self._formatter.flush()
            return self
        self.reset()
        if prompt_token_ids is not None:
            self._engine.set_state(self._engine.prompt_state(prompt_token_ids))
        return self

    def split(self, delta_token_ids: Sequence[int]) -> TokenSplit:
        """Split one delta (instances call the engine's ``split`` directly: one call).

        The result owns a copy of the delta: a caller reusing its buffer
        cannot change a split already returned.
        """
        return self._engine.split(delta_token_ids)

    def finish(self) -> TokenSplit:
        """End the request: held tokens go to the current side."""
        eng = self._engine
        prefix = eng.held_ids
        segs, _ = eng.finish()
        state = eng.state
        return TokenSplit((), list(prefix), segs, state == REASONING or state == SEEDED, state == AWAITING)

    def _split_bytes(self, delta_token_ids: Sequence[int]) -> TokenSplit:
        # split() of a parser whose markers are matched over token bytes:
        # the same result, plus the boundary tokens' byte ranges.
        eng = self._engine
        prefix = eng.held_ids
        segs, _, delta = eng.feed_copy(delta_token_ids)
        state = eng.state
        return TokenSplit(prefix, delta, segs, state == REASONING or state == SEEDED, state == AWAITING,
                          eng.boundaries)

    def _finish_bytes(self) -> TokenSplit:
        eng = self._engine
        prefix = eng.held_ids
        segs, _ = eng.finish()
        state = eng.state
        return TokenSplit((), list(prefix), segs, state == REASONING or state == SEEDED, state == AWAITING,
                          eng.boundaries)

    @property
    def matches_bytes(self) -> bool:
        """Whether this parser matches markers over token bytes (some marker is
        not one whole token in its vocabulary) rather than by token id."""
        return self.tables.byte_plan is not None

    @property
    def state(self) -> str:
        """Where the parser is: ``"content"``, ``"reasoning"``, ``"seeded"`` (reasoning from
        the prompt, no start seen yet) or ``"awaiting"`` a start."""
        return STATE_NAMES[self._engine.state]

    @property
    def is_reasoning(self) -> bool:
        """Whether the next token would be reasoning (inside a block, or seeded by the prompt)."""
        return self._engine.state in (REASONING, SEEDED)

    @property
    def held_ids(self) -> tuple[int, ...]:
        """Tokens held as a possible delimiter prefix, decided by the next delta or ``finish()``."""
        return tuple(self._engine.held_ids)

    @property
    def formatter(self) -> LabelStripper | None:
        """The family's label stripper (Gemma 4's ``thought\\n``), or None."""
        return self._formatter

    @property
    def engine(self):
        """The backend engine object (compiled or pure) behind this parser."""
        return self._engine

    def __repr__(self) -> str:
        return f"<{type(self).__name__} family={self.family.name!r} backend={self.backend!r} state={self.state!r}>"


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "ReasoningParser"


_CLASSES: dict[Family, type[FamilyParser]] = {
    fam: type(_class_name(fam.name), (FamilyParser,), {"family": fam}) for fam in FAMILIES.values()
}


def parser_class(family: Family) -> type[FamilyParser]:
    """The ``FamilyParser`` subclass bound to ``family`` (made once per family, also
    for a family built at run time rather than taken from the table)."""
    entry = _BY_ID.get(id(family))
    if entry is not None and entry[0] is family:
        return entry[1]  # the per-request case: no hashing of the whole row
    if not isinstance(family, Family):
        raise TypeError(f"expected a reasoning_core Family, not {type(family).__name__}")
    cls = _CLASSES.get(family)
    if cls is None:
        cls = _CLASSES.setdefault(family, type(_class_name(family.name), (FamilyParser,), {"family": family}))
    if family is cls.family:
        _BY_ID[id(family)] = (family, cls)  # the entry keeps the family alive: its id stays its own
    return cls


_BY_ID: dict[int, tuple[Family, type[FamilyParser]]] = {}


def get_parser_cls(name: str) -> type[FamilyParser]:
    """The parser class for ``name`` (a family or an alias, any case; see ``available_parsers``).

    Raises ValueError for an unknown name and TypeError for a non-string.
    """
    if name.__class__ is str:
        cls = _BY_NAME.get(name)
        if cls is not None:
            return cls
    cls = parser_class(get_family(name))
    if len(_BY_NAME) < 1024:
        _BY_NAME[name] = cls  # (a valid name: get_family raised otherwise)
        _FAST[name] = (cls, _cache_key(cls.family))
    return cls


_BY_NAME: dict[str, type[FamilyParser]] = {}


def available_parsers() -> list[str]:
    """Every name ``create``/``get_parser`` accept, family names and aliases, sorted."""
    return family_names()


def get_parser(name: str, tokenizer: Any = None, *, backend: str | None = None) -> FamilyParser:
    """A parser for ``name`` (sync; an async-only tokenizer needs ``create``)."""
    # The per-request case -- a name, tokenizer and backend seen before --
    # makes the parser here from the recipe the first one cached on its
    # tables: what __init__ does, minus its checks and calls.
    fast = _FAST.get(name) if name.__class__ is str and (backend is None or backend.__class__ is str) else None
    if fast is not None:
        entry = _TABLES_BY_TOKENIZER_ID.get(id(tokenizer))
        if entry is not None and entry[0]() is tokenizer:
            tables = entry[1].get(fast[1])
            if tables is not None:
                recipe = tables._engines.get(_RECIPES)
                recipe = recipe.get(backend) if recipe is not None else None
                if recipe is not None and recipe[2] is fast[0]:
                    self = _new_object(fast[0])
                    eng = self._engine = recipe[0].copy()
                    self.backend = recipe[1]
                    self.tables = tables
                    self.stream = eng.stream
                    self.will_reason_after_prompt = eng.will_reason
                    self.split = eng.split
                    return self
    return get_parser_cls(name).from_tokenizer_sync(tokenizer, backend=backend)


_new_object = object.__new__
# Key of the recipes in Tables._engines: backend argument -> (template engine,
# backend name, the class whose parsers get_parser may make from them).
_RECIPES = object()
# name -> (its parser class, the key its tables are cached under per tokenizer)
_FAST: dict[str, tuple[type[FamilyParser], Any]] = {}


async def create(name: str, tokenizer: Any = None, *, backend: str | None = None) -> FamilyParser:
    """A parser for ``name`` with delimiters resolved by ``tokenizer`` (MAX's async factory).

    ``tokenizer`` may be sync or async; None works for families without
    delimiters.  ``backend`` is "cython", "python" or None for ``BACKEND``.
    """
    return await get_parser_cls(name).from_tokenizer(tokenizer, backend=backend)
