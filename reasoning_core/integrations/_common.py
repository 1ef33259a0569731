"""Helpers shared by the engine wrappers (no engine imported here)."""
from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any


class CloserStripper:
    """Drops every bare ``closer`` from streamed text, wherever the chunks
    split it: the end of the text that could start one is held until the next
    text (or the end, ``final=True``) says whether it does.  The text that
    comes out is what one ``str.replace(closer, "")`` over the whole streamed
    text gives.  O(chunk) per call."""

    __slots__ = ("closer", "held")

    def __init__(self, closer: str) -> None:
        if not isinstance(closer, str) or not closer:
            raise ValueError("CloserStripper needs a non-empty closer string")
        self.closer = closer
        self.held = ""  # the end of the text so far, a prefix of the closer

    def feed(self, text: str, final: bool = False) -> str:
        closer = self.closer
        if self.held:
            text = self.held + text
            self.held = ""
        if closer in text:
            parts = text.split(closer)
            # only the text after the last closer can start the next one
            head, text = "".join(parts[:-1]), parts[-1]
        else:
            head = ""
        if not final and closer[0] in text[1 - len(closer):]:
            k = tail_prefix(text, closer)
            if k:
                self.held = text[-k:]
                text = text[:-k]
        return head + text


def tail_prefix(text: str, marker: str) -> int:
    """Length of the longest end of ``text`` that begins ``marker`` (shorter
    than the marker): the text a stream holds until the next piece says
    whether the marker follows."""
    for k in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[len(text) - k:]):
            return k
    return 0


