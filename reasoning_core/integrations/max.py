"""reasoning-core inside Modular MAX: reasoning and tool parsers under MAX's names.

``REASONING_PARSERS`` maps each name of MAX's reasoning registry to a subclass
of MAX's own ``max.pipelines.modeling.types.ReasoningParser``; ``TOOL_PARSERS``
maps tool-parser names to classes implementing MAX's ``ToolParser`` protocol
over ``reasoning_core.tools``.  ``register()`` adds them to MAX's registries as
``rc_<name>`` (``replace=True``: under MAX's own names), so
``await max.pipelines.lib.reasoning.create("rc_qwen3_5", tokenizer)`` works.

MAX's serving loop calls ``stream(delta, is_currently_reasoning)`` per chunk
and then ``span.extract_content`` / ``span.extract_reasoning`` on the chunk
(and on its log-probabilities).  Here ``stream`` is one compiled engine call,
and the result is a cached, immutable ``ParsedReasoningDelta`` (MAX's own
class) holding a span subclass of MAX's ``ReasoningSpan`` whose extraction is
a slice: for a one-token delta the whole sequence allocates nothing but the
lists MAX asks for.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Optional, Sequence

try:
    from max.pipelines.modeling.types import ParsedReasoningDelta as _MaxDelta
    from max.pipelines.modeling.types import ReasoningParser as _MaxReasoningParser
    from max.pipelines.modeling.types import ReasoningSpan as _MaxSpan
except ImportError as exc:  # pragma: no cover - exercised without MAX
    raise ImportError(
        "reasoning_core.integrations.max needs Modular MAX (pip install modular); "
        "the rest of reasoning_core works without it"
    ) from exc

from .._tables import END, START, TERM, ids_of_kind
from .._tokenizer import tables_for, tables_for_async
from ..families import ENGINE_PARSER_NAMES, Family, get_family
from ..parser import FamilyParser, parser_class
from .. import tools as _rc_tools
from ..tools import _base as _tool_base, _json as _tool_json
from . import REPLACE_ENV, replace_requested  # noqa: F401  (re-exported: the one switch)
from ._common import ArgHold as _ArgHold, regroup_held as _regroup_held

__all__ = [
    "REASONING_PARSERS",
    "TOOL_PARSERS",
    "RcMaxReasoningParser",
    "register",
    "family_of",
    "replace_requested",
    "architectures_path",
]

_ENGINE_NAMES: dict[str, str] = dict(ENGINE_PARSER_NAMES.get("max", {}))


def family_of(max_name: str) -> str:
    """Our family for a MAX reasoning-parser name (KeyError if not served)."""
    return _ENGINE_NAMES[max_name]


# ---------------------------------------------------------------------------
# Spans: MAX's classes, built once per (span, state) and shared
# ---------------------------------------------------------------------------

class _Span(_MaxSpan):
    """MAX's ``ReasoningSpan`` with extraction as plain slices.

    Immutable, so one instance serves every delta with the same indices.
    Extraction returns lists, as MAX's does.
    """

    __slots__ = ("_d0", "_d1", "_r0", "_r1")

    def __init__(self, d0: int, r0: int, r1: int, d1: int) -> None:  # noqa: D401 - MAX's checks, once
        super().__init__((d0, d1), (r0, r1))
        self._d0, self._d1, self._r0, self._r1 = d0, d1, r0, r1

    def extract_content(self, seq):
        d0 = self._d0
        d1 = self._d1
        if d0 == d1:
            return list(seq)
        if d0 == 0:
            return list(seq[d1:])
        return list(seq[:d0]) + list(seq[d1:])

    def extract_reasoning(self, seq):
        r0 = self._r0
        r1 = self._r1
        if r0 == r1:
            return []
        return list(seq[r0:r1])

    def __repr__(self) -> str:
        return f"ReasoningSpan(reasoning_with_delimiters={(self._d0, self._d1)}, reasoning={(self._r0, self._r1)})"


def _nothing(seq) -> list:
    return []


class _Content(_Span):
    """The empty span (the whole delta is content).  The extractors are
    C callables where they can be (no Python frame on the per-token path)."""

    __slots__ = ()

    extract_content = staticmethod(list)
    extract_reasoning = staticmethod(_nothing)


class _Reasoning(_Span):
    """A span covering the whole delta (no delimiter in it): all reasoning."""

    __slots__ = ()

    extract_content = staticmethod(_nothing)
    extract_reasoning = staticmethod(list)


_CACHE_LIMIT = 4096


def _delta_factory(formatter: Optional[Callable[[str], Optional[str]]]):
    """The engine's span callback: MAX ``ParsedReasoningDelta`` objects,
    made once per distinct (indices, state) and then looked up."""
    cache: dict[tuple, Any] = {}
    get = cache.get

    def make(d0: int, r0: int, r1: int, d1: int, still: bool):
        key = (d0, r0, r1, d1, still)
        hit = get(key)
        if hit is not None:
            return hit
        if d0 == d1:
            span = _Content(0, 0, 0, 0)
        elif still and d0 == r0 == 0 and r1 == d1:
            # Still reasoning with no delimiter: the whole delta (the engine
            # gives (0, 0, n, n)).  Not when reasoning ended without one (a
            # terminator such as a tool-call opener at r1: the rest is content).
            span = _Reasoning(d0, r0, r1, d1)
        else:
            span = _Span(d0, r0, r1, d1)
        out = _MaxDelta(span=span, is_still_reasoning=still, reasoning_text_formatter=formatter)
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[key] = out
        return out

    return make


# ---------------------------------------------------------------------------
# Per-name behaviour
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _Spec:
    """How MAX's parser of one name decides ``will_reason_after_prompt`` where
    it differs from our family's prompt scan, and its text delimiters."""

    start: Optional[str] = "<think>"
    end: Optional[str] = "</think>"
    # "scan": ours (right to left, the last decisive marker; turn boundaries stop it)
    # "end_absent": True unless the end marker appears anywhere in the prompt (MAX's
    #   minimax_m2 and laguna: a tool opener in the prompt must not disable reasoning)
    prompt_rule: str = "scan"
    # The answer when the scan finds no decisive marker (None: the family default)
    prompt_default: Optional[bool] = None
    # MAX's scan ignores the terminators (only start and end decide)
    prompt_terminators: bool = True
    # MAX's scan runs over the whole prompt (no turn boundary stops it)
    prompt_boundaries: bool = True
    # A pre-seeded state is reasoning without a start (MAX's inkling: the
    # prompt prefilled <|content_thinking|>); our row waits for the start.
    seeded_is_inside: bool = False
    # A prompt ending inside an open block makes a pre-seeded state reasoning
    # (MAX's gemma4: the template prefilled <|channel>thought).
    prompt_opens: bool = False
    # will_reason_after_prompt: True exactly when the prompt ends with this
    # text's ids (MAX's muse_glimmer: the generation prompt "<|start|>assistant",
    # after which the model writes its recipient)
    prompt_suffix: Optional[str] = None
    # Messages routed by their header's recipient (MAX's muse_glimmer)
    channels: bool = False


