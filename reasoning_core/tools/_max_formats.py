"""Formats Modular MAX 26.7 parses that the first nine did not cover: deepseekv4 (DSML),
gemma4, inkling, laguna and muse_glimmer.

Each is a generator on the shared incremental machine (``_base``): streaming equals
one-shot for any chunking, total work is linear in the output, content outside the
tool markup is kept, and nothing raises on model output while streaming.
"""

from __future__ import annotations

import json
import re
from typing import Optional

from ..families import terminators_of, think_pair_of, tool_opener
from .._tag_calls import G_CALL_END, G_STR  # Gemma 4's call end and string quote, written once
from . import _base
from ._base import BaseToolParser, _drop, markers, valid_name
from ._json import _kind, dump_str, normalize, typed_value
from ._xml_formats import Glm45ToolParser

_STRING_ONLY = frozenset(["string"])


def _allowed(canon: str, types: frozenset) -> bool:
    if not types:
        return True
    kind = _kind(canon)
    return kind in types or (kind == "integer" and "number" in types)


class _Values(BaseToolParser):
    """Value readers shared by the formats below."""

    def _verbatim_string(self, ends):
        """A string value streamed as it arrives, byte for byte, up to a marker in
        ``ends`` (returned)."""
        self._emit_args('"')
        m = yield from self._until(ends, _base._scan.XmlStringSink(self._emit_args, False))
        self._emit_args('"')
        return m

    def _verbatim_typed(self, fname: str, key: str, ends):
        """A value kept as written: a ``string`` parameter streams verbatim; otherwise
        JSON when the whole text parses (surrounding whitespace allowed) and the
        schema admits its kind, else the text as a string."""
        types = self._types_for(fname, key)
        if types == _STRING_ONLY:
            return (yield from self._verbatim_string(ends))
        raw, m = yield from self._text_until(ends)
        self._emit_args(typed_value(raw, types))
        return m


# ---------------------------------------------------------------------------- DSML (deepseekv4)

DSML = "｜DSML｜"
DSML_CALLS = f"<{DSML}tool_calls>"
DSML_CALLS_END = f"</{DSML}tool_calls>"
DSML_INVOKE = f"<{DSML}invoke"
DSML_INVOKE_END = f"</{DSML}invoke>"
DSML_PARAM = f"<{DSML}parameter"
DSML_PARAM_END = f"</{DSML}parameter>"
_DSML_NAME = re.compile(r'\s*name\s*=\s*"(.*?)"\s*(/?)', re.DOTALL)
_DSML_PARAM_HEAD = re.compile(r'\s*name\s*=\s*"(.*?)"(?:\s+string\s*=\s*"([^"]*)")?\s*', re.DOTALL)


