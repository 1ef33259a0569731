"""Text-level reasoning parsing: model output text in, reasoning and content text out.

The text parser is not a second matcher: a family's delimiter strings are
compiled, as code points, into the same tables the token engine walks, and
the engine's ``feed_text`` classifies every character.  So the text parser
and the token parser cannot disagree about family semantics (seeded starts,
terminators kept in content, harmony headers, answer frames), and the held
text is bounded by construction: the engine holds at most the longest
delimiter, and only while the held suffix can still become one.
"""
from __future__ import annotations

from typing import Optional

from . import _dispatch
from ._tables import (
    AWAITING,
    CONTENT,
    END,
    FRAME,
    HEADER,
    INSIDE,
    REASONING,
    SEEDED,
    SEG_CONTENT,
    SEG_HELD,
    SEG_REASONING,
    SEG_START,
    START,
    TERM,
    Tables,
    start_state,
)
from ._tokenizer import CODE_POINTS, tables_for
from .families import Family, get_family
from .parser import LabelStripper

__all__ = ["TextReasoningParser", "text_parser", "text_tables"]

DEFAULT_MAX_BUFFER = 65536


def text_tables(family: Family | str) -> Tables:
    """The family's delimiters as code-point tables (built once per family, cached
    with the token level's tables)."""
    return tables_for(family if isinstance(family, Family) else get_family(family), CODE_POINTS)


def _initial_state(fam: Family, starts_in_reasoning) -> int:
    if starts_in_reasoning is None:
        starts_in_reasoning = fam.starts_in_reasoning
    return start_state(starts_in_reasoning, fam.awaiting_start)


_REASONING_STATES = (REASONING, SEEDED)

# Bits of what ``_render`` saw: a start delimiter consumed, a reasoning block
# left (by an end, a terminator, a header or content after reasoning).
_OPENED, _ENDED = 1, 2


def _render(text: str, segs, fmt: Optional[LabelStripper], side: bool) -> tuple[str, str, str, int, bool]:
    """``(reasoning, content, held, seen, side)`` of ``text`` as classified by
    ``segs``; ``side`` is True while on the reasoning side (given: before the
    first segment; returned: after the last), ``seen`` the ``_OPENED``/``_ENDED``
    bits."""
    reasoning: list[str] = []
    content: list[str] = []
    held = ""
    seen = 0
    for kind, a, b in segs:
        if kind == SEG_REASONING:
            side = True
            piece = text[a:b]
            if fmt is not None:
                piece = fmt(piece)
                if piece is None:
                    continue
            reasoning.append(piece)
        elif kind == SEG_HELD:
            held = text[a:b]
        else:
            # Any non-reasoning segment ends the block: a label prefix still
            # pending (``thou`` then ``<channel|>``) was reasoning after all.
            if fmt is not None:
                pending = fmt.flush()
                if pending:
                    reasoning.append(pending)
                if kind == SEG_START:
                    fmt.begin_block()
            if kind == SEG_START:
                seen |= _OPENED
                side = True
                continue
            if side:
                seen |= _ENDED
                side = False
            if kind == SEG_CONTENT:
                content.append(text[a:b])
    return "".join(reasoning), "".join(content), held, seen, side


def _longest_delimiter(tables: Tables) -> int:
    """The longest delimiter of ``tables`` in code points (0 for none)."""
    found = tables._engines.get("longest")
    if found is None:
        kinds = (START, END, TERM, HEADER, FRAME)  # boundaries/enable only matter in prompts
        found = tables._engines["longest"] = max((len(p.ids) for p in tables.patterns if p.kind in kinds),
                                                 default=0)
    return found


def _setup(family, backend) -> tuple:
    """``(family, tables, least max_buffer, backend name, engine module, template
    engine)`` for a family (name or ``Family``) and backend, made once per pair:
    what every parser of the pair shares."""
    key = None
    if backend is None or backend.__class__ is str:
        if family.__class__ is str:
            key = (family, backend)
        elif isinstance(family, Family):
            key = (id(family), backend)  # a row is hashed field by field: key by identity
        found = _SETUPS.get(key)
        if found is not None and (key[0] is family or found[0] is family):
            return found
    fam = family if isinstance(family, Family) else get_family(family)
    tables = text_tables(fam)
    # Below the longest delimiter, a delimiter split across chunks would be
    # released as text before it completes (and the answer stay reasoning).
    minimum = max(_longest_delimiter(tables), 1)
    name, mod = _dispatch.resolve_backend(backend)
    template = tables._engines.get(name)
    if template is None:
        template = tables._engines.setdefault(name, mod.Engine(tables))
    found = (fam, tables, minimum, name, mod, template)
    if key is not None and len(_SETUPS) < 1024:
        # (an entry keyed by a Family's id keeps that Family alive: the id stays its own)
        _SETUPS[key] = found
    return found