_SPECS: dict[str, _Spec] = {
    "deepseekv4": _Spec(prompt_default=False, prompt_terminators=False, prompt_boundaries=False),
    "gemma4": _Spec("<|channel>", "<channel|>", prompt_opens=True),
    "glm45": _Spec(prompt_default=True, prompt_boundaries=False),
    "inkling": _Spec("<|content_thinking|>", "<|end_message|>", prompt_default=False, prompt_boundaries=False,
                     seeded_is_inside=True),
    "kimik2_5": _Spec(prompt_default=False, prompt_boundaries=False),
    "laguna": _Spec(prompt_rule="end_absent"),
    "minimax_m2": _Spec(prompt_rule="end_absent"),
    "muse_glimmer": _Spec("to=self<|message|>", "<|eom|>", channels=True, prompt_suffix="<|start|>assistant"),
    "qwen3_5": _Spec(prompt_default=True, prompt_boundaries=False),
}


# ---------------------------------------------------------------------------
# The reasoning parser
# ---------------------------------------------------------------------------

class RcMaxReasoningParser(_MaxReasoningParser):
    """A MAX ``ReasoningParser`` over one reasoning-core family.

    Subclasses bind ``max_name`` and ``spec``.  ``stream`` is the compiled
    engine's bound method (set per instance); the deltas it returns are MAX's
    ``ParsedReasoningDelta`` holding MAX ``ReasoningSpan`` subclasses.
    """

    max_name: ClassVar[str] = ""
    spec: ClassVar[_Spec] = _Spec()
    family: ClassVar[Family] = get_family("passthrough")

    def __init__(self, parser: FamilyParser, *, prompt_suffix_ids: Optional[Sequence[int]] = None) -> None:
        if not isinstance(parser, FamilyParser):
            raise TypeError(f"expected a reasoning_core FamilyParser, not {type(parser).__name__}")
        self._parser = parser
        self._suffix = list(prompt_suffix_ids) if prompt_suffix_ids else None
        tables = parser.tables
        formatter = parser.formatter
        self._formatter = formatter
        # The engine's stream() with MAX's result types: one compiled call
        # and a dict look-up per delta.
        parser.engine.configure_stream(_delta_factory(formatter),
                                       None if formatter is None else formatter.begin_block)
        self.stream = parser.engine.stream
        starts = [s[0] for s in ids_of_kind(tables, START) if len(s) == 1]
        ends = [s[0] for s in ids_of_kind(tables, END) if len(s) == 1]
        terms = [s[0] for s in ids_of_kind(tables, TERM) if len(s) == 1] if self.spec.prompt_terminators else []
        self._start_ids = frozenset(starts)
        self._end_ids = frozenset(ends)
        self._decisive = {i: False for i in ends + terms}
        self._decisive.update({i: True for i in starts})
        self._prime = [starts[0]] if starts and (self.spec.seeded_is_inside or self.spec.prompt_opens) else None
        if self.spec.seeded_is_inside:
            self._open_block()

    def _open_block(self) -> None:
        """Mark this request's block as opened (the engine then reads a
        pre-seeded state as reasoning, not as awaiting the start)."""
        if self._prime is not None:
            self._parser.engine.stream(self._prime, False)

    # -- MAX API -----------------------------------------------------------------
    def stream(self, delta_token_ids: Sequence[int], is_currently_reasoning: bool = True):  # pragma: no cover
        """MAX ``stream()`` (instances use the engine's bound method directly)."""
        return self.stream(delta_token_ids, is_currently_reasoning)

    def will_reason_after_prompt(self, prompt_token_ids: Sequence[int]) -> bool:
        spec = self.spec
        if self._suffix is not None:
            n = len(self._suffix)
            return len(prompt_token_ids) >= n and list(prompt_token_ids[-n:]) == self._suffix
        if spec.prompt_opens:
            get = self._decisive.get
            for i in range(len(prompt_token_ids) - 1, -1, -1):
                d = get(prompt_token_ids[i])
                if d is not None:
                    if d:
                        self._open_block()
                        return True
                    break
        if spec.prompt_rule == "end_absent":
            ends = self._end_ids
            for t in prompt_token_ids:
                if t in ends:
                    return False
            return True
        if spec.prompt_boundaries and spec.prompt_default is None:
            return self._parser.will_reason_after_prompt(prompt_token_ids)
        get = self._decisive.get
        for i in range(len(prompt_token_ids) - 1, -1, -1):
            d = get(prompt_token_ids[i])
            if d is not None:
                return d
        if spec.prompt_default is not None:
            return spec.prompt_default
        return self._parser.will_reason_after_prompt(prompt_token_ids)

    def reset(self) -> None:
        self._parser.reset()
        if self.spec.seeded_is_inside:
            self._open_block()

    @classmethod
    async def from_tokenizer(cls, tokenizer: Any) -> "RcMaxReasoningParser":
        suffix = None
        if cls.spec.prompt_suffix is not None:
            suffix = _encode(tokenizer, cls.spec.prompt_suffix)
            if hasattr(suffix, "__await__"):
                suffix = await suffix
        return cls(parser_class(cls.family)(await tables_for_async(cls.family, tokenizer)), prompt_suffix_ids=suffix)

    @classmethod
    def from_tokenizer_sync(cls, tokenizer: Any) -> "RcMaxReasoningParser":
        suffix = None
        if cls.spec.prompt_suffix is not None:
            suffix = _encode(tokenizer, cls.spec.prompt_suffix)
            if hasattr(suffix, "__await__"):
                raise TypeError("this tokenizer encodes asynchronously: use `await from_tokenizer(...)`")
        return cls(parser_class(cls.family)(tables_for(cls.family, tokenizer)), prompt_suffix_ids=suffix)

    @classmethod
    async def reasoning_end_token_id(cls, tokenizer: Any) -> int | None:
        return await parser_class(cls.family).reasoning_end_token_id(tokenizer)

    @property
    def parser(self) -> FamilyParser:
        """The per-request reasoning-core parser."""
        return self._parser