class DsmlToolParser(_Values):
    """DeepSeek's DSML block, the tag names as data (``_BLOCK``, ``_INVOKE_TAG``,
    ``_PARAM_TAG``; V3.2 writes ``function_calls``, V4 ``tool_calls``, V4.1 the
    three with a leading space)::

        \\n\\n<｜DSML｜BLOCK>
        <｜DSML｜INVOKE name="NAME">
        <｜DSML｜PARAM name="K" string="true">text</｜DSML｜PARAM>
        <｜DSML｜PARAM name="N" string="false">3</｜DSML｜PARAM>
        </｜DSML｜INVOKE>
        </｜DSML｜BLOCK>

    The two newlines before the block belong to it (the template writes them); the
    block without them is accepted too. ``string="true"`` values are strings byte for
    byte; ``string="false"`` values are JSON (a value that does not parse stays a
    string; ``_ANY_FLAG_JSON``: any other flag value too); a parameter without the
    attribute is JSON-or-string, a schema deciding. ``<｜DSML｜INVOKE name="NAME"/>``
    is a call without arguments where ``_SELF_CLOSING``. Text between elements inside
    the block is dropped; text after the block is content. An invoke whose end never
    came ends at the next invoke or the block end.
    """

    _PREFIX = DSML  # the markup's namespace token (GigaChat 3.5 writes the same block with ｜GCML｜)
    _BLOCK = "tool_calls"
    _INVOKE_TAG = "invoke"
    _PARAM_TAG = "parameter"
    _LEADS = ("\n\n", "")  # what may come right before the block and belongs to it
    _SELF_CLOSING = False
    _ANY_FLAG_JSON = False

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls._tags()

    @classmethod
    def _tags(cls) -> None:
        ns = cls._PREFIX
        calls, calls_end = f"<{ns}{cls._BLOCK}>", f"</{ns}{cls._BLOCK}>"
        inv, inv_end = f"<{ns}{cls._INVOKE_TAG}", f"</{ns}{cls._INVOKE_TAG}>"
        par, par_end = f"<{ns}{cls._PARAM_TAG}", f"</{ns}{cls._PARAM_TAG}>"
        cls._INVOKE, cls._INVOKE_END, cls._PARAM, cls._PARAM_END = inv, inv_end, par, par_end
        cls.openers = tuple(lead + calls for lead in cls._LEADS)
        cls._SECTION = markers(inv, calls_end)
        cls._HEAD_END = markers(">", inv_end, inv, calls_end)
        cls._PARAM_SCAN = markers(par, inv_end, inv, calls_end)
        cls._PHEAD_END = markers(">", par_end, par, inv_end, inv, calls_end)
        cls._VALUE_END = markers(par_end, par, inv_end, inv, calls_end)
        cls._TO_INVOKE_END = markers(inv_end, inv, calls_end)

    # Each step is first tried on the buffer as it is (``take``,
    # ``_param_value_now``: no generator when the piece is whole), then waited for.

    def _section(self, opener):
        return (yield from self._element_section(self._INVOKE, self._INVOKE_END, self._invoke))

    def _invoke(self):
        take = _base._scan.take
        r = take(self, self._HEAD_END)
        head, m = r if r is not None else (yield from self._text_until(self._HEAD_END))
        hm = _DSML_NAME.fullmatch(head) if m == ">" else None
        if hm is not None and hm.group(2) and not self._SELF_CLOSING:
            hm = None
        name = hm.group(1).strip() if hm else ""
        if not valid_name(name):
            self._fail()
            if m != ">":
                return m
            return (yield from self._until(self._TO_INVOKE_END, _drop))
        self._open_call(name)
        if hm.group(2):  # self-closing: no arguments, no end tag
            self._emit_args("{}")
            self._close_call(True)
            return self._INVOKE_END
        count = 0
        cls = type(self)
        now = (cls._param_value is DsmlToolParser._param_value and cls._verbatim_string is _Values._verbatim_string
               and cls._verbatim_typed is _Values._verbatim_typed)
        r = take(self, self._PARAM_SCAN)
        m = r[1] if r is not None else (yield from self._until(self._PARAM_SCAN, _drop))
        while m == self._PARAM:
            r = take(self, self._PHEAD_END)
            head, m = r if r is not None else (yield from self._text_until(self._PHEAD_END))
            pm = _DSML_PARAM_HEAD.fullmatch(head) if m == ">" else None
            if pm is None:
                if m == ">" or m == self._PARAM_END:
                    r = take(self, self._PARAM_SCAN)
                    m = r[1] if r is not None else (yield from self._until(self._PARAM_SCAN, _drop))
                continue
            key, flag = pm.group(1), pm.group(2)
            self._param_prefix(count, key)
            count += 1
            m = self._param_value_now(name, key, flag) if now else False
            if m is False:
                m = yield from self._param_value(name, key, flag)
            if m == self._PARAM_END:
                r = take(self, self._PARAM_SCAN)
                m = r[1] if r is not None else (yield from self._until(self._PARAM_SCAN, _drop))
        self._emit_args("}" if count else "{}")
        self._close_call(True)
        return m

    def _param_value(self, name: str, key: str, flag):
        """One parameter's value (``flag``: its ``string`` attribute, or None) up to
        the marker that ends it (returned)."""
        if flag == "true":
            return (yield from self._verbatim_string(self._VALUE_END))
        if flag == "false" or (flag is not None and self._ANY_FLAG_JSON):
            raw, m = yield from self._text_until(self._VALUE_END)
            canon = normalize(raw)
            self._emit_args(canon if canon is not None else dump_str(raw))
            return m
        return (yield from self._verbatim_typed(name, key, self._VALUE_END))

    def _param_value_now(self, name: str, key: str, flag):
        """``_param_value`` without waiting when the buffer holds the whole
        value: the marker that ends it, with the same events; ``False`` when
        it does not (nothing read, nothing emitted)."""
        r = _base._scan.take(self, self._VALUE_END)
        if r is None:
            return False
        raw, m = r
        if flag == "false" or (flag is not None and flag != "true" and self._ANY_FLAG_JSON):
            canon = normalize(raw)
            self._emit_args(canon if canon is not None else dump_str(raw))
            return m
        if flag == "true" or self._types_for(name, key) == _STRING_ONLY:
            if type(self)._emit_args is BaseToolParser._emit_args:
                self._emit_args(dump_str(raw))  # the three pieces below, joined
            else:
                self._emit_args('"')
                _base._scan.XmlStringSink(self._emit_args, False)(raw)
                self._emit_args('"')
            return m
        self._emit_args(typed_value(raw, self._types_for(name, key)))
        return m


