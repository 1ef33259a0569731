"""Token deltas in, OpenAI-style reasoning/content text deltas out.

``ReasoningStreamDecoder`` splits each delta with a stateful
``FamilyParser`` (as ``split()`` does), then decodes each side with its own
incremental, UTF-8-safe detokenizer: a multibyte character whose bytes are
spread over several byte-level tokens is emitted once, whole, when its last
byte arrives — never half, never as U+FFFD.  Each side is decoded on its own
so a delimiter between them cannot glue their bytes together.  With a
byte-level tokenizer, a token that is whole characters on its own, met with
nothing pending, is its text from a per-tokenizer table (what DecodeStream
would give, without stepping it).

Ids are checked against the tokenizer before anything is consumed, so a
rejected ``push()`` leaves the decoder exactly as it was.  Special tokens
(BOS/EOS, padding) are skipped as servers skip them, unless asked otherwise.
"""
from __future__ import annotations

import weakref
from operator import itemgetter

from typing import Any, Sequence

from ._shared import brief
from . import _dispatch
from ._input import to_int_list
from ._tables import SEG_CONTENT, SEG_HELD, SEG_REASONING, SEG_START
from .families import ROLES
from .parser import FamilyParser
from .text import TextReasoningParser

__all__ = ["ReasoningStreamDecoder", "StreamDelta"]

_FIELDS = ("reasoning", "reasoning_content")
_REPLACEMENT = "\ufffd"
# A UTF-8 character is at most 4 bytes and every byte-level token carries at
# least one, so in valid text an unfinished character holds back at most
# UNFINISHED_SPAN tokens after the last complete one.  A multi-token step that
# ends inside a character is settled at once: the complete characters before
# it go out.  Past MAX_PENDING undecodable tokens the older ones hold bytes
# that can never become a character, and are released too, as U+FFFD; but
# only text that no later byte can change is ever released.
UNFINISHED_SPAN = 3
MAX_PENDING = 8
# How far back from the end a settle looks for such a point.
_SETTLE_SCAN = MAX_PENDING + 1
# Ids at or above 2**32 are refused by every tokenizer we know.
_ID_LIMIT = 2**32


class StreamDelta(tuple):
    """The text one step adds to each side (either may be empty).

    An immutable ``(reasoning, content, field)`` tuple: built once per token on
    the hot path, so it is as cheap to make as Python allows.

    A step with nothing to send is falsy: both sides empty (a delimiter token,
    a token held as a possible delimiter prefix, the first bytes of a character
    split across tokens).  A server loop skips it rather than sending an empty
    delta::

        delta = decoder.push(ids)
        if delta:
            send({"choices": [{"delta": delta.to_openai_delta()}]})
    """

    __slots__ = ()

    def __new__(cls, reasoning: str = "", content: str = "", field: str = "reasoning") -> "StreamDelta":
        return _new_tuple(cls, (reasoning, content, field))

    reasoning = property(itemgetter(0), doc="reasoning text of this step")
    content = property(itemgetter(1), doc="content text of this step")
    field = property(itemgetter(2), doc='key for the reasoning text: "reasoning" or "reasoning_content"')

    def to_openai_delta(self) -> dict[str, str]:
        """The ``choices[0].delta`` dict an OpenAI-compatible server sends; empty fields omitted.

        ``{}`` for a step with nothing to send (the delta is falsy): check the
        delta (``if delta:``) and skip such a step instead of sending ``{}``.
        """
        out: dict[str, str] = {}
        if self[0]:
            out[self[2]] = self[0]
        if self[1]:
            out["content"] = self[1]
        return out

    def __bool__(self) -> bool:
        """Whether this step has text to send (on either side)."""
        return bool(self[0] or self[1])

    def __repr__(self) -> str:
        return f"StreamDelta(reasoning={self[0]!r}, content={self[1]!r})"


_new_tuple = tuple.__new__


try:
    from tokenizers import Tokenizer as _Tokenizer
    from tokenizers.decoders import ByteLevel as _ByteLevel
    from tokenizers.decoders import DecodeStream
except ImportError:  # pragma: no cover - tokenizers is optional
    _Tokenizer = _ByteLevel = DecodeStream = None