class _SegmentSpan(_MaxSpan):
    """Routes the items carried over from the previous delta plus this delta's
    (token ids and log-probabilities alike, keyed by item type)."""

    def __init__(self, routes: list[str], carried: dict, held: dict) -> None:
        super().__init__((0, 0), (0, 0))
        self._routes = routes
        self._carried = carried
        self._held = held

    def _select(self, seq, want: int) -> list:
        if not len(seq):
            return []
        key = type(seq[0])
        items = self._carried.get(key, []) + list(seq)
        routes = self._routes
        held = [x for x, r in zip(items, routes) if r == "held"]
        if held:
            self._held[key] = held
        else:
            self._held.pop(key, None)
        return [x for x, r in zip(items, routes) if r == want]

    def extract_content(self, seq):
        return self._select(seq, "content")

    def extract_reasoning(self, seq):
        return self._select(seq, "reasoning")


# ---------------------------------------------------------------------------
# Muse Glimmer: channelled messages, routed by recipient
# ---------------------------------------------------------------------------

# A message is ``<|start|>assistant to=RECIPIENT<|message|>BODY`` closed by
# ``<|eom|>`` / ``<|eot|>``.  MAX's parser of this name reads the recipient
# off the header: ``self`` is reasoning, anything else (``user``, a tool
# channel ``functions.NAME``, or none) is content, whose tool calls the tool
# parser then finds; headers and framing tokens are dropped.  Inside a body a
# bare `` to=NAME<|message|>`` re-opens a channel, so body tokens that could
# still start one wait (across deltas) until they are decided.
_RECIPIENT = re.compile(r"to=([^\s<]+)")
_BARE_HEADER = re.compile(r"\s*to=([^\s<]+)")
_MAYBE_HEADER = re.compile(r"\s*(?:t|to|to=[^\s<]*)?")
# Body tokens held at most while they may still begin a bare header (see _route).
_HELD_LIMIT = 64