DsmlToolParser._tags()


class DeepSeekV4ToolParser(DsmlToolParser):
    """DeepSeek V4: ``<｜DSML｜tool_calls>`` … ``</｜DSML｜tool_calls>`` (MAX's
    reference decoder: no self-closing invoke; a flag other than true/false leaves
    the value to the schema)."""

    format_name = "deepseekv4"


# ---------------------------------------------------------------------------- gemma4

G_CALL = tool_opener("gemma4")
_G_NAME_END = markers("{", G_CALL_END, G_CALL)
_G_AFTER = markers(G_CALL_END, G_CALL)
_G_KEY_END = markers(":", G_CALL_END)
_G_STR_END = markers(G_STR, G_CALL_END)
_G_BARE_END = markers(",", "}", "]", G_CALL_END)
# A Gemma 4 name may hold dots (``weather.get``), as MAX's and SGLang's readers take it.
_G_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_G_SKIP = re.compile(r"[ \t\n\r,]*")
_G_WS = re.compile(r"[ \t\n\r]*")


def _gemma_string(body: str) -> str:
    """A ``<|"|>``-delimited body: JSON string escapes apply (a raw ``"`` is a quote);
    a body that does not decode that way is kept as written."""
    try:
        value = json.loads('"' + body.replace('"', '\\"') + '"')
    except ValueError:
        return body
    return value if isinstance(value, str) else body


def _gemma_bare(raw: str, types: frozenset) -> str:
    """A bare value: a JSON number, ``true``, ``false`` or ``null``, else a string."""
    v = raw.strip()
    if types != _STRING_ONLY and v:
        canon = normalize(v)
        if canon is not None and canon[0] not in '"[{' and _allowed(canon, types):
            return canon
    return dump_str(v)