# A token text table entry not filled in yet (see _TokenizerFacts.token_texts).
_UNSEEN = False


def _learn(texts: list, tok, skip_special_tokens: bool, t: int) -> str | None:
    """Fill in (and return) the token text table's entry for id ``t``."""
    text = tok.decode([t], skip_special_tokens=skip_special_tokens)
    # U+FFFD anywhere: bytes that are no whole character on their own (or a
    # replacement character the token spells, which DecodeStream holds back too).
    entry = text if text and _REPLACEMENT not in text else None
    texts[t] = entry
    return entry


def _fast_tokenizer(tokenizer: Any):
    """The ``tokenizers.Tokenizer`` behind ``tokenizer``, or None."""
    if _Tokenizer is None:  # pragma: no cover
        return None
    for cand in (tokenizer, getattr(tokenizer, "backend_tokenizer", None), getattr(tokenizer, "_tokenizer", None)):
        if isinstance(cand, _Tokenizer):
            return cand
    return None


def _decode_after(decode, ctx: list[int], ids: list[int]) -> str:
    """The text ``ids`` add after the context ``ctx`` (already emitted ids)."""
    if ctx:
        prefix = decode(ctx)
        text = decode(ctx + ids)
        if text.startswith(prefix):
            return text[len(prefix):]
    # No context, or context that decodes differently in company.
    return decode(ids)


def _context(decode, ids: list[int], size: int) -> list[int]:
    """The last ids of emitted text ``ids`` (which start at a character), trimmed
    when longer than ``4 * size`` to about ``size`` ids that start at a character.

    A context that starts inside a character would decode as U+FFFD and,
    with byte-fallback decoders, spoil the whole run of byte tokens it is in.
    """
    if len(ids) <= 4 * size:
        return ids
    # A character is at most 4 byte tokens; look a little further for ill-formed bytes.
    for j in range(size, min(len(ids), size + 12) + 1):
        tail = ids[-j:]
        if not decode(tail).startswith(_REPLACEMENT):
            return tail
    return []  # no character start found: no context rather than a broken one


class _Detokenizer:
    """Incremental decoding state shared by both detokenizers.

    ``_ctx`` holds ids of already emitted text, starting at a character
    (some decoders depend on the previous token: SentencePiece's leading
    space); the stream detokenizer keeps its last emitted ids whole and trims
    them only when they are needed;
    ``_pending`` the ids after it that do not decode to finished text yet.
    """

    __slots__ = ("_decode", "_ctx", "_pending")

    CONTEXT = 4

    def _settle(self) -> str:
        """Emit the part of the pending ids that no later token can change.

        Called when the pending ids (undecodable as a whole) come from a
        multi-token step or exceed MAX_PENDING.  A cut after k pending ids is
        final when the text there ends in a complete character (a clean cut;
        in valid text there is one within the last UNFINISHED_SPAN tokens).
        Past MAX_PENDING a cut may also fall after ill-formed bytes, where
        decoding both sides apart gives the same text as decoding them
        together, but never among the last UNFINISHED_SPAN tokens, which may
        still be the start of a character (byte-fallback decoders show such a
        start as one U+FFFD per byte, so "same text" alone would not tell).
        The last such cut is taken; it never falls inside a character.
        """
        decode, pending = self._decode, self._pending
        ctx = self._ctx = _context(decode, self._ctx, self.CONTEXT)
        n = len(pending)
        prefix = decode(ctx) if ctx else ""

        def after(ids: list[int]) -> str:
            if ctx:
                text = decode(ctx + ids)
                if text.startswith(prefix):
                    return text[len(prefix):]
            return decode(ids)

        whole = None
        invalid_cut = n - UNFINISHED_SPAN if n > MAX_PENDING else 0
        for k in range(n - 1, max(n - _SETTLE_SCAN, 0), -1):
            head = after(pending[:k])
            if head and not head.endswith(_REPLACEMENT):
                return head + self._advance(k, True, prefix + head)
            if k <= invalid_cut:
                if whole is None:
                    whole = after(pending)
                if head + decode(pending[k:]) == whole:
                    return head + self._advance(k, False, "")
        if whole is None:
            whole = after(pending)
        if not whole.endswith(_REPLACEMENT):
            # Nothing unfinished (tokens with no text of their own): all final.
            return whole + self._advance(n, True, None)
        return ""  # still one unfinished character (or no safe cut yet): hold

    def _advance(self, k: int, clean: bool, emitted: str | None) -> str:
        """The first ``k`` pending ids were emitted.

        ``clean``: their text ended in a whole character, so they stay as
        context.  ``emitted``: the text of the context and of what was just
        emitted (for _StreamDetokenizer; None when not known).
        """
        done = self._pending[:k]
        self._pending = self._pending[k:]
        # After ill-formed bytes, start afresh: such context cannot anchor a diff.
        self._ctx = _context(self._decode, self._ctx + done, self.CONTEXT) if clean else []
        return ""

    def flush(self) -> str:
        """End of a block: pending ids go out as the full decode has them (U+FFFD for broken bytes)."""
        if not self._pending:
            return ""
        self._ctx = _context(self._decode, self._ctx, self.CONTEXT)
        text = _decode_after(self._decode, self._ctx, self._pending)
        return text + self._advance(len(self._pending), not text.endswith(_REPLACEMENT), None)