_CLOSED, _HEADER, _THINK, _ANSWER = 0, 1, 2, 3


class _ChannelRouter(RcMaxReasoningParser):
    """MAX's Muse Glimmer routing over this request's token ids."""

    def __init__(self, parser: FamilyParser, *, prompt_suffix_ids: Optional[Sequence[int]] = None,
                 channel_ids: Optional[Sequence[int]] = None,
                 decode: Optional[Callable[[Sequence[int]], str]] = None) -> None:
        if channel_ids is None or decode is None:
            raise TypeError("a Muse Glimmer parser needs the ids of <|start|>, <|message|>, <|eom|>, <|eot|> "
                            "and a decode function: build it with from_tokenizer()")
        if not isinstance(parser, FamilyParser):
            raise TypeError(f"expected a reasoning_core FamilyParser, not {type(parser).__name__}")
        self._parser = parser
        self._formatter = parser.formatter
        start, message, eom, eot = (int(i) for i in channel_ids)
        self._suffix = list(prompt_suffix_ids) if prompt_suffix_ids else None
        self._start_id, self._message_id = start, message
        self._boundaries = frozenset((start, eom, eot))
        self._specials = frozenset((start, message, eom, eot))
        self._decode = decode
        self._may_open: dict[int, bool] = {}
        self._shared: dict[tuple, Any] = {}
        self.stream = self._route
        self.reset()

    def reset(self) -> None:
        self._channel: Optional[int] = None
        self._header: list[int] = []
        self._held: list[int] = []
        self._carried: dict[type, list] = {}

    def _still(self) -> bool:
        return self._channel != _ANSWER

    def _opens(self, token_id: int) -> bool:
        """Whether this token alone could begin a bare header (cached)."""
        hit = self._may_open.get(token_id)
        if hit is None:
            hit = self._may_open[token_id] = _MAYBE_HEADER.fullmatch(self._decode([token_id])) is not None
        return hit

    def _route(self, delta_token_ids: Sequence[int], is_currently_reasoning: bool = True):
        if self._channel is None:
            self._channel = _HEADER if is_currently_reasoning else _ANSWER
        n = len(delta_token_ids)
        if not n:
            return _MaxDelta(span=_Content(0, 0, 0, 0), is_still_reasoning=self._still())
        ch = self._channel
        if not self._held and not self._carried and ch in (_THINK, _ANSWER):
            specials, opens = self._specials, self._opens
            for t in delta_token_ids:
                if t in specials or opens(t):
                    break
            else:
                # The whole delta is body of the open message: a shared span.
                key = (ch, n)
                hit = self._shared.get(key)
                if hit is None:
                    span = _Reasoning(0, 0, n, n) if ch == _THINK else _Content(0, 0, 0, 0)
                    hit = _MaxDelta(span=span, is_still_reasoning=ch == _THINK,
                                    reasoning_text_formatter=self._formatter)
                    if len(self._shared) < _CACHE_LIMIT:
                        self._shared[key] = hit
                return hit
        held = self._held
        routes = ["held"] * len(held)
        waiting = list(range(len(held)))   # route slots of the held ids, oldest first

        def settle(count: int, route: str) -> None:
            for i in waiting[:count]:
                routes[i] = route
            del waiting[:count], held[:count]

        decode = self._decode
        for t in delta_token_ids:
            routes.append("drop")
            if self._channel == _CLOSED and t not in self._boundaries:
                self._channel = _ANSWER   # an answer with no header (a grammar forced it)
            if t in self._boundaries:
                settle(len(waiting), "reasoning" if self._channel == _THINK else "content")
                self._channel = _HEADER if t == self._start_id else _CLOSED
                self._header = []
            elif t == self._message_id:
                if self._channel == _HEADER:
                    m = _RECIPIENT.search(decode(self._header))
                    self._channel = _THINK if m is not None and m.group(1) == "self" else _ANSWER
                else:
                    m = _BARE_HEADER.fullmatch(decode(held)) if held else None
                    if m is not None:
                        settle(len(waiting), "drop")
                        self._channel = _THINK if m.group(1) == "self" else _ANSWER
                    else:
                        settle(len(waiting), "reasoning" if self._channel == _THINK else "content")
            elif self._channel == _HEADER:
                self._header.append(t)
            else:
                routes[-1] = "held"
                waiting.append(len(routes) - 1)
                held.append(t)
                body = "reasoning" if self._channel == _THINK else "content"
                if len(held) > _HELD_LIMIT:
                    # A bare header may follow any run of blanks; holding the whole run
                    # would make every call re-read it.  Past the limit the oldest are
                    # body (MAX would drop them with a header that followed: blanks only).
                    settle(len(held) - _HELD_LIMIT, body)
                while held and (_MAYBE_HEADER.fullmatch(decode(held)) is None):
                    settle(1, body)
        carried, self._carried = self._carried, {}
        return _MaxDelta(span=_SegmentSpan(routes, carried, self._carried), is_still_reasoning=self._still(),
                         reasoning_text_formatter=self._formatter)

    @classmethod
    async def from_tokenizer(cls, tokenizer: Any) -> "_ChannelRouter":
        ids = []
        for text in ("<|start|>", "<|message|>", "<|eom|>", "<|eot|>", cls.spec.prompt_suffix):
            got = _encode(tokenizer, text)
            if hasattr(got, "__await__"):
                got = await got
            ids.append(got)
        return cls._build(tokenizer, ids, await tables_for_async(cls.family, tokenizer))

    @classmethod
    def from_tokenizer_sync(cls, tokenizer: Any) -> "_ChannelRouter":
        ids = []
        for text in ("<|start|>", "<|message|>", "<|eom|>", "<|eot|>", cls.spec.prompt_suffix):
            got = _encode(tokenizer, text)
            if hasattr(got, "__await__"):
                raise TypeError("this tokenizer encodes asynchronously: use `await from_tokenizer(...)`")
            ids.append(got)
        return cls._build(tokenizer, ids, tables_for(cls.family, tokenizer))

    @classmethod
    def _build(cls, tokenizer: Any, ids: list, tables: Any) -> "_ChannelRouter":
        *channel, suffix = ids
        for text, got in zip(("<|start|>", "<|message|>", "<|eom|>", "<|eot|>"), channel):
            if len(got) != 1:
                raise ValueError(f"{cls.__name__}: {text} is not one token in this tokenizer")
        # stream() is synchronous: decode with the Hugging Face tokenizer a
        # MAX pipeline tokenizer wraps (or the tokenizer itself).
        hf = getattr(tokenizer, "delegate", None) or tokenizer
        decode = getattr(hf, "decode", None)
        if decode is None:
            raise TypeError(f"{type(tokenizer).__name__} cannot decode token ids")
        return cls(parser_class(cls.family)(tables), prompt_suffix_ids=suffix,
                   channel_ids=[g[0] for g in channel], decode=decode)


