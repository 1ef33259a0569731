"""Shared streaming machinery for every tool-call format.

Each format is a generator (``_section``) written against a few pull-style
operations on one input buffer: ``_until`` (scan to the next marker, holding a
suffix that may still become one), ``_json`` (one JSON value, re-serialized as it
streams), ``_peek``/``_skip_ws``/``_expect``. A generator yields only when it needs
more input, so ``parse_delta`` does work proportional to the delta, and because
every decision waits until the text decides it, any chunking of the same text gives
the same result. ``parse_complete`` feeds the whole text through the same machine,
so streaming and one-shot cannot drift apart.

Streaming results: ``None`` when the whole delta is content and nothing else
happened; otherwise a list in text order. Content inside a list is a delta with
only ``content`` set and ``index`` = the index of the latest call (0 before the
first). A call starts with a delta carrying ``id`` and ``name``; its ``arguments``
follow in pieces (the first piece may ride on the name delta).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from functools import lru_cache
from typing import Optional

from .._shared import brief
from ..families import think_pair_of
from ._json import DONE, ERROR, NEED, SCAN as _scan, JsonReader, dump_str, escape, schema_types, typed_value
from ._types import ParsedToolCall, ParsedToolCallDelta, ParsedToolResponse


@contextlib.contextmanager
def _use_scanner(backend: str):
    """Run the tool parsers on ``backend``'s scanner inside the block (tests
    compare the two in one process); not thread-safe."""
    from . import _json

    mod = _json.scanner(backend)
    g, b = vars(_json), globals()
    saved = {k: g[k] for k in ("SCAN", "JsonReader", "escape")}, {k: b[k] for k in ("_scan", "JsonReader", "escape")}
    g.update(SCAN=mod, JsonReader=mod.JsonReader, escape=mod.escape)
    b.update(_scan=mod, JsonReader=mod.JsonReader, escape=mod.escape)
    try:
        yield mod
    finally:
        g.update(saved[0])
        b.update(saved[1])


NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_WS = re.compile(r"[ \t\n\r]*")
# a JSON string literal without escapes (nothing the reader would rewrite), and
# the colon after a key with the whitespace around it
_PLAIN_STR = re.compile('"([^"\\\\\x00-\x1f\ud800-\udfff]*)"')
_COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
_STRING_ONLY = frozenset(["string"])
_NO_TYPES: frozenset = frozenset()


# Call ids: "call_" + 24 random hex digits (96 bits from the OS's CSPRNG), drawn
# 64 at a time: one urandom call per 64 calls instead of one per call (a
# system call cost about 0.7 us of each call's fixed cost). ``list.pop`` is
# atomic under the GIL, so threads never share an id; a forked child drops
# the ids its parent drew.
_IDS_PER_DRAW = 64
_ids: list[str] = []


def new_call_id() -> str:
    try:
        return _ids.pop()
    except IndexError:
        h = secrets.token_hex(12 * _IDS_PER_DRAW)
        _ids.extend(["call_" + h[i:i + 24] for i in range(0, 24 * _IDS_PER_DRAW, 24)])
        return _ids.pop()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_ids.clear)


def valid_name(name) -> bool:
    return isinstance(name, str) and NAME_RE.fullmatch(name) is not None


class Markers:
    """A set of literal markers: leftmost match, longest at equal start."""

    __slots__ = ("markers", "rx", "prefixes", "maxlen", "prefix_ends")

    def __init__(self, markers: tuple):
        ms = sorted(set(markers), key=len, reverse=True)
        self.markers = tuple(ms)
        self.rx = re.compile("|".join(map(re.escape, ms)))
        self.prefixes = frozenset(m[:i] for m in ms for i in range(1, len(m)))
        self.prefix_ends = frozenset(p[-1] for p in self.prefixes)  # what a held suffix can end with
        self.maxlen = len(ms[0])

    def hold_start(self, buf: str, pos: int) -> int:
        """Start of the longest suffix of ``buf[pos:]`` that a marker could still
        complete (``len(buf)`` when there is none)."""
        return _scan.hold_start(self, buf, pos)

    @classmethod
    def of(cls, *ms: str) -> "Markers":
        return cls(ms)


# Shared by every parser of a format: the formats' fixed marker sets (a few
# dozen). Bounded all the same: a set made from model output is built with
# Markers.of and never cached (hunyuan's tag suffixes).
@lru_cache(maxsize=256)
def markers(*ms: str) -> Markers:
    return Markers(ms)


def _drop(_text: str) -> None:
    pass


def _json_string(canon: str) -> Optional[str]:
    """The text of a canonical JSON value if it is a string, else ``None``. A string
    literal decodes without recursion or number conversion, so this cannot raise
    on model output."""
    if len(canon) < 2 or canon[0] != '"':
        return None
    if "\\" not in canon:  # no escape: the text between the quotes (a key, a name)
        return canon[1:-1]
    try:
        value = json.loads(canon)
    except ValueError:  # pragma: no cover - the reader only writes valid literals
        return None
    return value if isinstance(value, str) else None


def _framed_typed(v: str, types: frozenset) -> str:
    """An XML-style value's JSON: one leading and one trailing newline are
    framing, the rest typed (``typed_value``; without types, one compiled call)."""
    if not types:
        return _scan.value_json(v, True)
    if v.startswith("\n"):
        v = v[1:]
    if v.endswith("\n"):
        v = v[:-1]
    return typed_value(v, types)


# (openers, think_pairs) -> (content markers, {think start: its end's markers});
# the dict is shared by the parsers of a class and never written after it is made
_MARKERS_OF: dict = {}
_PLAIN_CALLS: dict = {}  # parser class -> whether it keeps the base _open_call, _emit_args, _close_call


class _Call:
    __slots__ = ("index", "id", "name", "args", "ok")

    def __init__(self, index, cid, name, args=None, ok=None):
        self.index = index
        self.id = cid
        self.name = name
        self.args: list[str] = [] if args is None else args
        self.ok: Optional[bool] = ok


class BaseToolParser:
    """Base of every format parser; subclasses set the class attributes and write
    ``_section(opener)``, a generator that consumes one tool section after its
    opening marker and returns ``None`` (back to content) or another opener to
    handle at once."""

    format_name = "base"
    openers: tuple = ()
    think_pairs: tuple = (think_pair_of("deepseek_r1"),)  # <think> … </think>
    raises_on_failure = True
    # XML-style values of parameters no schema declares: JSON when they parse
    # (False), strings with "null" as null (True: SGLang's qwen3_coder rule),
    # or strings, "null" included ("all").
    undeclared_as_string = False

    def __init__(self) -> None:
        self._param_types: dict = {}
        self._schemas: dict = {}
        key = (self.openers, self.think_pairs)
        found = _MARKERS_OF.get(key)
        if found is None:  # (the same for every parser of a class: read once)
            found = (markers(*self.openers, *(s for s, _ in self.think_pairs)),
                     {s: markers(e) for s, e in self.think_pairs})
            if len(_MARKERS_OF) < 256:
                _MARKERS_OF[key] = found
        self._content_markers, self._think_end = found
        self.reset()

    # ---------------------------------------------------------------- public API

    def reset(self) -> None:
        """Forget the current request (a parser is reusable after it)."""
        self._buf = ""
        self._pos = 0
        self._base = 0  # absolute offset of _buf[0] in the whole output
        self._eof = False
        self._events: list = []
        self._calls: list[_Call] = []
        self._cur: Optional[_Call] = None
        self._marker_at: Optional[int] = None
        self._error_at: Optional[int] = None
        self._rec: Optional[list] = None  # raw text kept while a call is undecided (llama3)
        self._rec_from = 0
        # the scan the generator waits in, fed directly by ``_scan.step``: a
        # ``(Markers, sink)`` pair (``_until``) or a ``JsonReader`` (``_json``)
        self._lane = None
        self._lane_status = None  # a JsonReader status that step() already read
        # the lane's sink is this call's arguments (``_emit_args``, or an
        # XmlStringSink writing to it): step() may append them itself
        self._lane_args = False
        self._gen = self._run()

    def set_streaming_tool_schemas(self, schemas: Optional[dict]) -> None:
        """``{tool_name: parameters_json_schema}``; an OpenAI tool entry or a
        ``{"parameters": ...}`` wrapper is accepted too. ``None`` clears.
        Property types may be JSON Schema names or Python-style ones (``int``,
        ``float``, ``bool``, ``dict``, ``list``, ``str``)."""
        if schemas is None:
            schemas = {}
        if not isinstance(schemas, dict):
            raise TypeError(
                "set_streaming_tool_schemas expects a dict {tool_name: json_schema} or None, "
                f"got {type(schemas).__name__}"
            )
        for name, schema in schemas.items():
            if not isinstance(name, str):
                raise TypeError(f"tool schema keys must be tool names (str), got {type(name).__name__}")
            if schema is not None and not isinstance(schema, dict):
                raise TypeError(
                    f"the schema for tool {brief(name)} must be a dict or None, got {type(schema).__name__}"
                )
        self._schemas = dict(schemas)
        # each tool's property types, read from its schema the first time a
        # value of that tool needs them (_types_for): a request with many tools
        # pays for the ones it calls, and JSON-argument formats for none
        self._param_types = {}

    def parse_delta(self, delta: str) -> Optional[list[ParsedToolCallDelta]]:
        """``None``: the whole delta is content, pass it through. ``[]``: consumed or
        held. Otherwise deltas in text order; a content delta has only ``content`` set
        and ``index`` = the latest call's index (0 before the first call)."""
        if type(delta) is not str:
            if not isinstance(delta, str):
                raise TypeError(f"parse_delta expects str, got {type(delta).__name__}")
            delta = str.__str__(delta)  # a str subclass (an engine's StrEnum marker): its text
        if not delta:
            return []
        return _scan.step(self, delta, ParsedToolCallDelta)

    def finish(self) -> list[ParsedToolCallDelta]:
        """End of the stream: release held text, complete a call that parses, then
        reset for the next request. Returns a (possibly empty) list."""
        self._push("", eof=True)
        events = self._events
        self.reset()
        return _scan.to_deltas(events, ParsedToolCallDelta)

    def parse_complete(self, response: str) -> ParsedToolResponse:
        """The content and tool calls of a whole response (a fresh parser reads it: this one is untouched)."""
        if not isinstance(response, str):
            raise TypeError(f"parse_complete expects str, got {type(response).__name__}")
        response = str.__str__(response)  # a str subclass: its text
        p = type(self)()
        p._schemas, p._param_types = self._schemas, self._param_types
        p.undeclared_as_string = self.undeclared_as_string
        p._push(response, eof=True)
        content = "".join(e[2] for e in p._events if e[0] == "c")
        calls = [ParsedToolCall(c.id, c.name, "".join(c.args)) for c in p._calls if c.ok]
        if not calls and p._marker_at is not None and p.raises_on_failure:
            at = p._error_at if p._error_at is not None else p._marker_at
            raise ValueError(
                f"{self.format_name}: tool-call markup found but no call could be parsed "
                f"(first problem at character offset {at})"
            )
        return ParsedToolResponse(content=content or None, tool_calls=calls)

    # ---------------------------------------------------------------- driver

    def _push(self, delta: str, eof: bool = False) -> None:
        buf, pos = self._buf, self._pos
        if self._rec is not None:
            self._rec.append(buf[self._rec_from:pos])
            self._rec_from = 0
        self._base += pos
        self._buf = buf[pos:] + delta
        self._pos = 0
        self._eof = eof
        self._resume()

    def _resume(self) -> None:
        if self._gen is None:
            return
        try:
            self._gen.send(None)
        except StopIteration:
            self._gen = None
            if self._cur is not None:  # a format left a call open at end of input
                self._close_call(False)

    def _run(self):
        cm = self._content_markers
        content = self._content
        nxt = None
        while True:
            if nxt is None:
                # ``_until``, written out (no generator per wait)
                m = _scan.until(self, cm, content)
                while m is False:
                    yield
                    self._lane = None
                    m = _scan.until(self, cm, content)
                if m is None:
                    return
            else:
                m, nxt = nxt, None
            end = self._think_end.get(m)
            if end is not None:
                # reasoning text is never searched for calls
                self._content(m)
                e = yield from self._until(end, self._content)
                if e is None:
                    return
                self._content(e)
                continue
            if self._marker_at is None:
                self._marker_at = self._base + self._pos - len(m)
            nxt = yield from self._section(m)

    def _section(self, opener: str):  # pragma: no cover - overridden
        raise NotImplementedError
        yield

    # ---------------------------------------------------------------- events

    def _content(self, text: str) -> None:
        if text:
            self._events.append(("c", len(self._calls) - 1 if self._calls else 0, text))

    def _open_call(self, name: str, cid: Optional[str] = None) -> _Call:
        call = _Call(len(self._calls), cid or new_call_id(), name)
        self._calls.append(call)
        self._cur = call
        self._events.append(("n", call.index, call.id, name))
        return call

    def _whole_call(self, name: str, args: str, cid: Optional[str] = None) -> None:
        """A call read whole: ``_open_call(name, cid)``, ``_emit_args(args)``,
        ``_close_call(True)`` (the same events and call), written out where the
        parser's class keeps the three base methods."""
        cls = type(self)
        plain = _PLAIN_CALLS.get(cls)
        if plain is None:
            if len(_PLAIN_CALLS) > 512:  # classes made at run time: keep the cache bounded
                _PLAIN_CALLS.clear()
            plain = _PLAIN_CALLS[cls] = (cls._open_call is BaseToolParser._open_call
                                         and cls._emit_args is BaseToolParser._emit_args
                                         and cls._close_call is BaseToolParser._close_call)
        if not plain:
            self._open_call(name, cid)
            self._emit_args(args)
            self._close_call(True)
            return
        if not cid:
            try:
                cid = _ids.pop()
            except IndexError:
                cid = new_call_id()
        calls = self._calls
        i = len(calls)
        calls.append(_Call(i, cid, name, [args] if args else [], True))
        events = self._events
        events.append(("n", i, cid, name))
        if args:
            events.append(("a", i, args))
        self._cur = None

    def _emit_args(self, text: str) -> None:
        if text:
            self._cur.args.append(text)
            self._events.append(("a", self._cur.index, text))

    def _args_sink(self, sink) -> bool:
        """Whether ``sink`` is this parser's own ``_emit_args`` (not overridden)."""
        return sink == self._emit_args and type(self)._emit_args is BaseToolParser._emit_args

    def _close_call(self, ok: bool) -> None:
        if self._cur is not None:
            self._cur.ok = ok
            self._cur = None
        if not ok:
            self._fail()

    def _fail(self) -> None:
        if self._error_at is None:
            self._error_at = self._base + self._pos

    # ---------------------------------------------------------------- input operations

    def _until(self, ms: Markers, sink):
        """Send text to ``sink`` up to the next marker; return the marker (consumed)
        or ``None`` at end of input. Each pass is ``_scan.until``: it holds a
        suffix that may still become a marker and, while none is found, leaves
        the scan as the parser's lane (``_scan.step`` feeds it directly)."""
        while True:
            m = _scan.until(self, ms, sink)
            if m is not False:
                return m
            yield
            self._lane = None

    def _text_until(self, ms: Markers):
        """``(text up to the next marker, the marker)``: ``_until`` into a list,
        written out (one generator fewer per call and per resume)."""
        parts: list[str] = []
        sink = parts.append
        while True:
            m = _scan.until(self, ms, sink)
            if m is not False:
                return "".join(parts), m
            yield
            self._lane = None

    def _peek(self):
        while self._pos >= len(self._buf):
            if self._eof:
                return None
            yield
        return self._buf[self._pos]

    def _skip_ws(self):
        while True:
            self._pos = _WS.match(self._buf, self._pos).end()
            if self._pos < len(self._buf) or self._eof:
                return
            yield

    def _read(self, rx, limit, chars=None, keep=False):
        """A run of characters matching ``rx``.  A run past ``limit`` is read to
        its end, so where it stops does not depend on the chunks, and answered
        ``None`` (dropped), or with ``keep`` as read (the caller checks its
        length).  Given ``chars`` (the characters ``rx`` matches), each wait for
        more of the run within ``limit`` is shown as ``self._name_run = (chars,
        how many more it may take)`` (``None`` once it goes on): a streaming
        caller may keep such deltas."""
        parts = []
        total = 0
        while True:
            m = rx.match(self._buf, self._pos)
            total += m.end() - m.start()
            self._pos = m.end()
            if total > limit:
                if keep:
                    parts.append(m.group())
                while self._pos >= len(self._buf) and not self._eof:  # the run may go on
                    yield
                    m = rx.match(self._buf, self._pos)
                    self._pos = m.end()
                    if keep:
                        parts.append(m.group())
                return "".join(parts) if keep else None
            parts.append(m.group())
            if self._pos < len(self._buf) or self._eof:
                return "".join(parts)
            if chars is None:
                yield
            else:
                self._name_run = (chars, limit - total)
                yield
                self._name_run = None

    def _ws_peek(self, rx=_WS):
        """``_skip_ws`` (or a skip of ``rx``) then ``_peek``, in one generator:
        the next character after it, ``None`` at the end of input."""
        while True:
            self._pos = rx.match(self._buf, self._pos).end()
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if self._eof:
                return None
            yield

    def _expect_now(self, lit: str):
        """``_expect`` when the buffer decides it now: True (``lit`` consumed)
        or False; ``None`` when it must wait (then ``_expect``)."""
        buf, pos = self._buf, self._pos
        if buf.startswith(lit, pos):
            self._pos = pos + len(lit)
            return True
        got = buf[pos:pos + len(lit)]
        if len(got) < len(lit) and lit.startswith(got) and not self._eof:
            return None
        return False

    def _ws_now(self, rx=_WS):
        """``_ws_peek`` when the buffer decides it now: the next character after
        the skip of ``rx``; ``None`` at the end of input; ``False`` when it
        must wait (then ``_ws_peek``)."""
        buf = self._buf
        self._pos = pos = rx.match(buf, self._pos).end()
        if pos < len(buf):
            return buf[pos]
        return None if self._eof else False

    def _expect(self, lit: str):
        while True:
            got = self._buf[self._pos:self._pos + len(lit)]
            if got == lit:
                self._pos += len(lit)
                return True
            if len(got) < len(lit) and lit.startswith(got) and not self._eof:
                yield
                continue
            return False

    def _ws_then(self, lit: str):
        """Whitespace then ``lit``, both consumed (True); without ``lit`` the
        whitespace is content again (False: only markup is dropped)."""
        held: list[str] = []
        while True:
            m = _WS.match(self._buf, self._pos)
            held.append(m.group())
            self._pos = m.end()
            if self._pos < len(self._buf) or self._eof:
                break
            yield
        if not (yield from self._expect(lit)):
            self._content("".join(held))
            return False
        return True

    def _json_args_now(self) -> Optional[bool]:
        """The open call's JSON arguments (an object) emitted now, when the buffer
        holds all of them: ``True``; ``None`` when it does not (nothing read: the
        grammar then reads them with ``_json``, which may wait)."""
        r = _scan.json_value(self._buf, self._pos, True)
        if r is None:
            return None
        self._emit_args(r[0])
        self._pos = r[1]
        return True

    def _json(self, sink, require_object: bool = False, note_error: bool = True):
        reader = JsonReader(sink, require_object)
        self._pos, status = reader.feed(self._buf, self._pos, self._eof)
        while status == NEED:
            self._lane = reader
            self._lane_args = self._args_sink(sink)
            yield
            self._lane = None
            status = self._lane_status
            if status is None:
                self._pos, status = reader.feed(self._buf, self._pos, self._eof)
            else:  # step() fed this chunk already
                self._lane_status = None
        if status == DONE:
            return True
        if note_error:
            self._fail()
        return False

    # ---------------------------------------------------------------- shared pieces

    # The keys of a call object (``_call_object``): the tool's name, its arguments.
    _CALL_NAME_KEYS: tuple = ("name",)
    _CALL_ARG_KEYS: tuple = ("arguments", "parameters")

    def _element_section(self, start: str, end: str, read):
        """A block of elements (invokes, calls): the text before each ``start``
        marker is dropped (``_SECTION``: ``start`` and the block's closer),
        ``read()`` reads one element and returns the marker it stopped at, and
        after ``end`` (the element's closer) the scan goes on. A block without
        an element is a failure."""
        found = False
        take = _scan.take
        r = take(self, self._SECTION)
        m = r[1] if r is not None else (yield from self._until(self._SECTION, _drop))
        while m == start:
            found = True
            m = yield from read()
            if m == end:
                r = take(self, self._SECTION)
                m = r[1] if r is not None else (yield from self._until(self._SECTION, _drop))
        if not found:
            self._fail()
        return None

    def _call_objects(self, empty_ok: bool):
        """Call objects (``_call_object``) separated by ``,`` up to ``]``, the
        ``[`` already consumed. ``[]`` is consumed, and a failure unless
        ``empty_ok``; anything but a call object where one is due is a failure
        (nothing after it read)."""
        first = True
        while True:
            c = yield from self._ws_peek()
            if first and c == "]":
                self._pos += 1
                if not empty_ok:
                    self._fail()
                return
            if c != "{":
                self._fail()
                return
            self._pos += 1
            if not (yield from self._call_object(False)):
                return
            c = yield from self._ws_peek()
            if c == ",":
                self._pos += 1
                first = False
                continue
            if c == "]":
                self._pos += 1
            else:
                self._fail()
            return

    def _call_object(self, need_args: bool):
        """A ``{"name": ..., "arguments"|"parameters": {...}}`` object (keys:
        ``_CALL_NAME_KEYS``, ``_CALL_ARG_KEYS``), its ``{`` already consumed. Returns True (call emitted), False (call emitted, then
        broken) or None (not a call; nothing emitted). The call is opened once the
        name is known and the arguments start (or the object ends), so arguments
        that come before the name are held until it arrives."""
        # The usual case, the whole object in the buffer and plain (see
        # ``_scan.call_object``), is read in one compiled pass: the same events.
        r = _scan.call_object(self._buf, self._pos, self._CALL_NAME_KEYS, self._CALL_ARG_KEYS, need_args)
        if r is not None:
            name, args, self._pos = r
            self._open_call(name)
            self._emit_args(args)
            self._close_call(True)
            return True
        name = None
        args_seen = False
        pending: Optional[list] = None
        first = True
        quiet = not self.raises_on_failure
        while True:
            c = self._ws_now()
            if c is False:
                c = yield from self._ws_peek()
            if first and c == "}":
                self._pos += 1
                break
            if c != '"':
                return self._call_object_failed()
            # A key without escapes, its colon and the value's first character
            # all in the buffer (the usual case) are read at once; otherwise the
            # key is read as a JSON string, waiting for input as needed.
            key = None
            sm = _PLAIN_STR.match(self._buf, self._pos)
            if sm is not None:
                cm = _COLON.match(self._buf, sm.end())
                if cm is not None and cm.end() < len(self._buf):
                    key = sm.group(1)
                    self._pos = cm.end()
            if key is None:
                key_parts: list[str] = []
                if not (yield from self._json(key_parts.append, note_error=not quiet)):
                    return self._call_object_failed()
                key = _json_string("".join(key_parts))
                cm = _COLON.match(self._buf, self._pos)
                if cm is not None and cm.end() < len(self._buf):  # the colon decided now
                    self._pos = cm.end()
                else:
                    yield from self._skip_ws()
                    if not (yield from self._expect(":")):
                        return self._call_object_failed()
                    yield from self._skip_ws()
            if key in self._CALL_NAME_KEYS and name is None:
                sm = _PLAIN_STR.match(self._buf, self._pos)
                if sm is not None:  # a name without escapes, whole in the buffer
                    value = sm.group(1)
                    self._pos = sm.end()
                else:
                    parts: list[str] = []
                    if not (yield from self._json(parts.append, note_error=not quiet)):
                        return self._call_object_failed()
                    # only a string can be a name: the value is never decoded otherwise
                    # (a model's digit run or deep nesting must not reach json.loads)
                    value = _json_string("".join(parts))
                if value is None or not valid_name(value.strip()):
                    return self._call_object_failed()
                name = value.strip()
                if args_seen:
                    self._open_call(name)
                    self._emit_args("".join(pending))
            elif key in self._CALL_ARG_KEYS and not args_seen:
                pos = self._pos
                c = self._buf[pos] if pos < len(self._buf) else (yield from self._peek())
                if c != "{":
                    return self._call_object_failed()
                args_seen = True
                if name is not None:
                    self._open_call(name)
                    sink = self._emit_args
                else:
                    pending = []
                    sink = pending.append
                if not (yield from self._json(sink, True, note_error=not quiet)):
                    return self._call_object_failed()
            elif not (yield from self._json(_drop, note_error=not quiet)):
                return self._call_object_failed()
            c = self._ws_now()
            if c is False:
                c = yield from self._ws_peek()
            if c == ",":
                self._pos += 1
                first = False
                continue
            if c == "}":
                self._pos += 1
                break
            return self._call_object_failed()
        if name is None or (need_args and not args_seen):
            return self._call_object_failed()
        if not args_seen:
            self._open_call(name)
            self._emit_args("{}")
        self._close_call(True)
        return True

    def _call_object_failed(self):
        if self._cur is not None:
            self._close_call(False)
            return False
        if self.raises_on_failure:
            self._fail()
        return None

    def _tool_types(self, fname: str) -> dict:
        """The property types of tool ``fname``'s schema (``{}``: none known),
        read from it on first use."""
        t = self._param_types.get(fname)
        if t is None:
            if fname not in self._schemas:  # (names the model wrote are not cached)
                return _NO_PROPS
            t = self._param_types[fname] = _property_types(self._schemas[fname])
        return t

    def _types_for(self, fname: str, key: str) -> frozenset:
        t = self._tool_types(fname)
        return t.get(key, _NO_TYPES) if t else _NO_TYPES

    def _xml_value(self, fname: str, key: str, ends: Markers):
        """One XML-style parameter value up to a marker in ``ends`` (returned).
        One leading and one trailing newline are framing. A ``string`` parameter
        streams as it arrives; others are typed once complete."""
        m = self._xml_value_now(fname, key, ends)
        if m is not False:
            return m
        return (yield from self._xml_value_stream(fname, key, ends))

    def _xml_value_stream(self, fname: str, key: str, ends: Markers):
        """``_xml_value`` once ``_xml_value_now`` said the value is not whole."""
        types = self._types_for(fname, key)
        if not types and self.undeclared_as_string:
            # A parameter no schema declares: the text as a string, "null" as null.
            raw: list[str] = []
            m = yield from self._until(ends, raw.append)
            self._emit_args(self._undeclared_json("".join(raw)))
            return m
        if types == _STRING_ONLY:
            self._emit_args('"')
            m = yield from self._until(ends, _scan.XmlStringSink(self._emit_args))
            self._emit_args('"')
            return m
        parts: list[str] = []
        m = yield from self._until(ends, parts.append)
        self._emit_args(_framed_typed("".join(parts), types))
        return m

    def _xml_value_now(self, fname: str, key: str, ends: Markers):
        """``_xml_value`` without waiting when the buffer holds the whole value
        (its end marker, or the end of input): the marker, with the same
        events; ``False`` when it does not (nothing read, nothing emitted)."""
        r = _scan.take(self, ends)
        if r is None:
            return False
        v, m = r
        types = self._types_for(fname, key)
        if not types and self.undeclared_as_string:
            self._emit_args(self._undeclared_json(v))
        elif types == _STRING_ONLY:
            if type(self)._emit_args is BaseToolParser._emit_args:
                # what the three pieces below join to, as one piece
                if v.startswith("\n"):
                    v = v[1:]
                if v.endswith("\n"):
                    v = v[:-1]
                self._emit_args(dump_str(v))
            else:  # a class that reads its argument pieces gets them as a stream would
                self._emit_args('"')
                _scan.XmlStringSink(self._emit_args)(v)
                self._emit_args('"')
        else:
            self._emit_args(_framed_typed(v, types))
        return m

    def _undeclared_json(self, v: str) -> str:
        """A parameter no schema declares (``undeclared_as_string``): the text
        as a string, one leading and one trailing newline being framing,
        "null" as null unless the rule is "all"."""
        if v.startswith("\n"):
            v = v[1:]
        if v.endswith("\n"):
            v = v[:-1]
        null = self.undeclared_as_string != "all" and v.lower() == "null"
        return "null" if null else dump_str(v)

    def _param_prefix(self, count: int, key: str) -> None:
        self._emit_args(("{" if count == 0 else ", ") + dump_str(key) + ": ")



_NO_PROPS: dict = {}  # (never written)


def _property_types(schema) -> dict:
    """``{property: schema_types(...)}`` of one tool's schema (an OpenAI tool
    entry, a ``{"parameters": ...}`` wrapper or the parameters schema itself);
    ``{}`` when it lists no properties."""
    if isinstance(schema, dict) and isinstance(schema.get("function"), dict):
        schema = schema["function"]
    if isinstance(schema, dict) and isinstance(schema.get("parameters"), dict):
        schema = schema["parameters"]
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return {}
    out = {}
    for k, v in props.items():
        out[k] = schema_types(v)
    return out


def _to_deltas(events: list) -> list[ParsedToolCallDelta]:
    """Events in text order -> deltas (see ``_scan.to_deltas``)."""
    return _scan.to_deltas(events, ParsedToolCallDelta)
