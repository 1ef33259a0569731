"""Formats framed by special-token markers: deepseek_v3, deepseek_v31, kimi_k2."""

from __future__ import annotations

import re

from ..families import terminators_of
from . import _base
from ._base import _WS, BaseToolParser, _drop, markers, valid_name

CALLS_BEGIN = terminators_of("deepseek_v3")[0]  # <｜tool▁calls▁begin｜>
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"


class _DeepSeekBase(BaseToolParser):
    """Calls inside ``<｜tool▁calls▁begin｜>`` … ``<｜tool▁calls▁end｜>``; text
    between calls inside the section is dropped. A call-begin without the section
    begin is a one-call section. A call whose call-end is missing ends at the next
    call-begin or section end."""

    openers = (CALLS_BEGIN, CALL_BEGIN)
    _SECTION = markers(CALL_BEGIN, CALLS_END)
    _TAIL = markers(CALL_END, CALL_BEGIN, CALLS_END)

    # Each step is first tried on the buffer as it is (``take``, ``json_value``:
    # no generator when the piece is whole), then waited for.

    def _section(self, opener):
        until = _base._scan.until
        bare = opener == CALL_BEGIN
        if bare:
            m = CALL_BEGIN
        else:
            m = until(self, self._SECTION, _drop)
            while m is False:  # ``_until``, written out (no generator per wait)
                yield
                self._lane = None
                m = until(self, self._SECTION, _drop)
        now = self._call_now if type(self)._call is type(self)._NOW_CALL else None
        while m == CALL_BEGIN:
            m = now() if now is not None else False
            if m is False:
                m = yield from self._call()
            if m == CALL_END:
                if bare:
                    return None
                m = until(self, self._SECTION, _drop)
                while m is False:
                    yield
                    self._lane = None
                    m = until(self, self._SECTION, _drop)
        return None

    def _args_and_tail(self, name):
        self._open_call(name)
        ok = self._json_args_now()
        if ok is None:
            ok = yield from self._json(self._emit_args, True)
        self._close_call(ok)
        r = _base._scan.take(self, self._TAIL)
        return r[1] if r is not None else (yield from self._until(self._TAIL, _drop))

    _NOW_CALL = None  # the ``_call`` that ``_call_now`` reads as (a subclass with its own keeps it)

    def _call_now(self):  # pragma: no cover - only where _NOW_CALL is set
        return False

    def _skip_call(self):
        self._fail()
        return (yield from self._until(self._TAIL, _drop))


_HEAD_END = markers(SEP, CALL_END, CALL_BEGIN, CALLS_END)
_NAME_LINE_END = markers("\n", CALL_END, CALL_BEGIN, CALLS_END)


class DeepSeekV3ToolParser(_DeepSeekBase):
    """``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{...}\\n```<｜tool▁call▁end｜>``
    (the code fence is optional)."""

    format_name = "deepseek_v3"

    def _call(self):
        take = _base._scan.take
        r = take(self, _HEAD_END)
        _kind, m = r if r is not None else (yield from self._text_until(_HEAD_END))
        if m != SEP:
            self._fail()
            return m
        r = take(self, _NAME_LINE_END)
        name, m = r if r is not None else (yield from self._text_until(_NAME_LINE_END))
        if m != "\n":
            self._fail()
            return m
        name = name.strip()
        if not valid_name(name):
            return (yield from self._skip_call())
        buf = self._buf
        self._pos = pos = _WS.match(buf, self._pos).end()
        c = buf[pos] if pos < len(buf) else (yield from self._ws_peek())
        if c == "`":
            r = take(self, _NAME_LINE_END)
            _fence, m = r if r is not None else (yield from self._text_until(_NAME_LINE_END))
            if m != "\n":
                self._fail()
                return m
        return (yield from self._args_and_tail(name))

    def _call_now(self):
        """``_call`` without a generator when the buffer holds all of a
        well-formed call (head, name line, optional fence line, arguments
        whole, the marker after them), read in one compiled pass
        (``_scan.deepseek_call``): that marker, with the same events;
        ``False`` otherwise (nothing read: ``_call`` reads it)."""
        r = _base._scan.deepseek_call(self._buf, self._pos, _HEAD_END, SEP, _NAME_LINE_END, self._TAIL)
        if r is None:
            return False
        self._pos = r[3]
        self._whole_call(r[0], r[1])
        return r[2]