def _encode(tokenizer: Any, text: str):
    """Ids of ``text`` (no special tokens added), or an awaitable of them."""
    enc = getattr(tokenizer, "encode", None)
    if enc is None:
        raise TypeError(f"{type(tokenizer).__name__} cannot encode text")
    out = enc(text, add_special_tokens=False)
    if hasattr(out, "__await__"):
        async def ids():
            r = await out
            return [int(i) for i in (r.ids if hasattr(r, "ids") else r)]
        return ids()
    return [int(i) for i in (out.ids if hasattr(out, "ids") else out)]


def _make_class(name: str, spec: _Spec) -> type[RcMaxReasoningParser]:
    fam = get_family(_ENGINE_NAMES[name])
    cls_name = "".join(p.capitalize() for p in re.split(r"[_\-]", name)) + "RcReasoningParser"
    base = _ChannelRouter if spec.channels else RcMaxReasoningParser
    return type(cls_name, (base,), {
        "max_name": name, "spec": spec, "family": fam, "__module__": __name__,
        "REASONING_START": spec.start, "REASONING_END": spec.end,
    })


REASONING_PARSERS: dict[str, type[RcMaxReasoningParser]] = {
    name: _make_class(name, spec) for name, spec in _SPECS.items() if name in _ENGINE_NAMES
}