class BlockReader:
    """Streamed text split into the text outside ``opener … closer`` blocks
    and whole blocks, O(chunk) per step: inside a block only the new piece and
    the few characters before it can hold the closer, so the block is kept in
    pieces and joined once.

    The owner (``sink``) is told, in stream order, into its list ``out``:
    ``sink._block_text(piece, out)`` for text outside blocks (a bare closer
    dropped wherever the chunks split it, as ``CloserStripper`` does; a
    partial opener at the end held until the next piece);
    ``sink._block_done(block, out, final)`` for a whole block, its markers
    included (``final``: the stream ended inside it, so it has no closer);
    and, with ``json_body``, ``sink._block_open(out)`` when the open block's
    body is a JSON object that has closed and the piece just read ends in its
    ``}`` (the owner may read ``joined()`` to act before the closer comes).
    Whether the object has closed is followed piece by piece (a
    ``JsonCloser``), so the block is joined only then."""

    __slots__ = ("opener", "closer", "json_body", "held", "block", "tail", "strip", "first", "json", "closed")

    def __init__(self, opener: str, closer: str, json_body: bool = False) -> None:
        if not (isinstance(opener, str) and opener and isinstance(closer, str) and closer):
            raise ValueError("BlockReader needs non-empty opener and closer strings")
        self.opener, self.closer, self.json_body = opener, closer, json_body
        self.held = ""  # a partial opener at the end of the text so far
        self.block: list[str] | None = None  # the open block (opener first), in pieces
        self.tail = ""  # its last characters, where a closer split across pieces starts
        self.strip = CloserStripper(closer)
        self.first = ""  # the open block's first character after the opener and whitespace
        self.json = None  # a JsonCloser over its body, when that starts with "{"
        self.closed = False  # that body's object has closed

    def _body(self, piece: str, out: list, sink) -> None:
        # the open block grew by ``piece`` (its body part): follow a JSON body
        if not self.first:
            piece = piece.lstrip()
            if not piece:
                return
            self.first = piece[0]
            if self.first == "{":
                self.json = json_closer()
        if self.json is not None:
            if not self.closed:
                self.closed = self.json.feed(piece)
            if self.closed and piece.rstrip().endswith("}"):
                sink._block_open(out)

    def _open(self, piece: str, out: list, sink) -> None:
        self.block = [piece]
        self.tail = piece[1 - len(self.closer):]
        self.first, self.json, self.closed = "", None, False
        if self.json_body:
            self._body(piece[len(self.opener):], out, sink)

    def joined(self) -> str:
        """The open block's text so far (kept as one piece from now on)."""
        block = self.block
        if block is None:
            return ""
        block[:] = ["".join(block)]
        return block[0]

    def json_block(self):
        """The open block (its opener first) when its body is one complete
        JSON object now, else None."""
        block = self.joined()
        body = block[len(self.opener):].strip()
        if not body.startswith("{") or not body.endswith("}"):
            return None
        try:
            json.loads(body)
        except (ValueError, RecursionError):
            return None
        return block

    def inner_text(self, block: str, final: bool) -> str:
        """What a block that gives no call stands for in the text: its inner
        text, trimmed; a block the stream ended inside, as written."""
        return block if final else block[len(self.opener):-len(self.closer)].strip()

    def held_text(self) -> str:
        """Everything held back now: the open block, or the partial markers."""
        return self.joined() if self.block is not None else self.strip.held + self.held

    def feed(self, text: str, sink, out: list) -> None:
        opener, closer = self.opener, self.closer
        if self.block is None and not self.held and not self.strip.held and opener[0] not in text \
                and closer[0] not in text:
            if text:  # plain text: no marker can start in it
                sink._block_text(text, out)
            return
        if self.block is not None:
            look = self.tail + text
            j = look.find(closer)
            if j < 0:
                self.block.append(text)
                self.tail = look[1 - len(closer):]
                if self.json_body and (self.json is not None or not self.first):
                    self._body(text, out, sink)
                return
            end = j + len(closer) - len(self.tail)
            block = "".join(self.block) + text[:end]
            self.block, self.tail = None, ""
            sink._block_done(block, out, False)
            text = text[end:]
        text, self.held = self.held + text, ""
        strip = self.strip
        while text:
            i = text.find(opener)
            if i < 0:
                k = tail_prefix(text, opener)
                if k:
                    text, self.held = text[:-k], text[-k:]
                piece = strip.feed(text)
                if piece:
                    sink._block_text(piece, out)
                return
            piece = strip.feed(text[:i], final=True)  # an opener follows: no closer can
            if piece:
                sink._block_text(piece, out)
            j = text.find(closer, i + len(opener))
            if j < 0:
                self._open(text[i:], out, sink)
                return
            j += len(closer)
            sink._block_done(text[i:j], out, False)
            text = text[j:]

    def finish(self, sink, out: list) -> None:
        """The end of the stream: everything held goes to ``sink``."""
        piece = self.strip.feed("", final=True)
        if piece:
            sink._block_text(piece, out)
        if self.block is not None:
            block = "".join(self.block)
            self.block, self.tail = None, ""
            sink._block_done(block, out, True)
        if self.held:
            held, self.held = self.held, ""
            sink._block_text(held, out)

    def flush_text(self) -> str:
        """The text held outside a block (partial markers), released once;
        ``""`` while a block is open (``finish`` releases that)."""
        if self.block is not None:
            return ""
        text = self.strip.feed("", final=True) + self.held
        self.held = ""
        return text


def inline_refs(schema, defs: dict, depth: int = 0):
    """A property schema with its local ``#/$defs/`` references replaced by
    what they name (in ``anyOf``/``oneOf``/``allOf`` members too), so the
    parameter is typed as the definition says."""
    if not isinstance(schema, dict) or depth > 10:
        return schema
    ref = schema.get("$ref")
    if "type" not in schema and isinstance(ref, str) and ref.startswith("#/$defs/"):
        return inline_refs(defs.get(ref.rsplit("/", 1)[-1]), defs, depth + 1)
    out = dict(schema)
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list):
            out[key] = [inline_refs(s, defs, depth + 1) for s in schema[key]]
    if "type" not in out and "anyOf" not in out and "oneOf" not in out and isinstance(out.get("allOf"), list):
        out["anyOf"] = out["allOf"]  # typed by its members
    return out


def refs_inlined(params):
    """A tool's parameter schema with each property's ``$defs`` references
    inlined (``inline_refs``); the schema itself when it has none."""
    if not isinstance(params, dict):
        return params
    defs, props = params.get("$defs"), params.get("properties")
    if isinstance(defs, dict) and isinstance(props, dict):
        return {**params, "properties": {k: inline_refs(v, defs) for k, v in props.items()}}
    return params


_tool_json: Any = None  # reasoning_core.tools._json, once a closer was asked for