class _StreamDetokenizer(_Detokenizer):
    """``tokenizers.decoders.DecodeStream`` plus settling and a flush for the end of the stream."""

    __slots__ = ("_tok", "_stream", "_skip", "_strip", "_texts")

    def __init__(self, tok, skip_special_tokens: bool, decode=None, texts: list | None = None) -> None:
        self._tok = tok
        self._skip = skip_special_tokens
        # Made when first stepped: a byte-level tokenizer's whole-character
        # tokens never need it.
        self._stream = None
        if decode is None:
            facts = _facts(tok)
            decode = facts.decode(skip_special_tokens)
            texts = facts.token_texts(skip_special_tokens)
        self._decode = decode
        # A byte-level tokenizer's token texts: with nothing pending, a token
        # whose bytes are whole characters adds just its text, which is what
        # DecodeStream would give, without stepping it.  (Its state stays
        # right: a stream that last emitted whole characters decodes the
        # next tokens the same whatever came between.)
        self._texts = texts
        # DecodeStream keeps ids of an unfinished character to itself; we
        # mirror them so settling and flush() can work on them.
        self._pending: list[int] = []
        self._ctx: list[int] = []
        # Text DecodeStream will repeat at the start of its next output (after a settle).
        self._strip = ""

    def step(self, ids: list[int]) -> str:
        texts = self._texts
        if texts is not None and not self._pending:
            out = self._known_text(texts, ids)
            if out is not None:
                return out
        stream = self._stream
        if stream is None:
            stream = self._stream = DecodeStream(skip_special_tokens=self._skip)
        # DecodeStream steps a single int markedly faster than a one-id list.
        out = stream.step(self._tok, ids[0] if len(ids) == 1 else ids)
        if out is None or self._pending:
            return self._after(out, ids)
        # Context for settling and flush(), trimmed when used (the caller's
        # list itself in the per-token case: a copy would cost more than the rest).
        self._ctx = ids
        return out

    def _known_text(self, texts: list, ids: list[int]) -> str | None:
        """The text of ``ids`` from the token text table when every one of them
        adds whole characters of its own; None otherwise."""
        n = len(texts)
        parts = []
        for t in ids:
            text = texts[t] if t < n else None
            if text is _UNSEEN:
                text = _learn(texts, self._tok, self._skip, t)
            if text is None:
                return None
            parts.append(text)
        if len(parts) == 1:
            return parts[0]
        return "".join(parts) if parts else None

    def _after(self, out: str | None, ids: list[int]) -> str:
        """The rest of ``step`` once DecodeStream gave ``out`` for ``ids``."""
        if out is None:
            self._pending.extend(ids)
            if len(ids) > 1 or len(self._pending) > MAX_PENDING:
                return self._settle()
            return ""
        if self._pending:
            ids = self._pending + ids
            self._pending = []
            if self._strip:
                strip, self._strip = self._strip, ""
                if out.startswith(strip):
                    out = out[len(strip):]
        self._ctx = ids
        return out

    def _advance(self, k: int, clean: bool, emitted: str | None) -> str:
        # DecodeStream's own state must match what was emitted.
        ctx, done = self._ctx, self._pending[:k]
        _Detokenizer._advance(self, k, clean, emitted)
        tok, skip = self._tok, self._skip
        if self._pending and emitted is not None:
            # Ids still pending: a stream holding the context, the emitted ids
            # and the pending ones, as not yet emitted; its next output starts
            # with ``emitted`` (the text of the first two), which is cut off.
            # No decoding needed here.  After ill-formed bytes: the pending alone.
            held = ctx + done + self._pending if clean else list(self._pending)
            self._stream = DecodeStream(ids=held, skip_special_tokens=skip)
            self._strip = emitted if clean else ""
            return ""
        # Otherwise (the block ended, or all was final): a fresh stream primed
        # with the context by stepping through it.
        stream = DecodeStream(skip_special_tokens=skip)
        self._strip = ""
        if self._ctx and stream.step(tok, self._ctx) is None:
            stream = DecodeStream(skip_special_tokens=skip)
            self._ctx = []
        self._stream = stream
        if self._pending and stream.step(tok, self._pending) is not None:
            # The rest decodes on its own after all: it is final too.
            return _Detokenizer.flush(self)
        return ""


