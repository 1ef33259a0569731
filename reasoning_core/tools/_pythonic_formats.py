"""Pythonic and JSON-list tool formats.

Pythonic calls are Python call syntax with literal keyword arguments,
``[get_weather(city="Paris", days=3), ping()]``: bare (``pythonic``, Llama 3.2 /
Llama 4, optionally inside ``<|python_start|>`` … ``<|python_end|>``), inside
``<|tool_call_start|>`` … ``<|tool_call_end|>`` (LFM2), or one call per line inside
``<function_calls>`` … ``</function_calls>`` (OLMo 3). ``PyLiteralReader`` reads one
Python literal incrementally and writes it as canonical JSON as it goes, so the
arguments stream like a JSON format's: no ``eval``/``ast`` of model output.

The JSON-list formats put ``{"name": …, "arguments": {…}}`` objects after a marker:
``functools[…]`` (Phi-4-mini), ``<|tool_call|>[…]`` / ``<tool_call>[…]`` (Granite
3.x), ``<function_call> {…}`` (Granite-20B-FunctionCalling), ``<|action_start|>
<|plugin|>{…}<|action_end|>`` (InternLM2 / Intern-S1) and xLAM's bare list (or
fenced, or in ``<tool_call>``/``[TOOL_CALLS]``).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Optional

from .._tag_calls import ToolTagSpec, schema_call
from ..families import tool_opener
from ._base import BaseToolParser, _drop, markers, valid_name
from ._json import DONE, ERROR, NEED, escape

# ---------------------------------------------------------------------------- Python literals

_WS_RUN = re.compile(r"[ \t\n\r]*")
_SQ_RUN = re.compile(r"[^'\\]+")
_DQ_RUN = re.compile(r'[^"\\]+')
_NUM_RUN = re.compile(r"[0-9_.eE+-]*")
_NAME_RUN = re.compile(r"[A-Za-z0-9_]*")
# a Python decimal literal (leading zeros tolerated: models write month=07)
_NUM_OK = re.compile(
    r"([+-]?)((?:[0-9](?:_?[0-9])*)?)(?:(\.)((?:[0-9](?:_?[0-9])*)?))?(?:[eE]([+-]?[0-9](?:_?[0-9])*))?"
)
_OCT = frozenset("01234567")
_HEX = frozenset("0123456789abcdefABCDEF")
_SIMPLE_ESC = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
               "t": "\t", "v": "\v", "\n": "", "\r": ""}
_HEX_LEN = {"x": 2, "u": 4, "U": 8}
_NAMES = {"True": "true", "False": "false", "None": "null", "true": "true", "false": "false", "null": "null"}
_STR_PREFIX = frozenset(["r", "R", "u", "U"])
_CLOSERS = {"l": "]", "t": "]", "p": "]", "d": "}"}
_OPEN_OF = {"l": "]", "t": ")", "p": ")", "d": "}"}

# states
(_VALUE, _ITEM, _COLON, _AFTER, _QOPEN, _STR, _ESC, _ESCN, _NUM, _NAME) = range(10)


def _json_number(text: str, as_key: bool) -> Optional[str]:
    """JSON spelling of a Python decimal literal (``None`` if it is not one)."""
    m = _NUM_OK.fullmatch(text)
    if m is None:
        return None
    sign, whole, dot, frac, exp = m.groups()
    if not whole and not frac:
        return None
    whole = whole.replace("_", "").lstrip("0") or "0"
    frac = (frac or "").replace("_", "")
    if as_key:
        if dot or exp is not None:
            return None  # a float key would need Python's repr
        return '"' + ("-" if sign == "-" and whole != "0" else "") + whole + '"'
    out = ("-" if sign == "-" else "") + whole
    if dot:
        out += "." + (frac or "0")
    if exp is not None:
        out += "e" + exp.replace("_", "")
    return out


class PyLiteralReader:
    """Reads exactly one Python literal from successive buffers and writes it as
    canonical JSON (``json.dumps(..., ensure_ascii=False)`` layout).

    Accepted: strings (both quotes, triple-quoted, ``r``/``u`` prefixes, every
    escape Python knows; raw control characters are tolerated), decimal numbers
    (signed, ``_`` separators, leading zeros tolerated), ``True``/``False``/
    ``None`` (and the JSON spellings), lists, tuples (as lists), dicts with string,
    integer or constant keys, trailing commas. Anything else is an error. Same
    protocol as ``JsonReader.feed``: ``(pos, NEED|DONE|ERROR)``; a stack replaces
    recursion, and output is handed to the sink once per ``feed`` (held back only
    while a ``(`` is undecided between a tuple and a parenthesized value).
    """

    __slots__ = ("sink", "out", "state", "stack", "holds", "tok", "pend", "is_key", "quote", "triple", "raw",
                 "qn", "esc")

    def __init__(self, sink):
        self.sink = sink
        self.out: list[str] = []
        self.state = _VALUE
        self.stack: list[str] = []  # l list, t tuple, p undecided "(", d dict
        self.holds: list[int] = []  # out slots of undecided "(" (an "[" or nothing)
        self.tok: list[str] = []    # pieces of a number, a name or an escape
        self.pend = False           # a "," read, its ", " not yet written
        self.is_key = False
        self.quote = ""
        self.triple = False
        self.raw = False
        self.qn = 0                 # quotes seen at a string's start / pending in a triple string
        self.esc = ""               # the escape kind being read (o x u U N)

    def feed(self, buf: str, pos: int, eof: bool):
        pos, status = self._feed(buf, pos, eof)
        out = self.out
        if out and not self.holds:
            self.sink(out[0] if len(out) == 1 else "".join(out))
            out.clear()
        elif status != NEED and self.holds:
            # an error inside an open "(": the text before it was decided (a
            # chunk that ended there sent it), so it goes out; the rest is dropped
            done = out[:self.holds[0]]
            out.clear()
            if done:
                self.sink("".join(done))
        return pos, status

    def _start_value(self, c: str) -> bool:
        """Dispatch on the first character of a value (or key); False: not a value."""
        if self.pend:
            self.out.append(", ")
            self.pend = False
        if c == "'" or c == '"':
            self.quote, self.raw, self.qn = c, False, 1
            self.state = _QOPEN
            return True
        if c == "-" or c == "+" or c == "." or "0" <= c <= "9":
            self.tok.clear()
            self.state = _NUM
            return True
        if c.isascii() and (c.isalpha() or c == "_"):
            self.tok.clear()
            self.state = _NAME
            return True
        if self.is_key:
            return False
        if c == "[":
            self.out.append("[")
            self.stack.append("l")
        elif c == "{":
            self.out.append("{")
            self.stack.append("d")
        elif c == "(":
            self.holds.append(len(self.out))
            self.out.append("")
            self.stack.append("p")
        else:
            return False
        self.state = _ITEM
        return True

    def _end_value(self):
        if self.is_key:
            self.is_key = False
            self.state = _COLON
        else:
            self.state = _AFTER

    def _feed(self, buf: str, pos: int, eof: bool):
        out = self.out
        n = len(buf)
        while True:
            st = self.state
            if st == _STR:
                q = self.quote
                if self.triple:
                    m = (_SQ_RUN if q == "'" else _DQ_RUN).match(buf, pos)
                    if m:
                        if self.qn:
                            out.append(escape(q * self.qn))
                            self.qn = 0
                        out.append(escape(m.group()))
                        pos = m.end()
                    if pos >= n:
                        break
                    c = buf[pos]
                    pos += 1
                    if c == q:
                        self.qn += 1
                        if self.qn == 3:
                            self.qn = 0
                            out.append('"')
                            self._end_value()
                    else:  # a backslash
                        if self.qn:
                            out.append(escape(q * self.qn))
                            self.qn = 0
                        self.state = _ESC
                    continue
                m = (_SQ_RUN if q == "'" else _DQ_RUN).match(buf, pos)
                if m:
                    out.append(escape(m.group()))
                    pos = m.end()
                if pos >= n:
                    break
                c = buf[pos]
                pos += 1
                if c == q:
                    out.append('"')
                    self._end_value()
                else:
                    self.state = _ESC
                continue
            if st == _ESC:
                if pos >= n:
                    break
                c = buf[pos]
                pos += 1
                self.state = _STR
                if self.raw:
                    out.append(escape("\\" + c))
                elif c in _SIMPLE_ESC:
                    out.append(escape(_SIMPLE_ESC[c]))
                elif c in _OCT:
                    self.esc, self.tok = "o", [c]
                    self.state = _ESCN
                elif c in _HEX_LEN or c == "N":
                    self.esc, self.tok = c, []
                    self.state = _ESCN
                else:  # Python keeps an unknown escape as written
                    out.append(escape("\\" + c))
                continue
            if st == _ESCN:
                kind, tok = self.esc, self.tok
                if kind == "o":
                    while pos < n and len(tok) < 3 and buf[pos] in _OCT:
                        tok.append(buf[pos])
                        pos += 1
                    if len(tok) < 3 and pos >= n and not eof:
                        break
                    out.append(escape(chr(int("".join(tok), 8))))
                elif kind == "N":
                    while pos < n and (not tok or tok[-1] != "}"):
                        if len(tok) > 90 or (not tok and buf[pos] != "{"):
                            return pos, ERROR
                        tok.append(buf[pos])
                        pos += 1
                    if not tok or tok[-1] != "}":
                        if eof:
                            return pos, ERROR
                        break
                    try:
                        out.append(escape(unicodedata.lookup("".join(tok)[1:-1])))
                    except (KeyError, ValueError):  # no such name (a surrogate in it: UnicodeEncodeError)
                        return pos, ERROR
                else:
                    need = _HEX_LEN[kind]
                    while pos < n and len(tok) < need:
                        if buf[pos] not in _HEX:
                            return pos, ERROR
                        tok.append(buf[pos])
                        pos += 1
                    if len(tok) < need:
                        if eof:
                            return pos, ERROR
                        break
                    cp = int("".join(tok), 16)
                    if cp > 0x10FFFF:
                        return pos, ERROR
                    out.append(escape(chr(cp)))
                self.tok = []
                self.state = _STR
                continue
            if st == _QOPEN:
                q = self.quote
                while pos < n and self.qn < 3 and buf[pos] == q:
                    self.qn += 1
                    pos += 1
                if self.qn == 3:
                    self.triple, self.qn = True, 0
                    out.append('"')
                    self.state = _STR
                    continue
                if pos >= n and not eof:
                    break
                if self.qn == 2:  # an empty string
                    self.qn = 0
                    out.append('""')
                    self._end_value()
                    continue
                if pos >= n:
                    return pos, ERROR
                self.triple, self.qn = False, 0
                out.append('"')
                self.state = _STR
                continue
            if st == _NUM or st == _NAME:
                m = (_NUM_RUN if st == _NUM else _NAME_RUN).match(buf, pos)
                if m.end() > pos:
                    self.tok.append(m.group())
                    pos = m.end()
                if pos >= n and not eof:
                    break
                text = "".join(self.tok)
                self.tok = []
                if st == _NAME:
                    if text in _STR_PREFIX and pos < n and buf[pos] in "'\"":
                        self.quote, self.raw, self.qn = buf[pos], text in ("r", "R"), 1
                        pos += 1
                        self.state = _QOPEN
                        continue
                    word = _NAMES.get(text)
                    if word is None:
                        return pos, ERROR
                    out.append('"' + word + '"' if self.is_key else word)
                else:
                    num = _json_number(text, self.is_key)
                    if num is None:
                        return pos, ERROR
                    out.append(num)
                self._end_value()
                continue
            if st == _AFTER and not self.stack:
                return pos, DONE
            # structural states: whitespace first
            pos = _WS_RUN.match(buf, pos).end()
            if pos >= n:
                break
            c = buf[pos]
            if st == _VALUE:
                if not self._start_value(c):
                    return pos, ERROR
                pos += 1 if self.state not in (_NUM, _NAME) else 0
            elif st == _ITEM:
                top = self.stack[-1]
                if c == _OPEN_OF[top]:
                    pos += 1
                    self.pend = False
                    self._close(top, empty_paren=top == "p")
                    continue
                self.is_key = top == "d"
                if not self._start_value(c):
                    return pos, ERROR
                pos += 1 if self.state not in (_NUM, _NAME) else 0
            elif st == _COLON:
                if c != ":":
                    return pos, ERROR
                out.append(": ")
                self.state = _VALUE
                pos += 1
            else:  # _AFTER inside a container
                top = self.stack[-1]
                pos += 1
                if c == ",":
                    if top == "p":  # "(x," is a tuple
                        self.out[self.holds.pop()] = "["
                        self.stack[-1] = top = "t"
                    self.pend = True
                    self.state = _ITEM
                elif c == _OPEN_OF[top]:
                    self._close(top, empty_paren=False)
                else:
                    return pos - 1, ERROR
        if eof:
            if self.state == _AFTER and not self.stack:
                return pos, DONE
            return pos, ERROR
        return pos, NEED

    def _close(self, top: str, empty_paren: bool) -> None:
        self.stack.pop()
        if top == "p":
            slot = self.holds.pop()
            if empty_paren:  # "()" is an empty tuple
                self.out[slot] = "["
                self.out.append("]")
            # "(x)" is x: its slot stays empty
        else:
            self.out.append(_CLOSERS[top])
        self.state = _AFTER


# ---------------------------------------------------------------------------- pythonic calls

_IDENT_CHARS = re.compile(r"[A-Za-z0-9_]*")


class _Held(BaseToolParser):
    """Text held in ``_rec`` while a candidate section is undecided (released as
    content when it is not a call), and optional closing markup."""

    def _release(self):
        if self._rec is None:
            return
        text = "".join(self._rec) + self._buf[self._rec_from:self._pos]
        self._rec = None
        self._content(text)


class _PythonicBase(_Held):
    """Shared reading of ``name(key=literal, …)`` calls."""

    def _py(self, sink):
        reader = PyLiteralReader(sink)
        while True:
            self._pos, status = reader.feed(self._buf, self._pos, self._eof)
            if status == DONE:
                return True
            if status == ERROR:
                self._fail()
                return False
            yield

    def _ident(self):
        """A Python (ASCII) identifier of at most 64 characters, or ``None`` (a
        longer run is read to its end: where it stops does not depend on the
        chunks)."""
        name = yield from self._read(_IDENT_CHARS, 64)
        if not name or name[0].isdigit():
            return None
        return name

    def _call(self):
        """One ``name(key=value, …)``. True: a call was emitted and closed; False:
        one was opened and failed; None: not a call (nothing emitted; the offending
        character is not consumed). The call opens once its shape is certain: at
        ``name(`` followed by ``)`` or by ``key=``."""
        name = yield from self._ident()
        if name is None or not valid_name(name):
            return None
        if not (yield from self._expect("(")):
            return None
        yield from self._skip_ws()
        c = yield from self._peek()
        if c == ")":
            self._pos += 1
            self._open(name)
            self._emit_args("{}")
            self._close_call(True)
            return True
        count = 0
        while True:
            key = yield from self._ident()
            if key is None:
                return self._broken_call(count)
            yield from self._skip_ws()
            if not (yield from self._expect("=")) or (yield from self._peek()) == "=":
                return self._broken_call(count)
            if count == 0:
                self._open(name)
            self._param_prefix(count, key)
            count += 1
            yield from self._skip_ws()
            if not (yield from self._py(self._emit_args)):
                self._close_call(False)
                return False
            yield from self._skip_ws()
            c = yield from self._peek()
            if c == ",":
                self._pos += 1
                yield from self._skip_ws()
                c = yield from self._peek()
                if c != ")":
                    continue
            if c != ")":
                self._close_call(False)
                return False
            self._pos += 1
            self._emit_args("}")
            self._close_call(True)
            return True

    def _broken_call(self, count):
        if count:
            self._close_call(False)
            return False
        return None

    def _open(self, name):
        self._rec = None  # a call: the held text was markup
        self._open_call(name)

    def _call_list(self):
        """Calls separated by ``,`` up to ``]`` (the ``[`` consumed); a trailing
        comma is allowed. True when the list closed; None when its first element is
        not a call (nothing emitted); False when it broke after a call."""
        first = True
        while True:
            yield from self._skip_ws()
            r = yield from self._call()
            if r is None:
                if first:
                    return None
                self._fail()
                return False
            if r is False:
                return False
            first = False
            yield from self._skip_ws()
            c = yield from self._peek()
            if c == ",":
                self._pos += 1
                yield from self._skip_ws()
                c = yield from self._peek()
                if c != "]":
                    continue
            if c == "]":
                self._pos += 1
                return True
            self._fail()
            return False



PY_START, PY_END = "<|python_start|>", "<|python_end|>"


class PythonicToolParser(_PythonicBase):
    """``[f(a=1, b="x"), g()]``: a Python list of calls with literal keyword
    arguments, anywhere in the text (Llama 3.2, Llama 4, ToolACE, …); Llama 4's
    ``<|python_start|>`` before it and ``<|python_end|>`` after it are markup.

    A ``[`` is held until its first element shows the shape of a call
    (``name(`` then ``)`` or ``key=``); any other bracket is released as content
    at once, so prose like ``[1]`` or ``[see below]`` streams with little delay.
    A call that breaks after it opened fails (the rest is content). Never raises.
    Values convert to JSON: tuples become lists, ``True``/``None`` become
    ``true``/``null``.
    """

    format_name = "pythonic"
    openers = (PY_START, "[")
    raises_on_failure = False

    def _section(self, opener):
        self._rec = [opener]
        self._rec_from = self._pos
        if opener == PY_START:
            yield from self._skip_ws()
            if not (yield from self._expect("[")):
                self._release()
                return None
        r = yield from self._call_list()
        if r is None:
            self._release()
            return None
        self._rec = None
        if r and opener == PY_START:
            yield from self._ws_then(PY_END)
        return None


LFM_START, LFM_END = "<|tool_call_start|>", "<|tool_call_end|>"


class Lfm2ToolParser(_PythonicBase):
    """LFM2 / LFM2.5: ``<|tool_call_start|>[f(a=1), g()]<|tool_call_end|>``. The
    block may hold one call without the list, or a JSON list of
    ``{"name", "arguments"}`` objects. Text after the list up to the end token is
    dropped; a malformed block fails (its text up to the end token is dropped)."""

    format_name = "lfm2"
    openers = (LFM_START,)
    _END = markers(LFM_END)

    def _section(self, opener):
        yield from self._skip_ws()
        c = yield from self._peek()
        if c == "[":
            self._pos += 1
            yield from self._skip_ws()
            if (yield from self._peek()) == "{":
                yield from self._call_objects(False)  # (never []: a { is next)
            elif (yield from self._call_list()) is None:
                self._fail()
        elif c == "{":
            self._pos += 1
            yield from self._call_object(False)
        elif (yield from self._call()) is None:
            self._fail()
        yield from self._until(self._END, _drop)
        return None



OLMO_START, OLMO_END = "<function_calls>", "</function_calls>"


class Olmo3ToolParser(_PythonicBase):
    """OLMo 3: ``<function_calls>\\nf(a=1)\\ng(b="x")\\n</function_calls>``, one
    pythonic call per line (``null``/``true``/``false`` accepted as values; a
    ``,`` between calls or a ``[…]`` list around them is tolerated). A malformed
    call ends the block: the rest up to ``</function_calls>`` is dropped."""

    format_name = "olmo3"
    openers = (OLMO_START,)
    _END = markers(OLMO_END)

    def _section(self, opener):
        first = True
        listed = False
        while True:
            yield from self._skip_ws()
            c = yield from self._peek()
            if first and c == "[":
                self._pos += 1
                listed = True
                continue
            if c == "<" or c is None or (listed and c == "]"):
                break
            r = yield from self._call()
            if not r:
                if r is None:
                    self._fail()
                break
            first = False
            yield from self._skip_ws()
            if (yield from self._peek()) == ",":
                self._pos += 1
        if first:
            self._fail()
        yield from self._until(self._END, _drop)
        return None


# ---------------------------------------------------------------------------- JSON lists


class _JsonCallsBase(_Held):
    """Reading of ``[{call}, {call}, …]`` (the ``[`` consumed) and ``{call}``;
    text held in ``_rec`` (a candidate list) becomes markup once a call opens."""

    def _open_call(self, name, cid=None):
        self._rec = None
        return super()._open_call(name, cid)

    def _json_list(self, need_args: bool = False):
        """True when the list closed; None when its first element is not a call
        (nothing emitted); False when it broke."""
        first = True
        while True:
            yield from self._skip_ws()
            c = yield from self._peek()
            if c != "{":
                if first:
                    return None
                self._fail()
                return False
            self._pos += 1
            r = yield from self._call_object(need_args)
            if not r:
                return None if r is None and first else False
            first = False
            yield from self._skip_ws()
            c = yield from self._peek()
            if c == ",":
                self._pos += 1
                continue
            if c == "]":
                self._pos += 1
                return True
            self._fail()
            return False


class Phi4MiniJsonToolParser(_JsonCallsBase):
    """Phi-4-mini: ``functools[{"name": …, "arguments"|"parameters": {…}}, …]``.
    Text before and after the list is content. ``functools[`` not followed by a
    call is content (it is also a Python module's name); a list that breaks after
    a call fails there, the rest being content. Never raises."""

    format_name = "phi4_mini_json"
    tool_tag = ToolTagSpec("functools[", schema_call('{"name": "{name}", "arguments": ', "}"),
                           section=("functools[", "]"), separator=", ")
    openers = ("functools[",)
    raises_on_failure = False

    def _section(self, opener):
        self._rec = [opener]
        self._rec_from = self._pos
        if (yield from self._json_list()) is None:
            self._release()
        self._rec = None
        return None


# Hermes' <tool_call> (the Qwen3 family's tool-call opener), which Granite 3.1 and xLAM also write
_HERMES_CALL = tool_opener("qwen3")


class GraniteToolParser(_JsonCallsBase):
    """Granite 3.0 / 3.1: ``<|tool_call|>[{"name": …, "arguments": {…}}, …]`` (3.0,
    a special token) or ``<tool_call>[…]`` (3.1, plain text); no closing marker,
    the ``]`` ends the calls and any text after it is content."""

    format_name = "granite"
    # the 3.0 spelling (a special token)
    tool_tag = ToolTagSpec("<|tool_call|>", schema_call('{"name": "{name}", "arguments": ', "}"),
                           section=("<|tool_call|>[", "]"), separator=", ")
    openers = ("<|tool_call|>", _HERMES_CALL)

    def _section(self, opener):
        yield from self._skip_ws()
        c = yield from self._peek()
        if c == "[":
            self._pos += 1
            if (yield from self._json_list()) is None:
                self._fail()
        elif c == "{":
            self._pos += 1
            yield from self._call_object(False)
        else:
            self._fail()
        return None


class Granite20bFcToolParser(_JsonCallsBase):
    """Granite-20B-FunctionCalling: ``<function_call> {"name": …, "arguments":
    {…}}``, repeated; whitespace after a call is markup, other text content."""

    format_name = "granite_20b_fc"
    tool_tag = ToolTagSpec("<function_call>", schema_call(
        '<function_call> {"name": "{name}", "arguments": ', "}"))
    openers = ("<function_call>",)

    def _section(self, opener):
        yield from self._skip_ws()
        if (yield from self._peek()) != "{":
            self._fail()
            return None
        self._pos += 1
        if (yield from self._call_object(False)):
            yield from self._skip_ws()
        return None


IL_START, IL_PLUGIN, IL_END = "<|action_start|>", "<|plugin|>", "<|action_end|>"


class InternLMToolParser(_JsonCallsBase):
    """InternLM2 / Intern-S1: ``<|action_start|><|plugin|>\\n{"name": …,
    "parameters"|"arguments": {…}}<|action_end|>`` (SGLang's spelling has a space
    between the two opening tokens), repeated. Another action
    (``<|interpreter|>``) stays content; text inside the block after the object
    is dropped."""

    format_name = "internlm"
    tool_tag = ToolTagSpec("<|action_start|><|plugin|>", schema_call(
        '<|action_start|><|plugin|>\n{"name": "{name}", "parameters": ', "}<|action_end|>"))
    openers = (IL_START + IL_PLUGIN, IL_START + " " + IL_PLUGIN)
    _END = markers(IL_END)

    def _section(self, opener):
        yield from self._skip_ws()
        if (yield from self._peek()) == "{":
            self._pos += 1
            yield from self._call_object(False)
        else:
            self._fail()
        yield from self._until(self._END, _drop)
        return None


_FENCES = ("```json", "```")


class XlamToolParser(_JsonCallsBase):
    """xLAM: a JSON list ``[{"name": …, "arguments": {…}}, …]`` — bare, in a
    ```` ```json ```` fence, after ``[TOOL_CALLS]`` or inside ``<tool_call>`` …
    ``</tool_call>``. A bare ``[`` is held until its first element shows a call
    (``name`` and ``arguments``) and is released as content otherwise; a marker
    not followed by a list of calls stays content. Never raises."""

    format_name = "xlam"
    # the bare list: the trigger holds the first call's opening, the separator each later one's
    tool_tag = ToolTagSpec('[{"name": "', schema_call('{name}", "arguments": ', "}"),
                           section=('[{"name": "', "]"), separator=', {"name": "')
    openers = ("[", *_FENCES, "[TOOL_CALLS]", _HERMES_CALL)
    raises_on_failure = False
    _CLOSE = {"```json": "```", "```": "```", _HERMES_CALL: "</tool_call>"}

    def _section(self, opener):
        self._rec = [opener]
        self._rec_from = self._pos
        if opener != "[":
            yield from self._skip_ws()
            c = yield from self._peek()
            if c != "[" and (c != "{" or opener == "[TOOL_CALLS]"):
                self._release()
                return None
            self._pos += 1
            if c == "{":
                r = yield from self._call_object(True)
                r = None if r is None else r is True
            else:
                r = yield from self._json_list(True)
        else:
            r = yield from self._json_list(True)
        if r is None:
            self._release()
            return None
        self._rec = None
        close = self._CLOSE.get(opener)
        if r and close:
            yield from self._ws_then(close)
        return None


# our format name (and aliases) -> parser class, for reasoning_core.tools.create
PARSERS: dict[str, type[BaseToolParser]] = {
    "pythonic": PythonicToolParser,
    "llama4_pythonic": PythonicToolParser,
    "lfm2": Lfm2ToolParser,
    "olmo3": Olmo3ToolParser,
    "phi4_mini_json": Phi4MiniJsonToolParser,
    "granite": GraniteToolParser,
    "granite_20b_fc": Granite20bFcToolParser,
    "internlm": InternLMToolParser,
    "xlam": XlamToolParser,
}
# vLLM 0.33 tool-parser name -> our format name
VLLM_NAMES: dict[str, str] = {
    "pythonic": "pythonic",
    "llama4_pythonic": "pythonic",
    "lfm2": "lfm2",
    "olmo3": "olmo3",
    "phi4_mini_json": "phi4_mini_json",
    "granite": "granite",
    "granite-20b-fc": "granite_20b_fc",
    "internlm": "internlm",
    "xlam": "xlam",
    # the same grammar as a format we have
    "granite4": "hermes",          # <tool_call>{json}</tool_call>
    "jamba": "hunyuan_a13b",       # <tool_calls>[{json}, …]</tool_calls>
}
# SGLang 0.5.23 function-call parser name -> (our format, one-shot tool_index
# mode "tools"|"local", unlisted tools dropped one-shot, ... dropped streaming)
SGLANG_NAMES: dict[str, tuple[str, str, bool, bool]] = {
    "pythonic": ("pythonic", "local", True, True),
    "lfm2": ("lfm2", "local", True, True),
    "interns1": ("internlm", "tools", True, True),
}
# engine name -> why it is not served (the README lists these)
VLLM_UNSERVED: dict[str, str] = {}
SGLANG_UNSERVED: dict[str, str] = {}