class Gemma4ToolParser(BaseToolParser):
    """``<|tool_call>call:NAME{key:<|"|>text<|"|>,n:42,flag:true,obj:{k:…},list:[…]}<tool_call|>``,
    flat (no section), repeated; text before, between and after calls is content.
    The opener's ``call`` may be missing (``<|tool_call>:NAME{…}``).

    Keys are bare; strings are delimited by ``<|"|>``; numbers, booleans and null are
    bare. Arguments stream as JSON as each value completes. ``<|channel>`` …
    ``<channel|>`` (Gemma 4's thinking) is never read for calls.
    """

    format_name = "gemma4"
    openers = terminators_of("gemma4")  # the family table's <|tool_call>
    think_pairs = (think_pair_of("deepseek_r1"), think_pair_of("gemma4"))

    def _section(self, opener):
        # "call:" as documented; a bare ":" (the model drops "call") reads the same
        # (each step first tried on the buffer as it is, then waited for)
        take = _base._scan.take
        ok = self._expect_now("call:")
        if ok is None:
            ok = yield from self._expect("call:")
        if not ok:
            ok = yield from self._expect(":")
        if ok:
            r = take(self, _G_NAME_END)
            name, m = r if r is not None else (yield from self._text_until(_G_NAME_END))
            name = name.strip()
            if m == "{" and _G_NAME.fullmatch(name):
                self._open_call(name)
                self._close_call((yield from self._args(name)))
            else:
                self._fail()
                if m != "{":  # the call's end, the next call, or the end of input
                    return m if m == G_CALL else None
        else:
            self._fail()
        r = take(self, _G_AFTER)
        m = r[1] if r is not None else (yield from self._until(_G_AFTER, _drop))
        return m if m == G_CALL else None

    # how a key and a <|"|> string body read (a variant may differ: vllm-mlx's keeps strings raw)
    _string_text = staticmethod(_gemma_string)

    @staticmethod
    def _key_text(key: str) -> str:
        return key.strip()

    def _args(self, fname):
        """The arguments after ``{``; True when the top-level ``}`` closed them. On a
        failure at ``<tool_call|>`` the marker is left unread."""
        stack = ["}"]
        first = [True]
        take = _base._scan.take
        self._emit_args("{")
        while stack:
            c = self._ws_now(_G_SKIP)
            if c is False:
                c = yield from self._ws_peek(_G_SKIP)
            if c is None:
                return self._args_cut(stack, "")
            if c == stack[-1]:
                self._pos += 1
                stack.pop()
                first.pop()
                self._emit_args(c)
                if len(stack) == 1:
                    self._param_closed()
                continue
            sep = "" if first[-1] else ", "
            first[-1] = False
            types, top = frozenset(), None
            if stack[-1] == "}":
                r = take(self, _G_KEY_END)
                key, m = r if r is not None else (yield from self._text_until(_G_KEY_END))
                if m != ":":
                    return self._unread(m) or self._args_cut(stack, "")
                key = self._key_text(key)
                self._emit_args(sep + dump_str(key) + ": ")
                if len(stack) == 1:
                    types, top = self._types_for(fname, key), key
                c = self._ws_now(_G_WS)
                if c is False:
                    c = yield from self._ws_peek(_G_WS)
                if c is None:
                    return self._args_cut(stack, '""')
            else:
                self._emit_args(sep)
            if c == "{" or c == "[":
                self._pos += 1
                stack.append("}" if c == "{" else "]")
                first.append(True)
                if len(stack) == 2:
                    self._param_opened(fname, top)
                self._emit_args(c)
                continue
            ok = self._expect_now(G_STR)
            if ok is None:
                ok = yield from self._expect(G_STR)
            if ok:
                r = take(self, _G_STR_END)
                body, m = r if r is not None else (yield from self._text_until(_G_STR_END))
                if m != G_STR:
                    return self._unread(m) or self._args_cut(stack, self._string_json(fname, top, body))
                self._emit_args(self._string_json(fname, top, body))
                continue
            r = take(self, _G_BARE_END)
            raw, m = r if r is not None else (yield from self._text_until(_G_BARE_END))
            if m is None or m == G_CALL_END:
                return self._unread(m) or self._args_cut(stack, self._bare_json(fname, top, raw, types))
            self._emit_args(self._bare_json(fname, top, raw, types))
            if m != ",":
                if m != stack[-1]:
                    return False
                stack.pop()
                first.pop()
                self._emit_args(m)
                if len(stack) == 1:
                    self._param_closed()
        return True

    # A value's JSON (``top``: its key when it is a parameter, None inside an
    # object or list); a variant may read values otherwise.
    def _string_json(self, fname: str, top, body: str) -> str:
        if type(self)._string_text is _gemma_string:
            # decoded and re-escaped in one compiled pass (the same text)
            canon = _base._scan.gemma_string_json(body)
            return dump_str(body) if canon is None else canon
        return dump_str(self._string_text(body))

    def _bare_json(self, fname: str, top, raw: str, types: frozenset) -> str:
        return _gemma_bare(raw, types)

    # A parameter's object or list value opens (``top``: its key) and closes.
    def _param_opened(self, fname: str, top) -> None:
        pass

    def _param_closed(self) -> None:
        pass

    def _args_cut(self, stack: list, value: str) -> bool:
        """The arguments cut short by the end of input or ``<tool_call|>``, after
        ``value`` (the JSON of a value begun, or ``""``): here a failed call; a
        variant may complete it (``stack``: the closers still open)."""
        return False

    def _unread(self, m) -> bool:
        if m == G_CALL_END:
            self._pos -= len(m)  # consumed in this same step: still in the buffer
        return False