def json_closer():
    """A ``JsonCloser`` of the tool-call scanner (compiled, or its pure twin):
    says, in O(piece), when a call's streamed JSON arguments first close (the
    one moment ``json.loads`` of everything streamed can succeed; later pieces
    only add trailing text)."""
    global _tool_json
    tool_json = _tool_json
    if tool_json is None:  # (imported on first use: this module imports no tool format)
        from ..tools import _json as tool_json

        _tool_json = tool_json
    return tool_json.SCAN.JsonCloser()


class TokenizerLRU:
    """Values built for a tokenizer object (and a key), kept for the last
    ``size`` (tokenizer, key) pairs used.  An entry holds its tokenizer, so
    the identity check is exact, and a value may refer to the tokenizer
    (an engine's own parser built on it): that is why the cache is bounded
    rather than weak.  A tokenizer the engine no longer serves (a LoRA
    adapter's, one a test built) is let go once others take its place."""

    __slots__ = ("size", "_entries", "_lock")

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._entries: OrderedDict = OrderedDict()  # (key, id(tok)) -> (tok, value)
        self._lock = threading.Lock()

    def get(self, tok: Any, key: Any, default: Any = None) -> Any:
        entry = self._entries.get((key, id(tok)))
        if entry is None or entry[0] is not tok:
            return default
        with self._lock:
            if (key, id(tok)) in self._entries:
                self._entries.move_to_end((key, id(tok)))
        return entry[1]

    def put(self, tok: Any, key: Any, value: Any) -> Any:
        with self._lock:
            self._entries[(key, id(tok))] = (tok, value)
            self._entries.move_to_end((key, id(tok)))
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_NULL_TEXT_CLASSES: dict = {}


def null_text_class(base: type) -> type:
    """Tool-format class ``base`` reading an XML value written ``null`` (any
    case) as JSON ``null`` whatever the parameter's type (its
    ``null_text_is_null`` switched on in a subclass, so the fresh parser its
    ``parse_complete`` makes reads the same way)."""
    cls = _NULL_TEXT_CLASSES.get(base)
    if cls is None:
        cls = _NULL_TEXT_CLASSES[base] = type(base.__name__, (base,), {"null_text_is_null": True,
                                                                       "__module__": base.__module__})
    return cls


def regroup_held(deltas: list, held: Any, opend: list, make: Any, call_open: bool, at_close: bool) -> tuple:
    """The output side of ``ArgHold``: our parser's deltas with the held call's
    argument pieces kept in ``opend`` until a closer was read (``at_close``),
    the call closed (``call_open`` false after the step) or anything else of
    ours comes (a name, content, another call); the call's name goes out when
    it is read, its first argument piece kept.  ``make`` builds a delta of the
    engine's type (keywords ``index``, ``id``, ``name``, ``arguments``).
    Returns ``(deltas to send, the call index held next)``."""
    out: list = []
    for d in deltas:
        if held is not None and d.index == held and d.name is None and d.content is None and d.id is None:
            if d.arguments:
                opend.append(d.arguments)
            continue
        if opend:
            out.append(make(index=held, arguments="".join(opend)))
            opend.clear()
        if d.name is not None and d.content is None:
            held = d.index
            if d.arguments:  # the name goes out now, its arguments at a closer
                opend.append(d.arguments)
                d = make(index=d.index, id=d.id, name=d.name)
        else:
            held = None
        out.append(d)
    if opend and (at_close or not call_open):
        out.append(make(index=held, arguments="".join(opend)))
        opend.clear()
    if not call_open:
        held = None  # the call closed
    return out, held


_HOLD_SHAPES: dict[tuple, tuple] = {}  # closers -> (closers, last, span), checked once


