"""Pure-Python twin of the compiled tool-call scanner (``reasoning_core/_toolscan.pyx``).

The scanning every tool-call format shares: the incremental JSON reader that
re-serializes as it reads (see ``reasoning_core/tools/_json.py`` for the
canonical form), JSON string escaping, the hold of a suffix that may still
become a marker, the streaming writer of an XML-style string value, the
conversion of a chunk's events into ``ParsedToolCallDelta`` objects, and the
per-chunk fast lane (``step``) that feeds a chunk straight to the scan a
parser is waiting in, without resuming its generator.  The compiled module
has the same names and the same behaviour; ``reasoning_core/tools/_json.py``
picks one (compiled unless missing or ``REASONING_CORE_NO_EXTENSIONS=1``).
"""

from __future__ import annotations

import json
import re

NEED, DONE, ERROR = 0, 1, 2

_ESC_RE = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')
_ESC_MAP = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


def _esc_one(m: re.Match) -> str:
    c = m.group()
    return _ESC_MAP.get(c) or "\\u%04x" % ord(c)


def escape(s: str) -> str:
    """Body of a JSON string literal for ``s`` (no quotes)."""
    return _ESC_RE.sub(_esc_one, s)


def gemma_string_json(body: str):
    """The JSON string literal of a Gemma 4 ``<|"|>``-delimited body when it
    decodes with JSON string escapes (a raw ``"`` is a quote; a raw control
    character, a bad escape or ``\\"`` does not decode), else ``None``."""
    try:
        value = json.loads('"' + body.replace('"', '\\"') + '"')
    except ValueError:
        return None
    return '"' + escape(value) + '"'


_WS_RUN = re.compile(r"[ \t\n\r]*")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a valid tool name (tools._base.NAME_RE)
_STR_RUN = re.compile('[^"\\\\\x00-\x1f\ud800-\udfff]+')
_NUM_RUN = re.compile(r"[0-9eE.+-]*")
_NUM_OK = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_HEX = frozenset("0123456789abcdefABCDEF")
_SIMPLE_ESC = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERALS = {"t": "true", "f": "false", "n": "null"}

# states
_VALUE, _OBJ_FIRST, _OBJ_KEY, _COLON, _ARR_FIRST, _AFTER, _STR, _ESC, _UESC, _NUM, _LIT = range(11)


class JsonReader:
    """Reads exactly one JSON value from successive buffers.

    ``feed(buf, pos, eof)`` returns ``(pos, status)``: ``NEED`` (everything up to the end
    of ``buf`` consumed; partial tokens are kept inside the reader), ``DONE`` (the value
    ended just before ``pos``; the character at ``pos`` is not consumed) or ``ERROR``
    (``pos`` is the offending character, or ``len(buf)`` at end of input).
    A stack replaces recursion so that deep nesting cannot overflow. Output is
    collected per ``feed`` and handed to the sink in one piece, and a number that
    arrives in many chunks is kept as a list of pieces: total work is linear in the
    input however it is chunked.
    """

    __slots__ = ("sink", "out", "state", "stack", "tok", "num", "hi", "is_key", "require_object", "started")

    def __init__(self, sink, require_object: bool = False):
        self.sink = sink
        self.out: list[str] = []
        self.state = _VALUE
        self.stack: list[str] = []
        self.tok = ""  # a \u escape's hex digits or a literal's letters (bounded)
        self.num: list[str] = []  # the pieces of a number
        self.hi = -1  # pending high surrogate from a \u escape, waiting for its pair
        self.is_key = False
        self.require_object = require_object
        self.started = False

    def _flush_hi(self):
        if self.hi >= 0:
            self.out.append("\\u%04x" % self.hi)
            self.hi = -1

    def _end_str(self):
        self._flush_hi()
        self.out.append('"')
        self.state = _COLON if self.is_key else _AFTER

    def feed(self, buf: str, pos: int, eof: bool):
        pos, status = self._feed(buf, pos, eof)
        out = self.out
        if out:
            self.sink(out[0] if len(out) == 1 else "".join(out))
            out.clear()
        return pos, status

    def _feed(self, buf: str, pos: int, eof: bool):
        sink = self.out.append
        n = len(buf)
        while True:
            st = self.state
            if st == _STR:
                m = _STR_RUN.match(buf, pos)
                if m:
                    self._flush_hi()
                    sink(m.group())
                    pos = m.end()
                if pos >= n:
                    break
                c = buf[pos]
                pos += 1
                if c == '"':
                    self._end_str()
                elif c == "\\":
                    self.state = _ESC
                else:  # raw control character or surrogate
                    self._flush_hi()
                    sink(escape(c))
                continue
            if st == _ESC:
                if pos >= n:
                    break
                c = buf[pos]
                if c == "u":
                    self.tok = ""
                    self.state = _UESC
                elif c in _SIMPLE_ESC:
                    self._flush_hi()
                    sink(escape(_SIMPLE_ESC[c]))
                    self.state = _STR
                else:
                    return pos, ERROR
                pos += 1
                continue
            if st == _UESC:
                while pos < n and len(self.tok) < 4:
                    c = buf[pos]
                    if c not in _HEX:
                        return pos, ERROR
                    self.tok += c
                    pos += 1
                if len(self.tok) < 4:
                    break
                cp = int(self.tok, 16)
                self.state = _STR
                if self.hi >= 0 and 0xDC00 <= cp <= 0xDFFF:
                    sink(chr(0x10000 + ((self.hi - 0xD800) << 10) + (cp - 0xDC00)))
                    self.hi = -1
                else:
                    self._flush_hi()
                    if 0xD800 <= cp <= 0xDBFF:
                        self.hi = cp
                    else:
                        sink(escape(chr(cp)))
                continue
            if st == _NUM:
                m = _NUM_RUN.match(buf, pos)
                if m.end() > pos:
                    self.num.append(m.group())
                pos = m.end()
                if pos >= n and not eof:
                    break
                num = self.num
                text = num[0] if len(num) == 1 else "".join(num)
                num.clear()
                if not _NUM_OK.fullmatch(text):
                    return pos, ERROR
                sink(text)
                self.state = _AFTER
                continue
            if st == _LIT:
                word = _LITERALS[self.tok[0]]
                while pos < n and len(self.tok) < len(word):
                    if buf[pos] != word[len(self.tok)]:
                        return pos, ERROR
                    self.tok += buf[pos]
                    pos += 1
                if len(self.tok) < len(word):
                    break
                sink(word)
                self.state = _AFTER
                continue
            if st == _AFTER and not self.stack:
                return pos, DONE
            # structural states: skip whitespace first
            pos = _WS_RUN.match(buf, pos).end()
            if pos >= n:
                break
            c = buf[pos]
            if st == _VALUE:
                if self.require_object and not self.started and c != "{":
                    return pos, ERROR
                self.started = True
                if c == "{":
                    sink("{")
                    self.stack.append("o")
                    self.state = _OBJ_FIRST
                elif c == "[":
                    sink("[")
                    self.stack.append("a")
                    self.state = _ARR_FIRST
                elif c == '"':
                    sink('"')
                    self.is_key = False
                    self.state = _STR
                elif c == "-" or "0" <= c <= "9":
                    self.num.clear()
                    self.state = _NUM
                    continue
                elif c in _LITERALS:
                    self.tok = c
                    self.state = _LIT
                else:
                    return pos, ERROR
                pos += 1
            elif st == _OBJ_FIRST or st == _OBJ_KEY:
                if c == '"':
                    sink('"')
                    self.is_key = True
                    self.state = _STR
                elif c == "}" and st == _OBJ_FIRST:
                    sink("}")
                    self.stack.pop()
                    self.state = _AFTER
                else:
                    return pos, ERROR
                pos += 1
            elif st == _COLON:
                if c != ":":
                    return pos, ERROR
                sink(": ")
                self.state = _VALUE
                pos += 1
            elif st == _ARR_FIRST:
                if c == "]":
                    sink("]")
                    self.stack.pop()
                    self.state = _AFTER
                    pos += 1
                else:
                    self.state = _VALUE
            else:  # _AFTER inside a container
                top = self.stack[-1]
                if c == ",":
                    sink(", ")
                    self.state = _OBJ_KEY if top == "o" else _VALUE
                elif (c == "}" and top == "o") or (c == "]" and top == "a"):
                    sink(c)
                    self.stack.pop()
                else:
                    return pos, ERROR
                pos += 1
        # buffer exhausted
        if eof:
            if self.state == _AFTER and not self.stack:
                return pos, DONE
            return pos, ERROR
        return pos, NEED