# ---------------------------------------------------------------------------- inkling

INKLING_MARKER = tool_opener("inkling")
_NAME_TAIL = re.compile(r"[A-Za-z0-9_-]*\Z")


class InklingToolParser(BaseToolParser):
    """``NAME<|content_invoke_tool_json|>{"name": "NAME", "args": {...}}``, repeated;
    there is no closing marker (the object's end ends the call).

    The function name written before the marker is the call's header: a run of
    name characters at the end of the content (at most 64) is held until it is known
    whether the marker follows; then, if it ends with the call's name, that suffix is
    dropped, and the rest is content. ``args`` (``arguments``/``parameters`` too)
    may come before or after ``name``; a missing one is ``{}``. Text between and
    after calls is content.
    """

    format_name = "inkling"
    openers = terminators_of("inkling")  # the family table's <|content_invoke_tool_json|>
    think_pairs = (think_pair_of("deepseek_r1"), think_pair_of("inkling"))
    _CALL_ARG_KEYS = ("args", "arguments", "parameters")

    def reset(self) -> None:
        super().reset()
        self._held = ""  # trailing name characters of the content so far
        self._header = None  # the held run when the marker came, until the call opens

    def _content(self, text: str) -> None:
        if not text:
            return
        s = self._held + text
        tail = s[-64:]
        k = len(tail) - _NAME_TAIL.search(tail).start()
        self._held = s[len(s) - k:] if k else ""
        BaseToolParser._content(self, s[:len(s) - k])

    def _run(self):
        yield from BaseToolParser._run(self)
        self._release_header()
        held, self._held = self._held, ""
        BaseToolParser._content(self, held)

    def _release_header(self, name: Optional[str] = None) -> None:
        header, self._header = self._header, None
        if header is None:
            return
        if name and header.endswith(name):
            header = header[:-len(name)]
        BaseToolParser._content(self, header)

    def _open_call(self, name, cid=None):
        self._release_header(name)
        return BaseToolParser._open_call(self, name, cid)

    def _section(self, opener):
        self._header, self._held = self._held, ""
        yield from self._skip_ws()
        if (yield from self._peek()) == "{":
            self._pos += 1
            yield from self._call_object(False)
        else:
            self._fail()
        self._release_header()
        return None


# ---------------------------------------------------------------------------- laguna

_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}


def _laguna_value(raw: str, types: frozenset) -> str:
    v = raw.strip()
    if not v:
        return '""'
    canon = normalize(v)
    if canon is None:
        canon = _PY_LITERALS.get(v)
        if canon is None or (types and canon == "null" and "null" not in types):
            return dump_str(v)
    return canon if _allowed(canon, types) else dump_str(v)


