"""Incremental JSON reader that re-serializes as it reads.

Model output is fed a chunk at a time; the reader writes a canonical form to a sink
as soon as each piece is certain, so arguments can stream while staying valid JSON.

Canonical form: ``json.dumps(value, ensure_ascii=False)`` layout (``", "`` and
``": "`` separators, no other whitespace, same string escapes), except that
numbers keep the model's spelling (no float round-trip, no precision loss),
duplicate keys are kept, and surrogate code points that do not form a pair are
written as ``\\uXXXX`` escapes so the text always encodes as UTF-8. Raw control
characters inside strings are accepted (``strict=False``) and escaped. ``NaN`` and
``Infinity`` are rejected.
"""

from __future__ import annotations

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


def dump_str(s: str) -> str:
    return '"' + escape(s) + '"'


_WS_RUN = re.compile(r"[ \t\n\r]*")
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


def normalize(text: str):
    """Canonical JSON text for ``text`` if it is exactly one JSON value (surrounding
    whitespace allowed), else ``None``."""
    out: list[str] = []
    r = JsonReader(out.append)
    pos, status = r.feed(text, 0, True)
    if status != DONE or text[pos:].strip(" \t\n\r"):
        return None
    return "".join(out)


def _kind(canon: str) -> str:
    c = canon[0]
    if c == "{":
        return "object"
    if c == "[":
        return "array"
    if c == '"':
        return "string"
    if c == "t" or c == "f":
        return "boolean"
    if c == "n":
        return "null"
    return "number" if any(ch in canon for ch in ".eE") else "integer"


# JSON Schema type names, plus the Python-style names real tool definitions use
# (compared lower-cased); any other name tells nothing and is ignored
_TYPE_NAMES = {
    "string": "string", "str": "string", "text": "string",
    "integer": "integer", "int": "integer", "long": "integer",
    "number": "number", "float": "number", "double": "number", "decimal": "number",
    "boolean": "boolean", "bool": "boolean",
    "object": "object", "dict": "object", "map": "object",
    "array": "array", "list": "array", "tuple": "array",
    "null": "null", "none": "null", "nonetype": "null",
}


def _value_kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "array"
    if isinstance(v, dict):
        return "object"
    return None


def schema_types(prop) -> frozenset:
    """JSON-schema types a property allows: ``type`` (a name or a list; Python-style
    names such as ``int``/``float``/``bool``/``dict``/``list``/``str`` count as their
    JSON Schema equivalents), the members of ``anyOf``/``oneOf``, ``nullable``, and,
    when no type is given, the kinds of the ``enum``/``const`` values. Empty when
    nothing is known (then values are typed as without a schema). Iterative, and a
    schema that refers to itself is visited once."""
    types: set[str] = set()
    seen: set[int] = set()
    todo = [prop]
    while todo:
        p = todo.pop()
        if not isinstance(p, dict) or id(p) in seen:
            continue
        seen.add(id(p))
        t = p.get("type")
        names = [t] if isinstance(t, str) else list(t) if isinstance(t, (list, tuple)) else []
        known = {_TYPE_NAMES.get(x.strip().lower()) for x in names if isinstance(x, str)}
        known.discard(None)
        if not known:
            values = p.get("enum")
            if not isinstance(values, (list, tuple)):
                values = [p["const"]] if "const" in p else []
            known = {_value_kind(v) for v in values}
            known.discard(None)
        if known and p.get("nullable") is True:
            known.add("null")
        types |= known
        for key in ("anyOf", "oneOf"):
            subs = p.get(key)
            if isinstance(subs, (list, tuple)):
                todo.extend(subs)
    return frozenset(types)


_STRING_ONLY = frozenset(["string"])


def typed_value(text: str, types: frozenset) -> str:
    """JSON text for an XML-style parameter value.

    Without a schema: JSON when the text parses as JSON, else a string. With one, a
    ``string``-only parameter stays a string; otherwise parsed JSON is kept when its
    kind is allowed (``integer`` counts as a ``number``).
    """
    if types == _STRING_ONLY:
        return dump_str(text)
    canon = normalize(text)
    if canon is None:
        if "boolean" in types and text.strip() in ("True", "False"):
            return "true" if text.strip() == "True" else "false"
        return dump_str(text)
    if not types:
        return canon
    kind = _kind(canon)
    if kind in types or (kind == "integer" and "number" in types):
        return canon
    return dump_str(text)