def hold_start(ms, buf: str, pos: int) -> int:
    """Start of the longest suffix of ``buf[pos:]`` that a marker of ``ms`` (a
    ``Markers``) could still complete; ``len(buf)`` when there is none."""
    n = len(buf)
    if n == pos or buf[-1] not in ms.prefix_ends:
        return n
    prefixes = ms.prefixes
    for k in range(min(ms.maxlen - 1, n - pos), 0, -1):
        if buf[n - k:] in prefixes:
            return n - k
    return n


def until(p, ms, sink):
    """One pass of ``BaseToolParser._until``: the marker of ``ms`` next in the
    parser's buffer (consumed, the text before it sent to ``sink``), ``None`` at
    the end of input, or ``False``: the text that cannot start a marker went to
    ``sink``, the rest is held, and the parser waits in this scan (its lane is
    set)."""
    buf, pos = p._buf, p._pos
    m = ms.rx.search(buf, pos)
    if p._eof:
        if m is not None:
            sink(buf[pos:m.start()])
            p._pos = m.end()
            return m.group()
        sink(buf[pos:])
        p._pos = len(buf)
        return None
    h = hold_start(ms, buf, pos)
    if m is not None and m.start() < h:
        sink(buf[pos:m.start()])
        p._pos = m.end()
        return m.group()
    sink(buf[pos:h])
    p._pos = h
    p._lane = (ms, sink)
    p._lane_args = type(sink) is XmlStringSink and p._args_sink(sink.emit)
    return False


def take(p, ms):
    """``(text, marker)`` when the parser's buffer decides ``_text_until(ms)``
    now: the text up to the next marker of ``ms`` and the marker (consumed),
    or at the end of input the rest and ``None``; otherwise ``None``, nothing
    consumed (the grammar then waits in ``_text_until``)."""
    buf, pos = p._buf, p._pos
    m = ms.rx.search(buf, pos)
    if p._eof:
        if m is not None:
            p._pos = m.end()
            return buf[pos:m.start()], m.group()
        p._pos = len(buf)
        return buf[pos:], None
    if m is not None and m.start() < hold_start(ms, buf, pos):
        p._pos = m.end()
        return buf[pos:m.start()], m.group()
    return None


def json_value(buf: str, pos: int, require_object: bool, eof: bool = False):
    """``(canonical JSON, end)`` of the JSON value at ``buf[pos:]`` (leading
    whitespace skipped) when the buffer holds all of it, as a ``JsonReader``
    fed ``buf`` (and ``eof``) would write it; ``None`` when the value is not
    whole in the buffer (without ``eof``, a number at its end included) or is
    not valid JSON (nothing read: the grammar then reads it itself, ``_json``)."""
    reader = JsonReader(None, require_object)
    pos, status = reader._feed(buf, pos, eof)
    if status != DONE:
        return None
    out = reader.out
    return (out[0] if len(out) == 1 else "".join(out)), pos