class KeptChunks:
    """Deltas a wrapper keeps unread while the engine's own parser would send
    nothing for them, read later in one piece (``take``).  ``stops`` are the
    characters a delta kept without looking back lacks (the compiled entries
    keep such a delta themselves: append to ``pend``, ``compact()`` once 256
    are kept).  Kept deltas are joined 256 at a time (``blocks``), so a long
    run kept costs about its own size in memory, not an object per delta."""

    __slots__ = ("stops", "pend", "blocks")

    def __init__(self, stops: str) -> None:
        if type(stops) is not str or not stops:
            raise ValueError("KeptChunks needs the characters that stop a keep (a non-empty str)")
        self.stops = stops
        self.pend: list[str] = []
        self.blocks: list[str] = []

    def reset(self) -> None:
        self.pend.clear()
        self.blocks.clear()

    def compact(self) -> None:
        """The kept deltas joined into one block (the wrapper calls it when
        256 are kept)."""
        self.blocks.append("".join(self.pend))
        self.pend.clear()

    def held(self) -> bool:
        return bool(self.pend or self.blocks)

    def keep_plain(self, delta: str) -> bool:
        """Keep ``delta`` unread (and say so) when it has none of ``stops``."""
        for c in self.stops:
            if c in delta:
                return False
        return self._keep(delta)

    def _keep(self, delta: str) -> bool:
        pend = self.pend
        pend.append(delta)
        if len(pend) >= 256:
            self.compact()
        return True

    def take(self, text: str) -> str:
        """The kept deltas and ``text``, as one text to read now (nothing is
        kept after it)."""
        if self.blocks:
            text = "".join(self.blocks) + "".join(self.pend) + text
            self.blocks.clear()
            self.pend.clear()
        elif self.pend:
            text = "".join(self.pend) + text
            self.pend.clear()
        return text


class ArgHold(KeptChunks):
    """Input side of a wrapper that sends a call's arguments only at the
    engine's structural points (a parameter's or a call's closing marker), as
    the engine's own parser of that name does.

    While a call is open the wrapper keeps each delta that cannot complete one
    of ``closers`` (all end with the same character, ``last``): a delta
    without ``last`` is kept unread (``keep``), one with it is kept unless the
    few characters before it and it together hold a whole closer.  The kept
    deltas are read by our parser together with the delta that completes one,
    so each character is still read once and the result does not depend on
    the chunking.  ``rtail`` is the end of the text read so far."""

    __slots__ = ("closers", "last", "span", "rtail")

    def __init__(self, closers: tuple) -> None:
        shape = _HOLD_SHAPES.get(closers) if type(closers) is tuple else None
        if shape is None:
            if not closers or len({c[-1] for c in closers}) != 1:
                raise ValueError("ArgHold needs closers that end with the same character")
            shape = (tuple(closers), closers[0][-1], max(len(c) for c in closers) - 1)
            if type(closers) is tuple and all(type(c) is str for c in closers):
                _HOLD_SHAPES[closers] = shape
        self.closers, self.last, self.span = shape
        KeptChunks.__init__(self, self.last)
        self.rtail = ""

    def reset(self) -> None:
        KeptChunks.reset(self)
        self.rtail = ""

    def keeps(self, delta: str) -> bool:
        """Keep ``delta`` unread (and say so) unless it may complete a closer:
        it holds ``last`` and, after the last ``span`` characters seen (kept,
        else read), a whole closer."""
        if self.last in delta:
            need, parts = self.span, [delta]
            for piece in reversed(self.pend):
                parts.append(piece)
                need -= len(piece)
                if need <= 0:
                    break
            else:
                parts.append(self.blocks[-1] if self.blocks else self.rtail)
            parts.reverse()
            s = "".join(parts)
            cut = len(s) - len(delta) - self.span
            if cut > 0:
                s = s[cut:]
            for c in self.closers:
                if c in s:
                    return False
        return self._keep(delta)

    def take_read(self, text: str) -> tuple:
        """``(the kept deltas and text as one text to read now, whether it
        holds a closer)``, noted as read (the few characters read before it
        count for the closer)."""
        # What ``rtail + text`` holds a closer in, searched without that text
        # whole: no closer ends inside the kept deltas (each was kept because
        # none did), so one lies in ``rtail`` itself, or ends in the delta and
        # starts at most ``span`` characters before it.
        span = self.span
        k = len(text) + span
        rtail = self.rtail
        text = self.take(text)
        s = text[len(text) - k:] if len(text) >= k else rtail + text
        at_close = False
        for c in self.closers:
            if c in s or c in rtail:
                at_close = True
                break
        self.rtail = s[len(s) - span:] if len(s) > span else s
        return text, at_close