DeepSeekV3ToolParser._NOW_CALL = DeepSeekV3ToolParser._call


class DeepSeekV31ToolParser(_DeepSeekBase):
    """``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>``."""

    format_name = "deepseek_v31"

    def _call(self):
        r = _base._scan.take(self, _HEAD_END)
        name, m = r if r is not None else (yield from self._text_until(_HEAD_END))
        if m != SEP:
            self._fail()
            return m
        name = name.strip()
        if not valid_name(name):
            return (yield from self._skip_call())
        return (yield from self._args_and_tail(name))


K_SECTION_BEGINS = terminators_of("kimi_k2")  # plural and singular section begins
K_SECTION_ENDS = ("<|tool_calls_section_end|>", "<|tool_call_section_end|>")
K_CALL_BEGIN = "<|tool_call_begin|>"
K_ARG_BEGIN = "<|tool_call_argument_begin|>"
K_CALL_END = "<|tool_call_end|>"
_KIMI_ID = re.compile(r"(?:functions\.)?([^:]*)(?::[0-9]+)?")


class KimiK2ToolParser(BaseToolParser):
    """``<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX
    <|tool_call_argument_begin|>{json}<|tool_call_end|>…<|tool_calls_section_end|>``
    (singular section markers too). The id is kept as written (``functions.NAME:IDX``);
    anything between markers inside the section is dropped."""

    format_name = "kimi_k2"
    openers = K_SECTION_BEGINS
    _SECTION = markers(K_CALL_BEGIN, *K_SECTION_ENDS)
    _HEAD_END = markers(K_ARG_BEGIN, K_CALL_END, K_CALL_BEGIN, *K_SECTION_ENDS)
    _TAIL = markers(K_CALL_END, K_CALL_BEGIN, *K_SECTION_ENDS)

    def _section(self, opener):
        until = _base._scan.until
        m = until(self, self._SECTION, _drop)
        while m is False:  # ``_until``, written out (no generator per wait)
            yield
            self._lane = None
            m = until(self, self._SECTION, _drop)
        now = type(self)._call is KimiK2ToolParser._call and type(self)._call_now is KimiK2ToolParser._call_now
        while m == K_CALL_BEGIN:
            m = self._call_now() if now else False
            if m is False:
                m = yield from self._call()
            if m == K_CALL_END:
                m = until(self, self._SECTION, _drop)
                while m is False:
                    yield
                    self._lane = None
                    m = until(self, self._SECTION, _drop)
        return None

    def _call(self):
        r = _base._scan.take(self, self._HEAD_END)
        ident, m = r if r is not None else (yield from self._text_until(self._HEAD_END))
        if m != K_ARG_BEGIN:
            self._fail()
            return m
        ident = ident.strip()
        idm = _KIMI_ID.fullmatch(ident)
        name = idm.group(1) if idm else ""
        if not valid_name(name):
            self._fail()
            return (yield from self._until(self._TAIL, _drop))
        self._open_call(name, ident)
        ok = self._json_args_now()
        if ok is None:
            ok = yield from self._json(self._emit_args, True)
        self._close_call(ok)
        r = _base._scan.take(self, self._TAIL)
        return r[1] if r is not None else (yield from self._until(self._TAIL, _drop))

    def _call_now(self):
        """``_call`` without a generator when the buffer holds all of a
        well-formed call (id, arguments whole, the marker after them), read
        in one compiled pass (``_scan.kimi_call``): that marker, with the
        same events; ``False`` otherwise (nothing read: ``_call`` reads it)."""
        r = _base._scan.kimi_call(self._buf, self._pos, self._HEAD_END, K_ARG_BEGIN, self._TAIL)
        if r is None:
            return False
        self._pos = r[4]
        self._whole_call(r[0], r[2], r[1])
        return r[3]