def value_json(v: str, framed: bool) -> str:
    """The JSON of an XML-style value that no schema types: ``v`` (without one
    leading and one trailing newline when ``framed``) as JSON when all of it is
    one JSON value (surrounding whitespace allowed; canonical form), else as a
    JSON string (``typed_value(v, frozenset())`` of ``tools._json``, in one call)."""
    if framed:
        if v.startswith("\n"):
            v = v[1:]
        if v.endswith("\n"):
            v = v[:-1]
    r = json_value(v, 0, False, True)
    if r is not None and not v[r[1]:].strip(" \t\n\r"):
        return r[0]
    return '"' + escape(v) + '"'


def _take_now(buf: str, pos: int, ms):
    """``take`` on a buffer that more input may follow: ``(text, marker, end)``
    when a whole marker of ``ms`` comes before any suffix that may still become
    one; ``None`` otherwise."""
    m = ms.rx.search(buf, pos)
    if m is not None and m.start() < hold_start(ms, buf, pos):
        return buf[pos:m.start()], m.group(), m.end()
    return None


def xml_params(buf: str, pos: int, opener: str, key_close: str, param_end: str, scan, key_end, value_end,
               clean_key):
    """The parameter elements of an XML-style call (``_ParamElements._params``
    of ``tools._xml_formats``, where no schema types its values) read in one
    pass when the buffer decides every step: ``(arguments' JSON, the marker
    that ended them, end)``; ``None`` when some step must wait for input
    (nothing read: the grammar then reads them itself).  The steps: the next
    marker of ``scan``; while it is ``opener``, the key up to a marker of
    ``key_end`` (``key_close`` opens the value; ``param_end`` skips to the
    next element; another marker ends the loop there), then the value up to a
    marker of ``value_end`` (its JSON: ``value_json(v, True)``), after
    ``param_end`` the next marker of ``scan``."""
    parts: list = []
    r = _take_now(buf, pos, scan)
    if r is None:
        return None
    m, pos = r[1], r[2]
    while m == opener:
        r = _take_now(buf, pos, key_end)
        if r is None:
            return None
        key, km, pos = r
        if km != key_close:
            if km == param_end:
                r = _take_now(buf, pos, scan)
                if r is None:
                    return None
                m, pos = r[1], r[2]
            else:
                m = km
            continue
        r = _take_now(buf, pos, value_end)
        if r is None:
            return None
        v, m, pos = r
        parts.append('"' + escape(clean_key(key)) + '": ' + value_json(v, True))
        if m == param_end:
            r = _take_now(buf, pos, scan)
            if r is None:
                return None
            m, pos = r[1], r[2]
    return ("{" + ", ".join(parts) + "}" if parts else "{}"), m, pos


def deepseek_call(buf: str, pos: int, head_end, sep: str, line_end, tail):
    """A DeepSeek-V3 call (``tools._marker_formats.DeepSeekV3ToolParser._call``)
    read in one pass when the buffer decides every step and the call is well
    formed: ``(name, arguments' JSON, the marker after them, end)``; ``None``
    otherwise (nothing read: the grammar reads it).  The steps: the head up
    to a marker of ``head_end``, which must be ``sep``; the name up to a
    marker of ``line_end``, which must be a newline, stripped and valid; after
    whitespace, a fence line (from a backquote, up to a newline) if there is
    one; the arguments, an object whole in the buffer (``json_value``); then
    the next marker of ``tail``."""
    r = _take_now(buf, pos, head_end)
    if r is None or r[1] != sep:
        return None
    r = _take_now(buf, r[2], line_end)
    if r is None or r[1] != "\n":
        return None
    name = r[0].strip()
    if _NAME.fullmatch(name) is None:
        return None
    pos = _WS_RUN.match(buf, r[2]).end()
    if pos >= len(buf):
        return None
    if buf[pos] == "`":
        r = _take_now(buf, pos, line_end)
        if r is None or r[1] != "\n":
            return None
        pos = r[2]
    a = json_value(buf, pos, True)
    if a is None:
        return None
    r = _take_now(buf, a[1], tail)
    if r is None:
        return None
    return name, a[0], r[1], r[2]


_KIMI_ID = re.compile(r"(?:functions\.)?([^:]*)(?::[0-9]+)?")  # tools._marker_formats._KIMI_ID


def kimi_call(buf: str, pos: int, head_end, arg_begin: str, tail):
    """A Kimi-K2 call (``tools._marker_formats.KimiK2ToolParser._call``) read
    in one pass when the buffer decides every step and the call is well
    formed: ``(name, id, arguments' JSON, the marker after them, end)``;
    ``None`` otherwise (nothing read: the grammar reads it).  The steps: the
    id up to a marker of ``head_end``, which must be ``arg_begin``, stripped,
    its name (``functions.NAME:IDX``, both parts optional) valid; the
    arguments, an object whole in the buffer (``json_value``); then the next
    marker of ``tail``."""
    r = _take_now(buf, pos, head_end)
    if r is None or r[1] != arg_begin:
        return None
    ident = r[0].strip()
    idm = _KIMI_ID.fullmatch(ident)
    if idm is None or _NAME.fullmatch(idm.group(1)) is None:
        return None
    a = json_value(buf, r[2], True)
    if a is None:
        return None
    t = _take_now(buf, a[1], tail)
    if t is None:
        return None
    return idm.group(1), ident, a[0], t[1], t[2]