class _WindowDetokenizer(_Detokenizer):
    """Generic incremental decoding over ``tokenizer.decode(ids)``.

    Decodes the pending ids after a little context and emits the new text
    once it ends in a whole character; text ending in U+FFFD (an incomplete
    byte sequence) is held until the character completes.
    """

    __slots__ = ()

    def __init__(self, tokenizer: Any, skip_special_tokens: bool) -> None:
        dec = getattr(tokenizer, "decode", None)
        if not callable(dec):
            raise TypeError(f"{type(tokenizer).__name__} has no decode(ids) method")

        def decode(ids: list[int]) -> str:
            try:
                return dec(ids, skip_special_tokens=skip_special_tokens)
            except TypeError:
                return dec(ids)

        self._decode = decode
        self._ctx: list[int] = []
        self._pending: list[int] = []

    def step(self, ids: list[int]) -> str:
        pending = self._pending + ids if self._pending else list(ids)
        text = _decode_after(self._decode, self._ctx, pending)
        if text and not text.endswith(_REPLACEMENT):
            # A few ids, always starting at a character: whole emitted pieces.
            ctx = self._ctx + pending
            if len(ctx) > self.CONTEXT:
                ctx = pending if len(pending) <= 2 * self.CONTEXT else _context(self._decode, pending, 1)
            self._ctx = ctx
            self._pending = []
            return text
        self._pending = pending
        if len(ids) > 1 or len(pending) > MAX_PENDING:
            return self._settle()
        return ""


def _detokenizer(tokenizer: Any, skip_special_tokens: bool, facts: Any = None):
    if facts is None:
        facts = _facts(tokenizer)
    if facts.fast is not None:
        return _StreamDetokenizer(facts.fast, skip_special_tokens, facts.decode(skip_special_tokens),
                                  facts.token_texts(skip_special_tokens))
    return _WindowDetokenizer(tokenizer, skip_special_tokens)