_SETUPS: dict = {}


class TextReasoningParser:
    """Splits model output *text* into reasoning and content for one family.

    ``parse(text)`` is one-shot and independent of the streaming state.
    ``feed(chunk)`` streams: it returns ``(reasoning_delta, content_delta)``
    and holds back only a suffix that may still become a delimiter
    (at most the longest delimiter, in code points); ``finish()`` releases it
    to the current side.  ``max_buffer`` caps the held text; a value below
    the family's longest delimiter (``max_hold``) raises ValueError.
    Concatenated streaming output equals ``parse()`` for any chunking.  Whitespace is kept raw; a family label (Gemma 4's
    ``thought\\n``) is stripped from the start of every reasoning block.

    Per-request object: not safe to share across threads.
    """

    __slots__ = (
        "family",
        "max_buffer",
        "backend",
        "_initial",
        "_tables",
        "_mod",
        "_engine",
        "_feed_text",
        "_held",
        "_fmt",
        "_oneshot",
        "_side",
        "_seen",
        "_label_done",
    )

    def __init__(
        self,
        family: Family | str,
        *,
        starts_in_reasoning: bool | str | None = None,
        max_buffer: int = DEFAULT_MAX_BUFFER,
        backend: Optional[str] = None,
    ) -> None:
        fam, tables, minimum, self.backend, self._mod, template = _setup(family, backend)
        if max_buffer.__class__ is not int:
            if not isinstance(max_buffer, int) or isinstance(max_buffer, bool):
                raise TypeError(f"max_buffer must be an int, not {type(max_buffer).__name__}")
        if max_buffer < minimum:
            raise ValueError(
                f"max_buffer must be at least {minimum} for {fam.name} (its longest delimiter, in characters), "
                f"not {max_buffer}")
        self.family = fam
        self.max_buffer = max_buffer
        self._initial = _initial_state(fam, starts_in_reasoning)
        self._tables = tables
        # A copy of the per-tables template engine: no table checks per parser.
        self._engine = template.copy()
        self._feed_text = self._engine.feed_text_side
        self._fmt = LabelStripper(fam.label) if fam.label else None
        self._oneshot = None
        # "inside": the prompt opened the block, label included.
        self._label_done = starts_in_reasoning == INSIDE and isinstance(starts_in_reasoning, str)
        self.reset()

    # -- one shot -------------------------------------------------------------
    def parse(self, text: str) -> tuple[str, str]:
        """``(reasoning, content)`` of a complete text (streaming state untouched)."""
        if text.__class__ is not str and not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        eng = self._oneshot
        if eng is None:
            eng = self._oneshot = self._mod.Engine(self._tables)
        eng.set_state(self._initial)
        segs, _ = eng.feed_text(text)
        if self._fmt is None:
            # No label: each side is its segments' text in order, the held
            # tail (always the last segment) going to the side finish() would
            # give it.  Mostly one segment per side: one slice, no join copy.
            reasoning = []
            content = []
            for kind, a, b in segs:
                if kind == SEG_REASONING:
                    reasoning.append(text[a:b])
                elif kind == SEG_CONTENT:
                    content.append(text[a:b])
                elif kind == SEG_HELD:
                    (reasoning if eng.state in _REASONING_STATES else content).append(text[a:b])
            return "".join(reasoning), "".join(content)
        fmt = self._new_label()
        reasoning, content, held, _, side = _render(text, segs, fmt, self._initial in (REASONING, SEEDED))
        tail, _ = eng.finish()
        r2, c2, _, _, _ = _render(held, tail, fmt, side)
        pending = fmt.flush() if fmt is not None else None
        return reasoning + r2 + (pending or ""), content + c2

    # -- streaming --------------------------------------------------------------
    def feed(self, chunk: str) -> tuple[str, str]:
        """Classify the next chunk: ``(reasoning_delta, content_delta)``."""
        side = self._feed_text(chunk)  # raises TypeError for non-str
        # The common case (a chunk wholly on one side, nothing held) costs one
        # engine call, no lists and no slicing.
        if side.__class__ is int:
            if side == SEG_CONTENT:
                return "", chunk
            fmt = self._fmt
            if fmt is None:
                return chunk, ""
            return fmt(chunk) or "", ""
        return self._feed_slow(chunk, side[0])

    def _feed_slow(self, chunk: str, segs) -> tuple[str, str]:
        text = self._held + chunk if self._held else chunk
        reasoning, content, held, seen, self._side = _render(text, segs, self._fmt, self._side)
        self._seen |= seen
        self._held = held
        if len(held) > self.max_buffer:  # pragma: no cover - max_buffer >= the longest delimiter
            # Defensive: give up on the partial delimiter and release it as the current side.
            r2, c2 = self._release()
            return reasoning + r2, content + c2
        return reasoning, content

    def _release(self) -> tuple[str, str]:
        held = self._held if self._engine.held else ""
        segs, _ = self._engine.finish()
        self._held = ""
        reasoning, content, _, seen, self._side = _render(held, segs, self._fmt, self._side)
        self._seen |= seen
        return reasoning, content

    def finish(self) -> tuple[str, str]:
        """End of the text: held text (and a pending label prefix) go to the current side."""
        reasoning, content = self._release()
        if self._fmt is not None:
            pending = self._fmt.flush()
            if pending:
                reasoning += pending
        return reasoning, content

    def seed(self, state: int) -> None:
        """Start a new text in an engine state (a token-level parser's, for its decoder)."""
        self.reset()
        self._engine.set_state(state)
        self._side = state in (REASONING, SEEDED)

    def reset(self) -> None:
        """Start a new text: initial state, nothing held."""
        self._engine.set_state(self._initial)
        self._held = ""
        self._side = self._initial in (REASONING, SEEDED)
        self._seen = 0
        if self._fmt is not None:
            self._fmt.reset()
            if self._label_done:
                self._fmt.flush()

    def _new_label(self) -> Optional[LabelStripper]:
        if self._fmt is None:
            return None
        fmt = LabelStripper(self.family.label)
        if self._label_done:
            fmt.flush()
        return fmt

    # -- introspection ------------------------------------------------------------
    @property
    def held_text(self) -> str:
        """Text held back as a possible delimiter prefix (at most ``max_hold`` characters)."""
        return self._held

    @property
    def max_hold(self) -> int:
        """The longest delimiter in code points: the most text ever held (and the least ``max_buffer``)."""
        return _longest_delimiter(self._tables)

    @property
    def is_reasoning(self) -> bool:
        """Whether the next text would be reasoning (inside a block, or seeded by the prompt)."""
        return self._engine.state in (REASONING, SEEDED)

    @property
    def start_seen(self) -> bool:
        """A start delimiter was consumed in the text fed since the last reset
        (a block was opened by the output)."""
        return bool(self._seen & _OPENED)

    @property
    def end_seen(self) -> bool:
        """A reasoning block ended in the text fed since the last reset (by its
        end delimiter, a terminator or an answer header), whether the output
        or the initial state opened it."""
        return bool(self._seen & _ENDED)

    def __repr__(self) -> str:
        return f"<TextReasoningParser family={self.family.name!r} backend={self.backend!r}>"