# ---------------------------------------------------------------------------
# Tool parsers: MAX's registry names over reasoning_core.tools
# ---------------------------------------------------------------------------

# MAX 26.7 tool-parser name -> the module defining MAX's own class (its class
# attributes and grammar hooks -- SECTION_BEGIN, XGRAMMAR_FORMAT,
# generate_tool_call_grammar -- are inherited, so constrained decoding is unchanged).
_MAX_TOOL_MODULES: dict[str, str] = {
    "deepseekv3": "max.pipelines.architectures.deepseekV3.tool_parser",
    "deepseekv3_1": "max.pipelines.architectures.deepseekV3.tool_parser",
    "deepseekv4": "max.pipelines.architectures.deepseekV4.tool_parser",
    "gemma4": "max.pipelines.architectures.gemma4.tool_parser",
    "glm45": "max.pipelines.architectures.glm5_1.tool_parser",
    "inkling": "max.pipelines.architectures.inkling.tool_parser",
    "kimik2_5": "max.pipelines.architectures.kimik2_5_modulev3.tool_parser",
    "laguna": "max.pipelines.architectures.laguna.tool_parser",
    "llama": "max.serve.parser.llama_tool_parser",
    "minimax_m2": "max.pipelines.architectures.minimax_m2.tool_parser",
    "muse_glimmer": "max.pipelines.architectures.muse_glimmer.tool_parser",
    "qwen3_5": "max.pipelines.architectures.qwen3_5.tool_parser",
}


def _native_tool_classes() -> dict[str, type]:
    """MAX's own tool-parser classes by registry name (importing a module registers it)."""
    import importlib

    from max.pipelines.lib import tool_parsing as lib

    for mod in sorted(set(_MAX_TOOL_MODULES.values())):
        try:
            importlib.import_module(mod)
        except Exception:  # noqa: BLE001 - a module this MAX build cannot import: served without grammar hooks
            continue
    return {n: lib._TOOL_PARSERS[n] for n in _MAX_TOOL_MODULES if n in lib._TOOL_PARSERS}


def _max_tool_types():
    from max.pipelines.modeling.types import tool_parsing as t

    return t.ParsedToolCall, t.ParsedToolCallDelta, t.ParsedToolResponse