class _TokenizerFacts:
    """What every decoder of one tokenizer shares, found once per tokenizer:
    the ``tokenizers.Tokenizer`` behind it, its vocabulary size
    (``get_vocab_size(with_added_tokens=True)`` costs tens of microseconds,
    too much to pay per request; a tokenizer that grows later (add_tokens) is
    re-measured before any id is refused) and its decode functions."""

    __slots__ = ("ref", "fast", "size", "decodes", "texts", "args", "byte_level", "__weakref__")

    def __init__(self, tokenizer: Any) -> None:
        self.ref = None
        self.fast = _fast_tokenizer(tokenizer)
        self.size = _measure_vocab(tokenizer)
        self.decodes: dict[bool, Any] = {}
        self.texts: dict[bool, list] = {}
        self.args: dict[bool, tuple] = {}
        # Byte-level decoding is concatenation: after text that ends in a
        # whole character, a token adds exactly its own text.
        self.byte_level = self.fast is not None and _ByteLevel is not None \
            and type(self.fast.decoder) is _ByteLevel

    def token_texts(self, skip_special_tokens: bool) -> list | None:
        """Per id, what one token adds after text that ends in a whole
        character (a byte-level tokenizer only; None for any other): its text,
        None when that is no whole text of its own (bytes of an unfinished or
        ill-formed character, nothing at all, a skipped special token), or
        ``_UNSEEN`` until the id is first met (``_learn`` fills it in)."""
        if not self.byte_level:
            return None
        texts = self.texts.get(skip_special_tokens)
        if texts is None:
            texts = self.texts.setdefault(skip_special_tokens, [_UNSEEN] * self.size)
        return texts

    def stream_args(self, skip_special_tokens: bool) -> tuple | None:
        """``_StreamDetokenizer``'s arguments for this tokenizer (None without a
        ``tokenizers.Tokenizer``), made once per setting."""
        args = self.args.get(skip_special_tokens)
        if args is None and self.fast is not None:
            args = self.args[skip_special_tokens] = (
                self.fast, skip_special_tokens, self.decode(skip_special_tokens),
                self.token_texts(skip_special_tokens))
        return args

    def decode(self, skip_special_tokens: bool):
        fn = self.decodes.get(skip_special_tokens)
        if fn is None:
            tok = self.fast

            def fn(ids, tok=tok, skip=skip_special_tokens):
                return tok.decode(ids, skip_special_tokens=skip)

            self.decodes[skip_special_tokens] = fn
        return fn


# id(tokenizer) -> its facts; an entry goes when its tokenizer does.
_FACTS: dict[int, _TokenizerFacts] = {}


def _facts(tokenizer: Any) -> _TokenizerFacts:
    found = _FACTS.get(id(tokenizer))
    if found is not None and found.ref() is tokenizer:
        return found
    facts = _TokenizerFacts(tokenizer)
    key = id(tokenizer)

    def gone(_ref, key=key, facts=facts) -> None:
        if _FACTS.get(key) is facts:
            del _FACTS[key]

    try:
        facts.ref = weakref.ref(tokenizer, gone)
    except TypeError:  # not weakly referenceable: measured per decoder
        facts.ref = lambda: None
        return facts
    _FACTS[key] = facts
    return facts


def _measure_vocab(tokenizer: Any) -> int | None:
    fast = _fast_tokenizer(tokenizer)
    if fast is not None:
        return fast.get_vocab_size(with_added_tokens=True)
    try:
        size = len(tokenizer)  # transformers tokenizers: the full vocabulary
    except Exception:
        size = getattr(tokenizer, "n_vocab", None)  # tiktoken
    return size if type(size) is int and size > 0 else None


def _vocab_size(tokenizer: Any, fresh: bool = False) -> int | None:
    """How many ids ``tokenizer`` has (added tokens included), when it says."""
    facts = _facts(tokenizer)
    if fresh:
        facts.size = _measure_vocab(tokenizer)
    return facts.size