def text_parser(
    name: str,
    *,
    starts_in_reasoning: bool | str | None = None,
    max_buffer: int = DEFAULT_MAX_BUFFER,
    backend: Optional[str] = None,
) -> TextReasoningParser:
    """A text-level parser for the family ``name`` (aliases accepted)."""
    # A name seen before, with the family's own start and no label stripper:
    # the parser is filled from what every parser of (name, backend) shares,
    # with a fresh engine (the arguments were checked when the entry was made).
    plain = (starts_in_reasoning is None and name.__class__ is str and max_buffer.__class__ is int
             and (backend is None or backend.__class__ is str))
    if plain:
        found = _FRESH.get((name, backend))
        if found is not None and max_buffer >= found[2]:
            return _fresh(found, max_buffer)
    parser = TextReasoningParser(get_family(name), starts_in_reasoning=starts_in_reasoning,
                                 max_buffer=max_buffer, backend=backend)
    if plain and parser._fmt is None and len(_FRESH) < 1024:
        fam, tables, minimum, be, mod, template = _setup(parser.family, backend)
        initial = parser._initial
        _FRESH[(name, backend)] = (fam, tables, minimum, be, mod, template, initial,
                                   initial in _REASONING_STATES, template.copy().state != initial)
    return parser


_FRESH: dict = {}


def _fresh(found: tuple, max_buffer: int, _new=object.__new__) -> TextReasoningParser:
    """A parser as ``TextReasoningParser(...)`` then ``reset()`` would make it, from a
    ``_FRESH`` entry: the same attributes, a fresh copy of the template engine."""
    fam, tables, _, backend, mod, template, initial, side, seed = found
    self = _new(TextReasoningParser)
    self.family = fam
    self.max_buffer = max_buffer
    self.backend = backend
    self._initial = initial
    self._tables = tables
    self._mod = mod
    self._engine = eng = template.copy()
    if seed:
        eng.set_state(initial)
    self._feed_text = eng.feed_text_side
    self._fmt = None
    self._oneshot = None
    self._label_done = False
    self._held = ""
    self._side = side
    self._seen = 0
    return self
