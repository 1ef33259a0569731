"""Formats whose calls are JSON objects: hermes, llama3_json, mistral."""

from __future__ import annotations

import re

from ..families import terminators_of, think_pair_of
from . import _base
from ._base import BaseToolParser, _drop, markers, valid_name

_NAME_CHARS = re.compile(r"[A-Za-z0-9_-]*")
_ID_CHARS = re.compile(r"[A-Za-z0-9]*")


class HermesToolParser(BaseToolParser):
    """``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, repeated.

    Text between blocks is content. Inside a block, anything after the object and
    before ``</tool_call>`` is dropped; a new ``<tool_call>`` also ends a block
    whose closing tag never came.
    """

    format_name = "hermes"
    openers = terminators_of("qwen3")  # the family table's <tool_call>
    _END = markers("</tool_call>", *openers)

    def _section(self, opener):
        c = self._ws_now()
        if c is False:
            c = yield from self._ws_peek()
        if c == "{":
            self._pos += 1
            yield from self._call_object(False)
        else:
            self._fail()
        r = _base._scan.take(self, self._END)
        m = r[1] if r is not None else (yield from self._until(self._END, _drop))
        return m if m in self.openers else None


class Llama3JsonToolParser(BaseToolParser):
    """Bare ``{"name": ..., "parameters"|"arguments": {...}}`` objects, several
    separated by ``;``, optionally after ``<|python_tag|>``.

    A ``{`` anywhere in content starts a candidate; its text is held until both the
    name and the arguments key are seen (then it is a call and streams), and is
    released as content if the object turns out to be anything else. Whitespace
    and one ``;`` after a call are separators, not content. ``<|python_tag|>`` is
    dropped only when a call follows it. Never raises.
    """

    format_name = "llama3_json"
    openers = ("<|python_tag|>", "{")
    raises_on_failure = False

    def _section(self, opener):
        self._rec = [opener]
        self._rec_from = self._pos
        if opener != "{":
            c = yield from self._ws_peek()
            if c != "{":
                self._release()
                return None
            self._pos += 1
        r = yield from self._call_object(True)
        if r is None:
            self._release()
            return None
        self._rec = None
        if r:
            if (yield from self._ws_peek()) == ";":
                self._pos += 1
                yield from self._skip_ws()
        return None

    def _open_call(self, name, cid=None):
        # Decided: the held text is markup now (a failure from here on leaves
        # the call broken, never content), so stop recording it. The scanner's
        # fast lane runs only while nothing is recorded.
        self._rec = None
        return super()._open_call(name, cid)

    def _release(self):
        text = "".join(self._rec) + self._buf[self._rec_from:self._pos]
        self._rec = None
        self._content(text)


class MistralToolParser(BaseToolParser):
    """``[TOOL_CALLS]`` followed by a JSON list of ``{name, arguments}`` (or one such
    object), or by ``NAME[ARGS]{json}`` (an optional ``[CALL_ID]id`` before
    ``[ARGS]`` gives the call its id), one call per ``[TOOL_CALLS]``.

    There is no closing marker: text after the list or object is content, and a
    malformed call ends the section where the problem is found, the rest being
    content.
    """

    format_name = "mistral"
    openers = ("[TOOL_CALLS]",)
    think_pairs = (think_pair_of("deepseek_r1"), think_pair_of("mistral"))

    def _section(self, opener):
        c = self._ws_now()
        if c is False:
            c = yield from self._ws_peek()
        if c == "[":
            self._pos += 1
            yield from self._call_objects(False)
            return None
        if c == "{":
            self._pos += 1
            yield from self._call_object(False)
            return None
        # each step first tried on the buffer as it is, then waited for
        name = self._read_now(_NAME_CHARS, 64)
        if name is False:
            name = yield from self._read(_NAME_CHARS, 64)
        if not valid_name(name):
            self._fail()
            return None
        cid = None
        ok = self._expect_now("[CALL_ID]")
        if ok is None:
            ok = yield from self._expect("[CALL_ID]")
        if ok:
            cid = yield from self._read(_ID_CHARS, 64)
        ok = self._expect_now("[ARGS]")
        if ok is None:
            ok = yield from self._expect("[ARGS]")
        if not ok:
            self._fail()
            return None
        # a model-written id is kept: the template matches tool results by it
        self._open_call(name, cid or None)
        ok = self._json_args_now()
        if ok is None:
            ok = yield from self._json(self._emit_args, True)
        self._close_call(ok)
        return None

    def _read_now(self, rx, limit):
        """``_read`` when the buffer decides it now (the run ends before the
        buffer does, within ``limit``); ``False`` otherwise (nothing read)."""
        m = rx.match(self._buf, self._pos)
        end = m.end()
        if end >= len(self._buf) or end - m.start() > limit:
            return False
        self._pos = end
        return m.group()

