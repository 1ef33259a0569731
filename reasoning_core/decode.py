"""Token deltas in, OpenAI-style reasoning/content text deltas out (SPEC §4.5).

``ReasoningStreamDecoder`` splits each delta with a stateful
``FamilyParser`` (as ``split()`` does), then decodes each side with its own
incremental, UTF-8-safe detokenizer: a multibyte character whose bytes are
spread over several byte-level tokens is emitted once, whole, when its last
byte arrives — never half, never as U+FFFD.  Each side is decoded on its own
so a delimiter between them cannot glue their bytes together.
"""
from __future__ import annotations

from operator import itemgetter

from typing import Any, Sequence

from ._tables import SEG_CONTENT, SEG_HELD, SEG_REASONING, SEG_START
from .parser import FamilyParser

__all__ = ["ReasoningStreamDecoder", "StreamDelta"]

_FIELDS = ("reasoning", "reasoning_content")
_REPLACEMENT = "\ufffd"
# A UTF-8 character is at most 4 bytes and every byte-level token carries at
# least one, so the bytes of a character still unfinished sit in the last 3
# tokens.  Past MAX_PENDING undecodable tokens the older ones are invalid.
UNFINISHED_SPAN = 3
MAX_PENDING = 8


class StreamDelta(tuple):
    """The text one step adds to each side (either may be empty).

    An immutable ``(reasoning, content, field)`` tuple: built once per token on
    the hot path, so it is as cheap to make as Python allows.
    """

    __slots__ = ()

    def __new__(cls, reasoning: str = "", content: str = "", field: str = "reasoning") -> "StreamDelta":
        return _new_tuple(cls, (reasoning, content, field))

    reasoning = property(itemgetter(0), doc="reasoning text of this step")
    content = property(itemgetter(1), doc="content text of this step")
    field = property(itemgetter(2), doc='key for the reasoning text: "reasoning" or "reasoning_content"')

    def to_openai_delta(self) -> dict[str, str]:
        """The ``choices[0].delta`` dict an OpenAI-compatible server sends; empty fields omitted."""
        out: dict[str, str] = {}
        if self[0]:
            out[self[2]] = self[0]
        if self[1]:
            out["content"] = self[1]
        return out

    def __bool__(self) -> bool:
        return bool(self[0] or self[1])

    def __repr__(self) -> str:
        return f"StreamDelta(reasoning={self[0]!r}, content={self[1]!r})"


_new_tuple = tuple.__new__


try:
    from tokenizers import Tokenizer as _Tokenizer
    from tokenizers.decoders import DecodeStream
except ImportError:  # pragma: no cover - tokenizers is optional
    _Tokenizer = DecodeStream = None


def _fast_tokenizer(tokenizer: Any):
    """The ``tokenizers.Tokenizer`` behind ``tokenizer``, or None."""
    if _Tokenizer is None:  # pragma: no cover
        return None
    for cand in (tokenizer, getattr(tokenizer, "backend_tokenizer", None), getattr(tokenizer, "_tokenizer", None)):
        if isinstance(cand, _Tokenizer):
            return cand
    return None


class _StreamDetokenizer:
    """``tokenizers.decoders.DecodeStream`` plus a flush for the end of the stream."""

    __slots__ = ("_tok", "_stream", "_pending", "_ctx")

    def __init__(self, tok) -> None:
        self._tok = tok
        self._stream = DecodeStream(skip_special_tokens=False)
        # DecodeStream keeps ids of an unfinished character to itself; we
        # mirror them so finish() can release them as the full decode would.
        self._pending: list[int] = []
        self._ctx: list[int] = []

    def step(self, ids: list[int]) -> str:
        # DecodeStream steps a single int markedly faster than a one-id list.
        out = self._stream.step(self._tok, ids[0] if len(ids) == 1 else ids)
        if out is None:
            self._pending.extend(ids)
            if len(self._pending) > MAX_PENDING:
                return self._release_invalid()
            return ""
        if self._pending:
            ids = self._pending + ids
            self._pending = []
        # Only context for flush(): a caller reusing its list cannot harm it.
        self._ctx = ids if len(ids) <= 4 else ids[-4:]
        return out

    def _release_invalid(self) -> str:
        # An unfinished character lies within the last UNFINISHED_SPAN tokens;
        # anything before them that still fails to decode is invalid bytes,
        # not a split character.  Release it instead of re-decoding forever.
        keep = self._pending[-UNFINISHED_SPAN:]
        self._pending = self._pending[:-UNFINISHED_SPAN]
        out = self.flush()
        # A fresh stream without context: DecodeStream(ids=...) would treat
        # context ending in invalid bytes as not yet emitted.
        self._stream = DecodeStream(skip_special_tokens=False)
        return out + self.step(keep)

    def flush(self) -> str:
        if not self._pending:
            return ""
        ctx, ids = self._ctx, self._pending
        self._pending = []
        return _decode_after(self._tok.decode, ctx, ids)