class _IdChecker:
    """Checks a delta's ids against the tokenizer before anything consumes them.

    A ``tokenizers.Tokenizer`` knows its size and decodes every id below it,
    so a range check is exact.  Any other tokenizer may refuse ids inside its
    range too (tiktoken's gaps), so each new id is also tried once with
    ``decode([id])`` and remembered.
    """

    __slots__ = ("limit", "_tokenizer", "_size", "_probe", "_known")

    def __init__(self, tokenizer: Any, decode, fast: bool | None = None, facts: Any = None) -> None:
        if fast is None:
            fast = _fast_tokenizer(tokenizer) is not None
        self._tokenizer = tokenizer
        size = _vocab_size(tokenizer) if facts is None else facts.size
        self._size = size if size is not None else _ID_LIMIT
        # The bound push() checks a one-id delta against inline; 0 sends
        # every delta here (a tokenizer whose ids must be tried).
        self.limit = self._size if fast else 0
        self._probe = None if fast else decode
        self._known: set[int] = set()

    @staticmethod
    def limit_for(facts: Any) -> int:
        """The ``limit`` a checker of this tokenizer would have."""
        if facts.fast is None:
            return 0
        return facts.size if facts.size is not None else _ID_LIMIT

    def __call__(self, delta: Any) -> list[int]:
        """``delta`` as a list of valid ids; TypeError / ValueError (naming the id and its position)."""
        if delta.__class__ is list:
            if self._probe is None:
                # A list in range goes through as it is: min/max run in C, and an
                # element that is no integer (1.5) is the engine's TypeError,
                # raised before it consumes anything.
                try:
                    if not delta or (min(delta) >= 0 and max(delta) < self._size):
                        return delta
                except TypeError:
                    pass  # not comparable: to_int_list names the element
            elif len(delta) == 1 and delta[0].__class__ is int and delta[0] in self._known:
                return delta  # the per-token case of a tokenizer whose ids are tried
        ids = to_int_list(delta)  # the engines' own TypeError for non-integers
        if type(ids) is not list:
            ids = list(ids)
        if not ids:
            return ids
        if min(ids) < 0 or max(ids) >= self._size:
            if max(ids) >= self._size and self._size < _ID_LIMIT:
                # The tokenizer may have grown since it was measured.
                size = _vocab_size(self._tokenizer, fresh=True)
                self._size = size if size is not None else _ID_LIMIT
            size = self._size
            bad = next(((i, t) for i, t in enumerate(ids) if not 0 <= t < size), None)
            if bad is not None:
                i, t = bad
                raise ValueError(
                    f"token id {t} at position {i} of the delta is not in the tokenizer's vocabulary "
                    f"(ids 0..{size - 1}); nothing was consumed")
        probe = self._probe
        if probe is not None:
            known = self._known
            for i, t in enumerate(ids):
                if t not in known:
                    try:
                        probe([t])
                    except Exception as exc:
                        raise ValueError(
                            f"token id {t} at position {i} of the delta is refused by the tokenizer "
                            f"({type(exc).__name__}: {exc}); nothing was consumed") from exc
                    known.add(t)
        return ids