_PLAIN_KEY = re.compile('[ \t\n\r]*"([^"\\\\\x00-\x1f\ud800-\udfff]*)"[ \t\n\r]*:[ \t\n\r]*')
_PLAIN_NAME = re.compile('"([A-Za-z0-9_-]{1,64})"')


def call_object(buf: str, pos: int, name_keys: tuple, arg_keys: tuple, need_args: bool):
    """A call object whose ``{`` was consumed, read in one pass when all of it
    is in ``buf`` and it is plain: ``(name, arguments, end)`` (the arguments'
    canonical JSON, ``"{}"`` when absent; ``end`` just after the ``}``), or
    ``None`` for anything else, which the grammar then reads itself
    (``BaseToolParser._call_object``: the same answer for every object this
    accepts).  Plain: keys and the name are string literals without escapes,
    each key once, only a name key (``name_keys``) whose value is a valid name
    and an arguments key (``arg_keys``) whose value is an object, the name
    present (and the arguments when ``need_args``)."""
    n = len(buf)
    name = args = None
    i = pos
    while True:
        km = _PLAIN_KEY.match(buf, i)
        if km is None or km.end() >= n:
            return None
        key = km.group(1)
        i = km.end()
        if name is None and key in name_keys:
            nm = _PLAIN_NAME.match(buf, i)
            if nm is None:
                return None
            name = nm.group(1)
            i = nm.end()
        elif args is None and key in arg_keys:
            if buf[i] != "{":
                return None
            reader = JsonReader(None, True)
            i, status = reader._feed(buf, i, False)
            if status != DONE:
                return None
            out = reader.out
            args = out[0] if len(out) == 1 else "".join(out)
        else:
            return None
        i = _WS_RUN.match(buf, i).end()
        if i >= n:
            return None
        c = buf[i]
        i += 1
        if c == "}":
            break
        if c != ",":
            return None
    if name is None or (args is None and need_args):
        return None
    return name, "{}" if args is None else args, i


class XmlStringSink:
    """Writes an XML-style ``string`` parameter value as the body of a JSON string
    while it streams: one leading and one trailing newline are framing (the
    trailing one is held until more text shows it was not the last); with
    ``framed=False`` the value is the text byte for byte."""

    __slots__ = ("emit", "start", "held", "framed")

    def __init__(self, emit, framed: bool = True):
        self.emit = emit
        self.start = True
        self.held = False
        self.framed = bool(framed)

    def __call__(self, t: str) -> None:
        out = self.text_of(t)
        if out is not None:
            self.emit(out)

    def text_of(self, t: str):
        """What ``__call__`` emits for ``t`` (None: nothing), the state updated."""
        if not t:
            return None
        if not self.framed:
            return escape(t)
        if self.start:
            self.start = False
            if t[0] == "\n":
                t = t[1:]
                if not t:
                    return None
        out = "\n" + t if self.held else t
        self.held = out.endswith("\n")
        if self.held:
            out = out[:-1]
        return escape(out)


_JSON_STRUCT = re.compile(r'["{}\[\]]')
_JSON_STR_STOP = re.compile(r'["\\]')


class JsonCloser:
    """Says, one piece at a time and in O(piece), when a JSON value streamed in
    pieces first closes: ``feed`` answers True for the piece in which its
    outermost ``}`` / ``]`` comes (never again after)."""

    __slots__ = ("depth", "in_str", "esc", "done")

    def __init__(self) -> None:
        self.depth = 0
        self.in_str = False
        self.esc = False
        self.done = False

    def feed(self, s: str) -> bool:
        if s is None:
            raise TypeError("JsonCloser.feed: the piece must be a str, not None")
        if self.done:
            return False
        i, n = 0, len(s)
        if self.esc and n:
            self.esc = False
            i = 1
        while i < n:
            if self.in_str:
                m = _JSON_STR_STOP.search(s, i)
                if m is None:
                    return False
                j = m.start()
                if s[j] == "\\":
                    if j + 1 >= n:
                        self.esc = True
                        return False
                    i = j + 2
                    continue
                self.in_str = False
                i = j + 1
            else:
                m = _JSON_STRUCT.search(s, i)
                if m is None:
                    return False
                j = m.start()
                c = s[j]
                i = j + 1
                if c == '"':
                    self.in_str = True
                elif c == "{" or c == "[":
                    self.depth += 1
                else:
                    self.depth -= 1
                    if self.depth <= 0:
                        self.done = True
                        return True
        return False


# -- result objects ------------------------------------------------------------------

_FIELDS = ("index", "id", "name", "arguments", "content")


def _delta_factory(cls):
    """A builder of ``cls`` (``ParsedToolCallDelta``) objects that skips the
    dataclass ``__init__``; checked against the constructor, and the constructor
    itself when they differ (another definition of the class)."""
    new = object.__new__

    def fast(index, cid, name, arguments, content):
        d = new(cls)
        d.__dict__ = {"index": index, "id": cid, "name": name, "arguments": arguments, "content": content}
        return d

    try:
        import dataclasses

        if tuple(f.name for f in dataclasses.fields(cls)) != _FIELDS:
            return None
        for args in ((0, None, None, None, "c"), (2, "call_1", "f", "{", None), (1, None, None, "x", None)):
            a, b = fast(*args), cls(*args)
            if a != b or repr(a) != repr(b) or vars(a) != vars(b):
                return None
    except Exception:  # noqa: BLE001 - anything unexpected: use the constructor
        return None
    return fast


_FACTORIES: dict = {}