def _decode_after(decode, ctx: list[int], ids: list[int]) -> str:
    """The text ``ids`` add after the context ``ctx``."""
    prefix = decode(ctx, skip_special_tokens=False) if ctx else ""
    text = decode(ctx + ids, skip_special_tokens=False)
    return text[len(prefix):] if text.startswith(prefix) else text


class _WindowDetokenizer:
    """Generic incremental decoding over ``tokenizer.decode(ids)``.

    Decodes a small window of recent ids and emits only the text past the
    part already emitted; text ending in U+FFFD (an incomplete byte
    sequence) is held until the character completes.
    """

    __slots__ = ("_decode", "_ids", "_read")

    # Ids of already emitted text kept as context: some decoders depend on
    # the previous token (SentencePiece's leading space, byte fallback).
    CONTEXT = 4

    def __init__(self, tokenizer: Any) -> None:
        dec = getattr(tokenizer, "decode", None)
        if not callable(dec):
            raise TypeError(f"{type(tokenizer).__name__} has no decode(ids) method")

        def decode(ids: list[int]) -> str:
            try:
                return dec(ids, skip_special_tokens=False)
            except TypeError:
                return dec(ids)

        self._decode = decode
        self._ids: list[int] = []  # context ids, then ids not yet emitted
        self._read = 0  # ids before this index have been emitted

    def step(self, ids: list[int]) -> str:
        self._ids.extend(ids)
        return self._emit(final=False)

    def _emit(self, final: bool) -> str:
        window, read = self._ids, self._read
        if read >= len(window):
            return ""
        prefix_text = self._decode(window[:read]) if read else ""
        text = self._decode(window)
        if not final and (len(text) <= len(prefix_text) or text.endswith(_REPLACEMENT)):
            if len(window) - read <= MAX_PENDING:
                return ""
            # Invalid bytes, not a split character: release all but the tail
            # that may still be one (see UNFINISHED_SPAN).
            keep = window[-UNFINISHED_SPAN:]
            self._ids = window[:-UNFINISHED_SPAN]
            out = self._emit(final=True)
            return out + self.step(keep)
        keep = window[-self.CONTEXT:]
        self._ids = keep
        self._read = len(keep)
        return text[len(prefix_text):]

    def flush(self) -> str:
        return self._emit(final=True)


def _detokenizer(tokenizer: Any):
    fast = _fast_tokenizer(tokenizer)
    if fast is not None:
        return _StreamDetokenizer(fast)
    return _WindowDetokenizer(tokenizer)


class ReasoningStreamDecoder:
    """Turns token deltas into ``{reasoning, content}`` text deltas for one request.

    ``parser`` is a ``FamilyParser`` already begun for the request
    (``parser.begin(prompt_ids)``); the decoder advances it exactly as
    ``parser.split()`` / ``parser.finish()`` would.  ``tokenizer`` is a
    ``tokenizers.Tokenizer``, a ``transformers`` tokenizer, or anything with
    ``decode(ids)``.  ``field`` names the reasoning key of
    ``to_openai_delta()``: ``"reasoning"`` or ``"reasoning_content"``.
    Create it after ``parser.begin()``, one decoder per request.
    """

    __slots__ = ("parser", "tokenizer", "field", "_eng", "_fmt", "_r", "_c", "_last", "_held")

    def __init__(self, parser: Any, tokenizer: Any, *, field: str = "reasoning") -> None:
        if field not in _FIELDS:
            raise ValueError(f"field must be one of {_FIELDS}, not {field!r}")
        if not isinstance(parser, FamilyParser):
            raise TypeError(f"parser must be a reasoning_core FamilyParser, not {type(parser).__name__}")
        if tokenizer is None:
            raise TypeError("a tokenizer is needed to decode token ids")
        self.parser = parser
        self.tokenizer = tokenizer
        self.field = field
        # The parser's engine is driven directly: split() wraps exactly this
        # call, and building a TokenSplit per token would cost more than the
        # rest of push() together.
        self._eng = parser.engine
        self._fmt = parser.formatter
        self._r = _detokenizer(tokenizer)
        self._c = _detokenizer(tokenizer)
        self._last = -1  # side of the last decided segment
        self._held = list(parser.held_ids)  # ids held by the engine, decided later

    def push(self, delta_token_ids: Sequence[int]) -> StreamDelta:
        """Split and decode one delta of generated token ids."""
        side = self._eng.feed_side(delta_token_ids)  # validates the ids
        ids = delta_token_ids if type(delta_token_ids) is list else _as_list(delta_token_ids)
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

    def finish(self) -> StreamDelta:
        """End of generation: held tokens, unfinished characters and a pending label go out."""
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


def _as_list(ids) -> list[int]:
    tolist = getattr(ids, "tolist", None)
    return [int(i) for i in (tolist() if tolist is not None else ids)]