class ReasoningStreamDecoder:
    """Turns token deltas into ``{reasoning, content}`` text deltas for one request.

    ``parser`` is a ``FamilyParser`` already begun for the request
    (``parser.begin(prompt_ids)``); the decoder advances it exactly as
    ``parser.split()`` / ``parser.finish()`` would.  ``tokenizer`` is a
    ``tokenizers.Tokenizer``, a ``transformers`` tokenizer, or anything with
    ``decode(ids)``.  ``field`` names the reasoning key of
    ``to_openai_delta()``: ``"reasoning"`` or ``"reasoning_content"``.
    ``skip_special_tokens`` (default True, as servers detokenize) leaves the
    text of special tokens such as BOS/EOS out; delimiters never reach the
    text either way.  Added tokens that are not special (DeepSeek's tool-call
    markers) are text and stay.
    Create it after ``parser.begin()``, one decoder per request.
    """

    # (__dict__: a compiled push, where it applies, is the instance's own ``push``)
    __slots__ = ("parser", "tokenizer", "field", "skip_special_tokens", "_eng", "_fmt", "_r", "_c", "_last",
                 "_held", "_checker", "_limit", "__dict__")

    def __init__(self, parser: Any, tokenizer: Any, *, field: str = "reasoning",
                 skip_special_tokens: bool = True) -> None:
        if field not in _FIELDS:
            raise ValueError(f"field must be one of {_FIELDS}, not {brief(field)}")
        if not isinstance(parser, FamilyParser):
            raise TypeError(f"parser must be a reasoning_core FamilyParser, not {type(parser).__name__}")
        if tokenizer is None:
            raise TypeError("a tokenizer is needed to decode token ids")
        if not isinstance(skip_special_tokens, bool):
            raise TypeError(f"skip_special_tokens must be a bool, not {type(skip_special_tokens).__name__}")
        self.parser = parser
        self.tokenizer = tokenizer
        self.field = field
        self.skip_special_tokens = skip_special_tokens
        # The parser's engine is driven directly: split() wraps exactly this
        # call, and building a TokenSplit per token would cost more than the
        # rest of push() together.
        self._eng = parser._engine
        self._fmt = parser._formatter
        facts = _facts(tokenizer)
        args = facts.stream_args(skip_special_tokens)
        if args is not None:
            self._r = _StreamDetokenizer(*args)
            self._c = _StreamDetokenizer(*args)
        else:
            self._r = _WindowDetokenizer(tokenizer, skip_special_tokens)
            self._c = _WindowDetokenizer(tokenizer, skip_special_tokens)
        # The bound push() checks a one-id delta against inline (0 sends every
        # delta to the checker: a tokenizer whose ids must be tried); the
        # checker itself is made when first needed.
        self._limit = _IdChecker.limit_for(facts)
        self._checker = None
        self._last = -1  # side of the last decided segment
        held = self._eng.held_ids  # ids held by the engine, decided later
        self._held = list(held) if held else []
        if type(self) is not ReasoningStreamDecoder:
            return
        if parser.tables.byte_plan is not None:
            # A parser that matches markers over token bytes gets the text
            # path: the decoded text is split by the family's text-level
            # automaton, so a token carrying a marker and the text beside it
            # puts that text on its side.
            self.__class__ = _TextPathDecoder
            self._begin_text(parser, tokenizer, skip_special_tokens)
        elif _DecodePush is not None and self._fmt is None \
                and type(self._eng) is _CompiledEngine and self._limit > 0 \
                and type(self._r) is _StreamDetokenizer and type(self._c) is _StreamDetokenizer:
            self.push = _DecodePush(self._eng, self, _python_push, _python_emit, facts.fast,
                                    self._r, self._c, field, StreamDelta, self._limit, self._r._texts).push

    def push(self, delta_token_ids: Sequence[int]) -> StreamDelta:
        """Split and decode one delta of generated token ids.

        Returns the text this delta adds to each side, as a ``StreamDelta``.
        A delta with nothing to send yet (a delimiter, a held token, part of a
        character) gives an empty ``StreamDelta``, which is falsy: skip it
        (``if delta: send(...)``) rather than sending ``{}``.

        An id the tokenizer cannot decode raises ValueError, a non-integer
        TypeError, before anything is consumed: the decoder is unchanged.
        """
        ids = delta_token_ids
        # The per-token common case (a list of one int inside the vocabulary)
        # is checked inline, as cheaply as Python allows; the rest is checked
        # (and converted to a list) by _IdChecker.
        if ids.__class__ is list and len(ids) == 1:
            [t] = ids
            if t.__class__ is not int or not -1 < t < self._limit:
                ids = self._check(ids)
        else:
            ids = self._check(ids)
        side = self._eng.feed_side(ids)
        if type(side) is int:
            # One side, nothing held before or after: the per-token common case.
            if side == self._last:
                if side == SEG_CONTENT:
                    return _new_tuple(StreamDelta, ("", self._c.step(ids), self.field))
                piece = self._r.step(ids)
                if piece and self._fmt is not None:
                    piece = self._fmt(piece) or ""
                return _new_tuple(StreamDelta, (piece, "", self.field))
            segs = [(side, 0, len(ids))]
        else:
            segs = side[0]
        tokens = self._held + ids if self._held else ids
        return self._emit(tokens, segs)

    def _check(self, delta: Any) -> list[int]:
        """``delta`` as a list of valid ids (see _IdChecker)."""
        checker = self._checker
        if checker is None:
            facts = _facts(self.tokenizer)
            checker = self._checker = _IdChecker(self.tokenizer, self._r._decode, facts.fast is not None, facts)
        return checker(delta)

    def finish(self) -> StreamDelta:
        """End of generation: held tokens, unfinished characters and a pending label go out.

        Falsy (nothing to send) when nothing was pending.
        """
        tokens = self._held
        segs, _ = self._eng.finish()
        out = self._emit(tokens, segs)
        reasoning, content = out.reasoning, out.content
        if self._last == SEG_REASONING:
            reasoning += self._end_reasoning()
        elif self._last == SEG_CONTENT:
            content += self._c.flush()
        self._last = -1
        return StreamDelta(reasoning, content, self.field)

    def _end_reasoning(self) -> str:
        # A block ends: bytes of an unfinished character there are as broken
        # as in the full decode, and a pending label prefix was reasoning.
        text = self._r.flush()
        fmt = self._fmt
        if fmt is not None:
            text = (fmt(text) or "") if text else ""
            text += fmt.flush() or ""
        return text

    def _emit(self, tokens: list[int], segs) -> StreamDelta:
        fmt = self._fmt
        last = self._last
        held: list[int] = []
        reasoning: list[str] = []
        content: list[str] = []
        for kind, a, b in segs:
            if kind == SEG_HELD:
                held = tokens[a:b]
                continue
            if kind != last:
                if last == SEG_REASONING:
                    reasoning.append(self._end_reasoning())
                elif last == SEG_CONTENT:
                    content.append(self._c.flush())
                last = kind
            if kind == SEG_REASONING:
                piece = self._r.step(tokens[a:b])
                if piece and fmt is not None:
                    piece = fmt(piece)
                if piece:
                    reasoning.append(piece)
            elif kind == SEG_CONTENT:
                content.append(self._c.step(tokens[a:b]))
            elif kind == SEG_START and fmt is not None:
                fmt.begin_block()
        self._last = last
        self._held = held
        return StreamDelta("".join(reasoning), "".join(content), self.field)

    def __repr__(self) -> str:
        return f"<ReasoningStreamDecoder parser={self.parser!r} field={self.field!r}>"