def _builder(cls):
    f = _FACTORIES.get(cls)
    if f is None:
        f = _delta_factory(cls)
        if f is None:
            def f(index, cid, name, arguments, content):
                return cls(index=index, id=cid, name=name, arguments=arguments, content=content)
        _FACTORIES[cls] = f
    return f


_object_new, _object_setattr = object.__new__, object.__setattr__


def model_new(cls, values: dict, fields, extra: bool):
    """An instance of the pydantic model ``cls`` holding ``values`` (taken as its
    ``__dict__``, not copied), built without validation: fields set = a new set
    of ``fields``, ``__pydantic_extra__`` = a new ``{}`` when ``extra`` (a model
    with ``extra="allow"``) else ``None``, no private attributes.  Callers check
    it against the validated constructor before using it (the engines' result
    types, ``reasoning_core.integrations``)."""
    m = _object_new(cls)
    _object_setattr(m, "__dict__", values)
    _object_setattr(m, "__pydantic_fields_set__", set(fields))
    _object_setattr(m, "__pydantic_extra__", {} if extra else None)
    _object_setattr(m, "__pydantic_private__", None)
    return m


class _Hole:
    """A place in a ``ModelShape`` template (``INDEX``, ``PIECE``, ``CHILD``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


INDEX = _Hole("index")
PIECE = _Hole("piece")
CHILD = _Hole("child")
NO_ANSWER = _Hole("no answer")  # an ArgsLane's ``empty``: a step that sends nothing answers None

_MODEL_SLOTS = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")


def _check_settable(cls, name: str) -> None:
    for k in cls.__mro__:
        d = vars(k)
        if name in d:
            if hasattr(type(d[name]), "__set__"):
                return
            break
    raise ValueError(f"ModelShape: {cls.__qualname__} has no settable {name} (not a pydantic model)")


_MAX_SUBS = 16  # open places per level (a template with more is refused)


class ModelShape:
    """Nested pydantic models of one fixed shape with two values left open, built
    without validation (see ``model_new``): ``levels`` lists ``(cls, template,
    fields, extra)`` from the outermost model in; each template is the model's
    ``__dict__`` in field order, where ``INDEX`` and ``PIECE`` mark the two
    open values and ``CHILD`` (or ``[CHILD]``, a one-item list) the next
    level's model.  ``build(index, piece)`` makes one new tree (new dicts, new
    fields sets, and a new list for every list in a template: no two trees
    share one).  Other values are shared as they are (use immutable ones).
    Callers check it against the validated constructors before using it
    (``reasoning_core.integrations``)."""

    __slots__ = ("_levels",)

    def __init__(self, levels) -> None:
        if not isinstance(levels, (list, tuple)) or not levels:
            raise TypeError("ModelShape: levels must be a non-empty list of (cls, template, fields, extra)")
        out = []
        n, index_seen, piece_seen = len(levels), 0, 0
        for i, item in enumerate(levels):
            if not isinstance(item, tuple) or len(item) != 4:
                raise TypeError(f"ModelShape: level {i} must be a (cls, template, fields, extra) tuple")
            cls, template, fields, extra = item
            if not isinstance(cls, type):
                raise TypeError(f"ModelShape: level {i}: cls must be a class, not {type(cls).__name__}")
            if cls.__new__ is not object.__new__:
                raise ValueError(f"ModelShape: level {i}: {cls.__qualname__} has its own __new__")
            if getattr(cls, "__abstractmethods__", None):
                raise ValueError(f"ModelShape: level {i}: {cls.__qualname__} is abstract")
            if not isinstance(template, dict):
                raise TypeError(f"ModelShape: level {i}: template must be a dict, not {type(template).__name__}")
            subs, children = [], 0
            for key, v in template.items():
                if v is INDEX or v is PIECE:
                    index_seen += v is INDEX
                    piece_seen += v is PIECE
                    subs.append((key, 0 if v is INDEX else 1))
                elif v is CHILD or (type(v) is list and len(v) == 1 and v[0] is CHILD):
                    children += 1
                    subs.append((key, 2 if v is CHILD else 3))
                elif isinstance(v, list):
                    if any(x is CHILD or x is INDEX or x is PIECE for x in v):
                        raise ValueError(f"ModelShape: level {i}: a hole inside a list must be [CHILD] alone")
                    subs.append((key, 4))
            if len(subs) > _MAX_SUBS:
                raise ValueError(f"ModelShape: level {i} has more than {_MAX_SUBS} open places")
            if children != (0 if i == n - 1 else 1):
                raise ValueError(f"ModelShape: level {i} must hold {'no' if i == n - 1 else 'one'} CHILD")
            for a in _MODEL_SLOTS:
                _check_settable(cls, a)
            out.append((cls, dict(template), frozenset(fields), bool(extra), subs))
        if index_seen > 1 or piece_seen > 1:
            raise ValueError("ModelShape: INDEX and PIECE may each appear once")
        out.reverse()
        self._levels = out

    def build(self, index, piece):
        """A new tree of the shape holding ``index`` and ``piece``."""
        child = None
        for cls, template, fields, extra, subs in self._levels:
            values = template.copy()
            for key, kind in subs:
                values[key] = (index if kind == 0 else piece if kind == 1 else child if kind == 2
                               else [child] if kind == 3 else list(template[key]))
            child = model_new(cls, values, fields, extra)
        return child


class ArgsLane:
    """The call whose arguments stream now, as an integration records and sends
    them.  ``step(delta)`` is ``step_args(parser, delta, cls)``, except that a
    piece of this call's arguments (the parser's open call has index
    ``index``) is appended to ``pieces``, ``slot`` added to ``dirty`` (when
    given), fed to ``closer`` (when given: ``on_close(slot)`` runs in the step
    where the arguments' JSON value first closes) and answered as
    ``shape.build(slot, piece)``.  Every other answer comes back as
    ``step_args`` gives it, and so does every answer once ``guard.version``
    (when a guard is given) is no longer ``version``: the caller then takes
    its general path.  ``empty`` is what a step that sends nothing (``step_args``
    answers ``[]``: text held, e.g. half an escape) answers instead of the
    empty list: ``None`` (the default) keeps the list; a ``ModelShape``, a new
    tree of it (built with ``None`` for the index and the piece); ``NO_ANSWER``,
    ``None``."""

    __slots__ = ("parser", "cls", "shape", "index", "slot", "pieces", "dirty", "closer", "on_close", "guard",
                 "version", "empty", "built")

    def __init__(self, parser, cls, shape, index, slot, pieces, dirty=None, closer=None, on_close=None, guard=None,
                 version=None, empty=None) -> None:
        if empty is not None and empty is not NO_ANSWER and not isinstance(empty, ModelShape):
            raise TypeError("ArgsLane: empty must be None, NO_ANSWER or a ModelShape")
        if not isinstance(shape, ModelShape):
            raise TypeError("ArgsLane: shape must be a ModelShape")
        if type(getattr(parser, "__dict__", None)) is not dict:
            raise TypeError("ArgsLane: parser must keep its attributes in a __dict__")
        if not isinstance(pieces, list):
            raise TypeError("ArgsLane: pieces must be a list")
        if dirty is not None and not isinstance(dirty, set):
            raise TypeError("ArgsLane: dirty must be a set or None")
        if closer is not None and not callable(getattr(closer, "feed", None)):
            raise TypeError("ArgsLane: closer must have a feed(piece) method")
        if (closer is None) != (on_close is None) or (on_close is not None and not callable(on_close)):
            raise TypeError("ArgsLane: closer and on_close (a callable) come together")
        if guard is not None and not hasattr(guard, "version"):
            raise TypeError("ArgsLane: guard must have a version attribute")
        self.parser, self.cls, self.shape, self.index, self.slot = parser, cls, shape, index, slot
        self.pieces, self.dirty, self.closer, self.on_close = pieces, dirty, closer, on_close
        self.guard, self.version, self.empty = guard, version, empty
        self.built = False

    def step(self, delta: str):
        if type(delta) is not str:
            raise TypeError(f"ArgsLane.step: delta must be a str, not {type(delta).__name__}")
        self.built = False  # whether the answer is one the lane made (a tree, or empty's)
        out = _step(self.parser, delta, self.cls, True)
        if type(out) is not str:
            if type(out) is list and not out and self.empty is not None:
                self.built = True
                return None if self.empty is NO_ANSWER else self.empty.build(None, None)
            return out
        cur = self.parser._cur
        if cur is None or cur.index != self.index:
            return out
        if self.guard is not None and self.guard.version != self.version:
            return out
        self.built = True
        self.pieces.append(out)
        if self.dirty is not None:
            self.dirty.add(self.slot)
        if self.closer is not None and self.closer.feed(out):
            self.on_close(self.slot)
        return self.shape.build(self.slot, out)


class ContentLane:
    """Where an integration answers content: ``step(delta)`` is
    ``step_args(parser, delta, cls)``, except that a delta the parser answers
    as content, whole (``None``), is answered as ``shape.build(None, delta)``
    (the engine's content result).  Every other answer comes back as
    ``step_args`` gives it (``built`` false): the caller then takes its
    general path."""

    __slots__ = ("parser", "cls", "shape", "built")

    def __init__(self, parser, cls, shape) -> None:
        if not isinstance(shape, ModelShape):
            raise TypeError("ContentLane: shape must be a ModelShape")
        if type(getattr(parser, "__dict__", None)) is not dict:
            raise TypeError("ContentLane: parser must keep its attributes in a __dict__")
        self.parser, self.cls, self.shape = parser, cls, shape
        self.built = False

    def step(self, delta: str):
        if type(delta) is not str:
            raise TypeError(f"ContentLane.step: delta must be a str, not {type(delta).__name__}")
        if not delta:
            raise ValueError("ContentLane.step: delta must not be empty")
        out = _step(self.parser, delta, self.cls, True)
        self.built = out is None
        return self.shape.build(None, delta) if out is None else out


def _lane_or_general(owner, lane, delta: str, d=None):
    out = lane.step(delta)
    if lane.built:
        return out
    if out is None and d is not None:
        # a delta the argument lane's step answered as content, whole: the
        # owner's content lane (when it keeps one) builds its result
        c = d.get("_chot")
        if type(c) is ContentLane:
            return c.shape.build(None, delta)
    return owner._answer(out, delta)


def vllm_tool_streaming(self, previous_text, current_text, delta_text, previous_token_ids, current_token_ids,
                        delta_token_ids, request):
    """vLLM's ``extract_tool_calls_streaming`` for an integration class that
    keeps its lane in ``_hot`` and its request in ``_request`` (a class
    attribute: it binds as a method).  Inside a call's arguments (a lane, the
    same request, a non-empty ``str`` delta) the lane answers, and what it
    does not build goes to ``self._answer(out, delta_text)``; every other
    delta goes to ``self._streaming(previous_text, delta_text, request)``.
    A class that keeps a ``ContentLane`` in ``_chot`` has it answer the same
    deltas outside a lane (what it does not build goes to ``_answer``), and
    build the content result of one the lane's step answered as content."""
    d = self.__dict__
    if type(delta_text) is str and delta_text and request is d.get("_request"):
        hot = d.get("_hot")
        if type(hot) is ArgsLane:
            return _lane_or_general(self, hot, delta_text, d)
        if hot is None:
            hot = d.get("_chot")
            if type(hot) is ContentLane:
                return _lane_or_general(self, hot, delta_text)
    return self._streaming(previous_text, delta_text, request)


def sglang_tool_streaming(self, new_text, tools):
    """SGLang's ``parse_streaming_increment`` for an integration class that
    keeps its lane in ``_hot`` and the tools its schemas came from in
    ``_schemas_for`` (a class attribute: it binds as a method).  Inside a
    call's arguments (a lane, the same tools, a ``str`` delta) the lane
    answers, and what it does not build goes to ``self._answer(out,
    new_text)``; every other delta goes to ``self._streaming(new_text, tools)``.
    A class that keeps a ``ContentLane`` in ``_chot`` has it answer a
    non-empty delta outside a lane (what it does not build goes to
    ``_answer``), and build the content result of one the lane's step
    answered as content."""
    d = self.__dict__
    if type(new_text) is str and tools is d.get("_schemas_for"):
        hot = d.get("_hot")
        if type(hot) is ArgsLane:
            return _lane_or_general(self, hot, new_text, d)
        if hot is None and new_text:
            hot = d.get("_chot")
            if type(hot) is ContentLane:
                return _lane_or_general(self, hot, new_text)
    return self._streaming(new_text, tools)


TAIL = 16  # characters of what it read that ``sglang_tool_streaming_tail`` keeps


def sglang_tool_streaming_tail(self, new_text, tools):
    """``sglang_tool_streaming`` for a detector that also keeps the last
    ``TAIL`` characters it read in ``_mtail``: a result the lane builds
    updates it, as reading ``new_text`` would; ``self._answer(out, new_text)``
    (the lane read the text and built nothing) updates it itself.  While a
    call is held (``_held`` not ``None``, no lane), a ``str`` delta for the
    same tools that lacks every character of ``_hold.stops`` is kept there
    unread and answered ``_kept_shape.build(None, "")``, as
    ``sglang_held_streaming`` keeps one (``_mtail`` is left: the kept text is
    read later)."""
    d = self.__dict__
    if type(new_text) is str and tools is d.get("_schemas_for"):
        hot = d.get("_hot")
        if type(hot) is ArgsLane:
            out = hot.step(new_text)
            if hot.built:
                d["_mtail"] = (d["_mtail"] + new_text)[-TAIL:]
                return out
            return self._answer(out, new_text)
        if d.get("_held") is not None:
            shape = d.get("_kept_shape")
            if type(shape) is ModelShape and _hold_keeps_plain(d.get("_hold"), new_text):
                return shape.build(None, "")
    return self._streaming(new_text, tools)


def to_deltas(events: list, cls) -> list:
    """A chunk's events in text order -> ``cls`` deltas, joining neighbours of the
    same kind. Pieces are collected and joined once per delta (repeated ``+=``
    on a growing string would make one large delta quadratic)."""
    new = _builder(cls)
    groups: list = []  # [kind, index, id, name, pieces]
    last = None
    for e in events:
        kind = e[0]
        if kind == "c":
            if last is not None and last[0] == "c":
                last[4].append(e[2])
                continue
            last = ["c", e[1], None, None, [e[2]]]
        elif kind == "n":
            last = ["a", e[1], e[2], e[3], []]
        else:
            if last is not None and last[0] == "a" and last[1] == e[1]:
                last[4].append(e[2])
                continue
            last = ["a", e[1], None, None, [e[2]]]
        groups.append(last)
    out: list = []
    for kind, index, cid, name, pieces in groups:
        text = pieces[0] if len(pieces) == 1 else "".join(pieces)
        if kind == "c":
            out.append(new(index, None, None, None, text))
        else:
            out.append(new(index, cid, name, text if pieces else None, None))
    return out


# -- one chunk -----------------------------------------------------------------------

def step_args(p, delta: str, cls):
    """``step``, except that a result made of one piece of the open call's
    arguments (``p._cur``) comes back as that piece's text (a ``str``)."""
    return _step(p, delta, cls, True)


def push_content(p, delta: str):
    """``p._push(delta)`` for a non-empty ``delta``, the scan the parser waits
    in fed first (as ``step``), then the content it gave, joined (``""`` for
    none): the parser's events are taken (a new list), the argument text it
    wrote is in its calls.  The same parser state and calls as ``_push``."""
    text = _feed(p, delta)
    if text:
        p._cur.args.append(text)
    events = p._events
    if not events:
        return ""
    p._events = []
    return "".join([e[2] for e in events if e[0] == "c"])


def step(p, delta: str, cls):
    """``p.parse_delta(delta)`` for a checked, non-empty ``delta``: the chunk goes
    straight to the scan the parser's generator waits in (``p._lane``: a
    ``(Markers, sink)`` pair of ``_until`` or the ``JsonReader`` of ``_json``) while
    that scan cannot finish in it; otherwise the generator resumes (``p._push``).
    Either way the parser ends in the same state with the same events. When the
    lane writes the current call's arguments (``p._lane_args``) and the chunk
    stays in it, they are appended here and returned as the chunk's one delta."""
    return _step(p, delta, cls, False)


def max_tool_step(self, delta):
    """MAX's ``parse_delta`` for an integration class that keeps our parser
    in ``_rc``, MAX's delta class in ``_delta_t`` and the scanner's ``step``
    it uses in ``_step`` (a class attribute: it binds as a method).  A
    non-empty ``str`` delta is that step, answered in MAX's class;
    everything else goes to ``self._parse_other(delta)``."""
    d = self.__dict__
    if type(delta) is str and delta:
        st = d.get("_step")
        if st is not None:
            return st(d["_rc"], delta, d["_delta_t"])
    return self._parse_other(delta)


_HOLD_BLOCK = 256  # kept deltas an ArgHold joins into one block


def _hold_keeps_plain(hold, delta: str) -> bool:
    """``hold.keep_plain(delta)``: ``delta`` lacks every character of
    ``hold.stops`` (an ``ArgHold``'s: the character every closer ends with),
    so it is kept unread (appended to ``hold.pend``; ``hold.compact()`` once
    256 are kept) and True answered.  False (nothing done): a delta with one
    of them, or a hold without a non-empty ``stops`` str and a ``pend`` list."""
    if hold is None:
        return False
    stops = getattr(hold, "stops", None)
    if type(stops) is not str or not stops:
        return False
    for c in stops:
        if c in delta:
            return False
    pend = getattr(hold, "pend", None)
    if type(pend) is not list:
        return False
    pend.append(delta)
    if len(pend) >= _HOLD_BLOCK:
        hold.compact()
    return True


def sglang_held_streaming(self, new_text, tools):
    """SGLang's ``parse_streaming_increment`` for an integration class that
    keeps the deltas of an open call's arguments in an ``ArgHold`` (``_hold``)
    while ``_held`` is not ``None`` (a class attribute: it binds as a method).
    A ``str`` delta for the same tools (``_schemas_for``) that cannot complete
    a closer (it lacks every character of ``_hold.stops``) is kept there and answered
    ``_kept_shape.build(None, "")`` (a ``ModelShape``: SGLang's empty text
    result); every other delta goes to ``self._held_streaming(new_text, tools)``."""
    d = self.__dict__
    if type(new_text) is str and d.get("_held") is not None and tools is d.get("_schemas_for"):
        shape = d.get("_kept_shape")
        if type(shape) is ModelShape and _hold_keeps_plain(d.get("_hold"), new_text):
            return shape.build(None, "")
    return self._held_streaming(new_text, tools)


def max_held_step(self, delta):
    """MAX's ``parse_delta`` for an integration class that keeps the deltas
    of an open call's arguments in an ``ArgHold`` (``_hold``) while ``_held``
    is not ``None`` (a class attribute: it binds as a method).  A ``str``
    delta that cannot complete a closer (it lacks every character of ``_hold.stops``) is kept
    there and answered ``[]``; every other delta goes to
    ``self._held_parse(delta)``."""
    d = self.__dict__
    if type(delta) is str and d.get("_held") is not None and _hold_keeps_plain(d.get("_hold"), delta):
        return []
    return self._held_parse(delta)


_LIST_APPEND = type([].append)


def stretch(p, drops: tuple):
    """The ``Markers`` of the stretch the parser waits in when it reads that
    stretch without a word, else ``None``: its lane an ``_until`` scan
    (``(Markers, sink)``) of markers other than the content's, nothing held
    (``_pos`` at the buffer's end) or recorded, and the sink a list's
    ``append`` (the text kept for later) or one of ``drops`` (dropped).  Text
    with none of the characters those markers start with only adds to it."""
    if type(drops) is not tuple:
        raise TypeError(f"stretch: drops must be a tuple, not {type(drops).__name__}")
    lane = p._lane
    if type(lane) is not tuple or len(lane) != 2 or p._rec is not None or p._pos != len(p._buf):
        return None
    ms, sink = lane
    if ms is p._content_markers:
        return None
    if type(sink) is _LIST_APPEND:
        return ms if type(sink.__self__) is list and sink.__name__ == "append" else None
    for x in drops:
        if sink is x:
            return ms
    return None


def _feed(p, delta: str):
    """``p._push(delta)``, the scan the parser waits in fed directly while it
    cannot finish in the chunk (see ``step``): the text of the open call's
    arguments that the lane wrote and the parser did not (``_lane_args``), else
    ``None``."""
    text = None
    lane = p._lane
    if lane is None or p._rec is not None:
        p._push(delta)
    else:
        buf = p._buf
        pos = p._pos
        p._base += pos
        buf = buf[pos:] + delta if pos < len(buf) else delta
        p._buf = buf
        p._pos = 0
        text = None
        if type(lane) is tuple:
            ms, sink = lane
            if ms.rx.search(buf) is not None:
                p._resume()
            else:
                h = hold_start(ms, buf, 0)
                p._pos = h
                if p._lane_args:
                    text = sink.text_of(buf[:h])
                else:
                    sink(buf[:h])
        else:
            if p._lane_args and type(lane) is JsonReader:
                pos, status = lane._feed(buf, 0, False)
                out = lane.out
                if out:
                    text = out[0] if len(out) == 1 else "".join(out)
                    out.clear()
            else:
                pos, status = lane.feed(buf, 0, False)
            p._pos = pos
            if status != NEED:
                if text:
                    p._emit_args(text)
                    text = None
                p._lane_status = status
                p._resume()
    return text


def _step(p, delta: str, cls, raw: bool):
    text = _feed(p, delta)
    if text:
        cur = p._cur
        cur.args.append(text)
        if raw:
            return text
        return [_builder(cls)(cur.index, None, None, text, None)]
    events = p._events
    if not events:
        return []
    p._events = []
    if len(events) == 1:
        e = events[0]
        if e[0] == "c" and e[2] == delta:
            return None
        if raw and e[0] == "a":
            cur = p._cur
            if cur is not None and cur.index == e[1]:
                return e[2]
    elif all(e[0] == "c" for e in events) and "".join(e[2] for e in events) == delta:
        return None
    return to_deltas(events, cls)