class RcMaxToolParser:
    """MAX's ``ToolParser`` protocol over one ``reasoning_core.tools`` format,
    returning MAX's own result dataclasses.  ``finish()`` (ours) ends a stream:
    held marker prefixes are released and a last unterminated call that parses
    is completed."""

    max_name: ClassVar[str] = ""
    tool_format: ClassVar[str] = ""
    # One-shot content beside calls is whitespace-trimmed by every MAX 26.7
    # tool parser but deepseekv4's.
    trims_content: ClassVar[bool] = True

    def __init__(self) -> None:
        native = self._native_base()
        if native is not None:
            try:
                native.__init__(self)
            except Exception:  # noqa: BLE001 - grammar state only; parsing is ours
                pass
        self._rc = _rc_tools.create(self.tool_format)
        self._types = _max_tool_types()
        # parse_delta building MAX's ParsedToolCallDelta directly (the scanner's
        # checked fast builder, or its constructor; the scanner in use: a test may swap it)
        self._step = _tool_base._scan.step
        self._delta_t = self._types[1]

    @classmethod
    def _native_base(cls) -> Optional[type]:
        for base in cls.__mro__[1:]:
            if base is not RcMaxToolParser and base is not object and not issubclass(base, RcMaxToolParser):
                return base
        return None

    def parse_complete(self, response: str):
        call_t, _, resp_t = self._types
        res = self._rc.parse_complete(response)
        content = res.content
        if res.tool_calls and content is not None and self.trims_content:
            # MAX's parser of this name trims the text before its calls
            # (whitespace only).
            content = content.strip() or None
        return resp_t(content=content,
                      tool_calls=[call_t(id=c.id, name=c.name, arguments=c.arguments) for c in res.tool_calls])

    # MAX's per-delta method, compiled (or its twin): a non-empty str delta is
    # one step of the scanner in _step, building MAX's ParsedToolCallDelta
    # directly, with no Python frame; everything else goes to _parse_other.
    parse_delta = _tool_json.SCAN.max_tool_step

    def _parse_other(self, delta: Any):
        """The general path of ``parse_delta``."""
        out = self._rc.parse_delta(delta)  # its checks: a str subclass, an empty delta, a wrong type
        if out is None:
            return None
        d_t = self._types[1]
        return [d_t(index=d.index, id=d.id, name=d.name, arguments=d.arguments, content=d.content) for d in out]

    def finish(self):
        d_t = self._types[1]
        return [d_t(index=d.index, id=d.id, name=d.name, arguments=d.arguments, content=d.content)
                for d in self._rc.finish()]

    def flush(self) -> Optional[str]:
        """MAX's end-of-stream hook (its chat route calls it once generation is
        done, on every parser it sees as a ``StructuralTagToolParser``; ours all
        are): the text we held back as a possible marker prefix, or ``None``.

        Ends the stream like ``finish()``; only text can travel through this
        hook, so a call left unterminated keeps the arguments already streamed.
        """
        content = "".join([d.content for d in self._rc.finish() if d.content])
        return content or None

    def reset(self) -> None:
        self._rc.reset()

    def set_streaming_tool_schemas(self, schemas) -> None:
        self._rc.set_streaming_tool_schemas(dict(schemas) if schemas is not None else None)


class _HeldArgsMax(RcMaxToolParser):
    """A parser whose MAX namesake (``qwen3_5``) sends a call's arguments only
    at structural points: ``{`` with the name at ``<function=NAME>``, each
    parameter as one ``"key":value`` piece when its ``</parameter>`` comes,
    ``}`` at ``</function>``; a delta in between gives ``[]``.  Ours sends at
    the same deltas: inside an open call a delta that cannot complete one of
    those closers is kept unread and answered ``[]``; it is read with the
    delta that completes one, and what our parser gives for the call in
    between goes out then, in one piece.  Each character is still read once
    by our parser (the arguments do not depend on the chunking); ``finish``
    and ``flush`` read what is kept."""

    hold_closers: ClassVar[tuple] = ("</parameter>", "</function>")

    def __init__(self) -> None:
        super().__init__()
        self._hold = _ArgHold(self.hold_closers)
        self._held: Optional[int] = None  # index of the open call whose arguments are held
        self._opend: list[str] = []       # its argument pieces read and not sent yet

    # MAX's per-delta method, compiled (or its twin): a delta that cannot
    # complete a closer (no ``>``) while a call's arguments are held is kept
    # and answered ``[]`` with no Python frame; every other delta goes to
    # _held_parse.
    parse_delta = _tool_json.SCAN.max_held_step

    def _held_parse(self, delta: str):
        if self._held is not None and type(delta) is str:
            if self._hold.keeps(delta):
                return []
        elif type(delta) is not str:
            if isinstance(delta, str):  # a str subclass: its text, after what is kept
                return self.parse_delta(str.__str__(delta))
            return super().parse_delta(delta)  # its checks: a wrong type
        elif not delta:
            return super().parse_delta(delta)
        return self._read(delta)

    def _read(self, text: str, final: bool = False):
        text, at_close = self._hold.take_read(text)
        rc = self._rc
        out = self._step(rc, text, self._delta_t) if text else []
        if final:
            at_close = True
            out = (out or []) + self._finish_deltas()
        if out is None:
            if not self._opend:
                return None
            out = [self._delta_t(index=self._held, content=text)]
        res, self._held = _regroup_held(out, self._held, self._opend, self._delta_t, rc._cur is not None, at_close)
        return res

    def _finish_deltas(self) -> list:
        d_t = self._delta_t
        return [d_t(index=d.index, id=d.id, name=d.name, arguments=d.arguments, content=d.content)
                for d in self._rc.finish()]

    def finish(self):
        return self._read("", final=True)

    def flush(self) -> Optional[str]:
        content = "".join([d.content for d in self._read("", final=True) if d.content])
        return content or None

    def reset(self) -> None:
        super().reset()
        self._hold.reset()
        self._held = None
        self._opend.clear()