# The compiled per-token push (see ReasoningStreamDecoder.__init__) and the
# Python methods it hands the other cases to.
_python_push = ReasoningStreamDecoder.push
_python_emit = ReasoningStreamDecoder._emit
if _dispatch.BACKEND == "cython":
    from ._engine import DecodePush as _DecodePush
    from ._engine import Engine as _CompiledEngine
else:
    _DecodePush = _CompiledEngine = None


# Special tokens whose text is part of a marker of the family: they stay in
# the decoded text the text path splits, even when special tokens are skipped.
_marker_specials: "weakref.WeakKeyDictionary[Any, dict[str, frozenset[int]]]" = weakref.WeakKeyDictionary()


def _skipped_specials(tokenizer: Any, parser: FamilyParser) -> frozenset[int]:
    """Ids of the special tokens the text path leaves out: those whose text is in no marker."""
    fast = _fast_tokenizer(tokenizer)
    if fast is None:
        return frozenset()
    fam = parser.family
    try:
        per_tok = _marker_specials.setdefault(fast, {})
    except TypeError:  # pragma: no cover - not weak-referenceable
        per_tok = {}
    found = per_tok.get(fam.name)
    if found is None:
        markers = [m for role, _, _ in ROLES for m in getattr(fam, role)]
        found = frozenset(
            i for i, t in fast.get_added_tokens_decoder().items()
            if t.special and not any(t.content in m for m in markers)
        )
        per_tok[fam.name] = found
    return found


class _TextPathDecoder(ReasoningStreamDecoder):
    """The decoder of a parser whose markers are matched over token bytes.

    One detokenizer decodes every token; the family's text-level automaton
    (the text parser's) splits that text, seeded with the parser's state, so
    the stream equals the text parser on the decoded text for any chunking.
    The parser is advanced in step, so its state and ``split()`` stay in sync.
    """

    # (same layout as its base: a decoder becomes one in ReasoningStreamDecoder.__init__)
    __slots__ = ()

    def __init__(self, parser: Any, tokenizer: Any, *, field: str = "reasoning",
                 skip_special_tokens: bool = True) -> None:
        super().__init__(parser, tokenizer, field=field, skip_special_tokens=skip_special_tokens)
        self._begin_text(parser, tokenizer, skip_special_tokens)

    def _begin_text(self, parser: Any, tokenizer: Any, skip_special_tokens: bool) -> None:
        self._text = TextReasoningParser(parser.family, backend=parser.backend)
        self._text.seed(parser.engine.state)
        self._d = _detokenizer(tokenizer, False)
        self._drop = _skipped_specials(tokenizer, parser) if skip_special_tokens else frozenset()

    def push(self, delta_token_ids: Sequence[int]) -> StreamDelta:
        ids = self._check(delta_token_ids)
        self._eng.feed(ids)
        drop = self._drop
        if drop:
            ids = [i for i in ids if i not in drop]
        text = self._d.step(ids) if ids else ""
        if not text:
            return StreamDelta("", "", self.field)
        reasoning, content = self._text.feed(text)
        return StreamDelta(reasoning, content, self.field)

    def finish(self) -> StreamDelta:
        self._eng.finish()
        tail = self._d.flush()
        r1, c1 = self._text.feed(tail) if tail else ("", "")
        r2, c2 = self._text.finish()
        return StreamDelta(r1 + r2, c1 + c2, self.field)