class LagunaToolParser(Glm45ToolParser):
    """Laguna (Poolside): GLM-4.5's ``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…
    </tool_call>``, with Laguna's value rule: the value is trimmed, then JSON, or
    Python's ``True``/``False``/``None``, else the trimmed text as a string; a
    ``string`` parameter (by schema) is kept byte for byte."""

    format_name = "laguna"

    def _xml_value(self, fname: str, key: str, ends):
        types = self._types_for(fname, key)
        if types == _STRING_ONLY:
            self._emit_args('"')
            m = yield from self._until(ends, _base._scan.XmlStringSink(self._emit_args, False))
            self._emit_args('"')
            return m
        raw, m = yield from self._text_until(ends)
        self._emit_args(_laguna_value(raw, types))
        return m


# ---------------------------------------------------------------------------- muse_glimmer

ATEM_CALLS = "<atem:function_calls>"
ATEM_CALLS_END = "</atem:function_calls>"
ATEM_INVOKE = "<atem:invoke name="
ATEM_INVOKE_END = "</atem:invoke>"
ATEM_PARAM = "<atem:parameter name="
ATEM_PARAM_END = "</atem:parameter>"
_ATEM_KEY = re.compile(r'\s*"([^"]*)"(?:\s[^>]*)?|\s*([^\s"]+)\s*')


def _atem_name(s: str) -> str:
    return s.strip().strip('"').strip()


class MuseGlimmerToolParser(_Values):
    """Muse Glimmer's ATEM block: ``<atem:function_calls><atem:invoke name="NAME">
    <atem:parameter name="K">V</atem:parameter>…</atem:invoke>…</atem:function_calls>``.

    Values are kept byte for byte (no trimming): JSON when the text parses, else
    the text as a string; a schema decides when given. Extra attributes after a
    parameter's name are ignored; text between elements inside the block is dropped.
    """

    format_name = "muse_glimmer"
    openers = (ATEM_CALLS,)
    # Muse's to=self channel (its reasoning) is never read for calls
    think_pairs = (think_pair_of("deepseek_r1"), think_pair_of("muse_glimmer"))
    _SECTION = markers(ATEM_INVOKE, ATEM_CALLS_END)
    _NAME_END = markers(">", ATEM_INVOKE_END, ATEM_INVOKE, ATEM_CALLS_END)
    _TO_INVOKE_END = markers(ATEM_INVOKE_END, ATEM_INVOKE, ATEM_CALLS_END)
    _PARAM_SCAN = markers(ATEM_PARAM, ATEM_INVOKE_END, ATEM_INVOKE, ATEM_CALLS_END)
    _KEY_END = markers(">", ATEM_PARAM_END, ATEM_PARAM, ATEM_INVOKE_END, ATEM_INVOKE, ATEM_CALLS_END)
    _VALUE_END = markers(ATEM_PARAM_END, ATEM_PARAM, ATEM_INVOKE_END, ATEM_INVOKE, ATEM_CALLS_END)

    def _section(self, opener):
        return (yield from self._element_section(ATEM_INVOKE, ATEM_INVOKE_END, self._invoke))

    def _tool_name(self, name: str) -> str:
        """The tool an invoke's (namespace-stripped) name calls."""
        return name

    def _invoke(self):
        name, m = yield from self._text_until(self._NAME_END)
        name = self._tool_name(_atem_name(name))
        if m != ">" or not valid_name(name):
            self._fail()
            if m != ">":
                return m
            return (yield from self._until(self._TO_INVOKE_END, _drop))
        self._open_call(name)
        count = 0
        m = yield from self._until(self._PARAM_SCAN, _drop)
        while m == ATEM_PARAM:
            head, m = yield from self._text_until(self._KEY_END)
            km = _ATEM_KEY.fullmatch(head) if m == ">" else None
            if km is None:
                if m == ">" or m == ATEM_PARAM_END:
                    m = yield from self._until(self._PARAM_SCAN, _drop)
                continue
            key = km.group(1) if km.group(1) is not None else km.group(2)
            self._param_prefix(count, key)
            count += 1
            m = yield from self._verbatim_typed(name, key, self._VALUE_END)
            if m == ATEM_PARAM_END:
                m = yield from self._until(self._PARAM_SCAN, _drop)
        self._emit_args("}" if count else "{}")
        self._close_call(True)
        return m