# MAX's parsers of these names send arguments only at structural points.
_HELD_ARGS_MAX = {"qwen3_5"}


def _tool_classes() -> dict[str, type]:
    from .. import tools as rc_tools

    served = set(rc_tools.available())
    natives = _native_tool_classes()
    out: dict[str, type] = {}
    for name in _MAX_TOOL_MODULES:
        if name not in served:
            continue
        native = natives.get(name)
        bases = (_HeldArgsMax if name in _HELD_ARGS_MAX else RcMaxToolParser,) + ((native,) if native is not None else ())
        cls_name = "".join(p.capitalize() for p in re.split(r"[_\-]", name)) + "RcToolParser"
        attrs: dict[str, Any] = {"max_name": name, "tool_format": name, "__module__": __name__,
                                 "trims_content": name != "deepseekv4"}
        if native is None or not issubclass(native, _structural_base()):
            # MAX reads these off every StructuralTagToolParser (its grammar
            # region); with them empty it finds the same region as for MAX's
            # own standalone class of this name (a CALL_BEGIN, or none).
            for attr in ("SECTION_BEGIN", "SECTION_END", "CALL_BEGIN", "CALL_END"):
                attrs[attr] = getattr(native, attr, "") or ""
            attrs["ENFORCE_TOOL_REGION_TO_EOS"] = False
        out[name] = type(cls_name, bases, attrs)
    return out


def _structural_base() -> type:
    from max.pipelines.lib.tool_parsing import StructuralTagToolParser

    return StructuralTagToolParser


# MAX's chat route releases held text at the end of a stream only through
# ``flush()`` on a ``StructuralTagToolParser``: every class here is one
# (virtually, so none of MAX's base-class parsing runs), whatever MAX's class
# of the same name is.
_structural_base().register(RcMaxToolParser)


TOOL_PARSERS: dict[str, type] = _tool_classes()


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------

def _reasoning_registry() -> dict:
    from max.pipelines.lib import reasoning as lib

    return lib._REASONING_PARSERS


def register(replace: bool = False) -> None:
    """Add every class to MAX's registries: ``rc_<name>``, or MAX's own names
    with ``replace=True`` (replacing MAX's parsers).  Idempotent."""
    reg = _reasoning_registry()
    for name, cls in REASONING_PARSERS.items():
        key = name if replace else f"rc_{name}"
        if reg.get(key) is not cls:
            reg[key] = cls
    if TOOL_PARSERS:
        _register_tools(replace)


def _register_tools(replace: bool) -> None:
    from max.pipelines.lib import tool_parsing as lib

    reg = lib._TOOL_PARSERS
    for name, cls in TOOL_PARSERS.items():
        key = name if replace else f"rc_{name}"
        if reg.get(key) is not cls:
            reg[key] = cls



def architectures_path() -> str:
    """The path to give ``max serve --custom-architectures`` (a module in this
    package that registers our parsers before MAX looks names up)."""
    from .max_architectures import PATH

    return PATH


if __name__ == "__main__":  # pragma: no cover - a command-line convenience
    import argparse

    _ap = argparse.ArgumentParser(prog="python -m reasoning_core.integrations.max")
    _ap.add_argument("--architectures-path", action="store_true",
                     help="print the path for `max serve --custom-architectures`")
    if _ap.parse_args().architectures_path:
        print(architectures_path())
    else:
        _ap.print_help()
