"""Channel and markup tool formats, and the engines' names for formats we have.

Seed-OSS writes Qwen3-Coder's XML inside ``<seed:tool_call>``; Step-5 and
Poolside's V1 name formats we already parse (Qwen3-Coder, Laguna). The others:
Cohere Command's JSON action list, Step-3's steptml invokes, Kimi K3's XTML
tools channel, K2 Horizon's IFM calls (xml, typed xml or JSON bodies), PLaMo 3's
tool requests, MiniMax M3's namespaced nested elements and gpt-oss's harmony
commentary messages. Each is a generator on the shared incremental machine
(``_base``); MiniMax M3 writes an invoke's arguments once it is read (a later
element can change an earlier value).
"""

from __future__ import annotations

import json
import math
import re
from typing import Optional

from ..families import get_family, terminators_of, think_pair_of, tool_opener
from .._tag_calls import (
    ToolTagSpec,
    _cohere_call,
    _gpt_oss_call,
    _ifm_call,
    _k3_call,
    _mm3_call,
    _step3_call,
    schema_call,
)
from . import _base
from ._base import BaseToolParser, _drop, markers, valid_name
from ._json import dump_str, normalize
from ._max_formats import _allowed, _laguna_value
from ._xml_formats import _unquote
from ._xml_formats import Qwen3CoderToolParser

# ---------------------------------------------------------------------------- seed_oss

_SEED_CALL, _SEED_CALL_END = "<seed:tool_call>", "</seed:tool_call>"


class SeedOssToolParser(Qwen3CoderToolParser):
    """Seed-OSS: ``<seed:tool_call>\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>\\n
    </function>\\n</seed:tool_call>``; ``<function=…>`` without the wrapper too.
    Qwen3-Coder's grammar under Seed's wrapper; reasoning is ``<seed:think>``."""

    format_name = "seed_oss"
    tool_tag = ToolTagSpec(_SEED_CALL, schema_call(_SEED_CALL + "\n<function={name}>\n",
                                                   "</function>\n" + _SEED_CALL_END, "qwen_xml"))
    openers = (_SEED_CALL, "<function=")
    think_pairs = (think_pair_of("seed_oss"),)
    _IN_WRAPPER = markers("<function=", _SEED_CALL_END)
    _NAME_END = markers(">", "\n", "</function>", _SEED_CALL_END)
    _TO_FUNC_END = markers("</function>", _SEED_CALL_END)
    _PARAM_SCAN = markers("<parameter=", "</function>", _SEED_CALL_END)
    _KEY_END = markers(">", "</parameter>", "<parameter=", "</function>", _SEED_CALL_END)
    _VALUE_END = markers("</parameter>", "<parameter=", "</function>", _SEED_CALL_END)

    def _function(self):
        name, m = yield from self._text_until(self._NAME_END)
        name = name.strip()
        if m != ">" or not valid_name(name):
            self._fail()
            if m in (None, "</function>", _SEED_CALL_END):
                return m
            return (yield from self._until(self._TO_FUNC_END, _drop))
        self._open_call(name)
        return (yield from self._params(name, "<parameter=", str.strip))


# ---------------------------------------------------------------------------- cohere_command

_ACTION, _ACTION_END = tool_opener("cohere_command"), "<|END_ACTION|>"


class CohereCommandToolParser(BaseToolParser):
    """Cohere Command (A, A Reasoning, 4): ``<|START_ACTION|>[{"tool_call_id": "0",
    "tool_name": "NAME", "parameters": {...}}, …]<|END_ACTION|>`` (one object
    without the list too; ``name``/``arguments`` spellings accepted). The model's
    ``tool_call_id`` is a per-turn counter ("0", "1", …), not an id: calls get
    fresh ids. Anything after the list up to ``<|END_ACTION|>`` is dropped; text
    after the block is content. Reasoning (``<|START_THINKING|>`` …) is never
    read for calls; the answer's ``<|START_RESPONSE|>`` frame stays content."""

    format_name = "cohere_command"
    # the action list (whitespace around the actions free: see _cohere_call)
    tool_tag = ToolTagSpec(_ACTION, _cohere_call, section=(_ACTION + "[", "]" + _ACTION_END), separator=",")
    openers = terminators_of("cohere_command")
    think_pairs = (think_pair_of("cohere_command"),)
    _END = markers(_ACTION_END)
    _CALL_NAME_KEYS = ("tool_name", "name")
    _CALL_ARG_KEYS = ("parameters", "arguments")

    def _section(self, opener):
        yield from self._skip_ws()
        c = yield from self._peek()
        if c == "[":
            self._pos += 1
            yield from self._call_objects(True)
        elif c == "{":
            self._pos += 1
            yield from self._call_object(False)
        else:
            self._fail()
        yield from self._until(self._END, _drop)
        return None


# ---------------------------------------------------------------------------- step3

_S3_CALLS, _S3_CALLS_END = "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"
_S3_CALL, _S3_CALL_END, _S3_SEP = "<｜tool_call_begin｜>", "<｜tool_call_end｜>", "<｜tool_sep｜>"
_S3_INVOKE, _S3_INVOKE_END = "<steptml:invoke name=", "</steptml:invoke>"
_S3_PARAM, _S3_PARAM_END = "<steptml:parameter name=", "</steptml:parameter>"
_STRING = frozenset(["string"])


def _step3_value(raw: str, types: frozenset) -> str:
    """Step-3's value rule: the trimmed text, a string unless the schema gives
    the parameter another type; then JSON or Python's ``True``/``False``/``None``
    when it parses to an allowed kind."""
    v = raw.strip()
    if not types or types == _STRING:
        return dump_str(v)
    return _laguna_value(v, types)


class Step3ToolParser(BaseToolParser):
    """Step-3: ``<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>
    <steptml:invoke name="NAME"><steptml:parameter name="K">V</steptml:parameter>…
    </steptml:invoke><｜tool_call_end｜>…<｜tool_calls_end｜>``.

    Values are trimmed strings unless the request's schema types the parameter
    (then JSON or a Python literal of an allowed kind). Text between elements in
    the block is dropped; text after it is content. A call whose end never came
    ends at the next call or the block end."""

    format_name = "step3"
    tool_tag = ToolTagSpec(_S3_CALLS, _step3_call, section=(_S3_CALLS + "\n", "\n" + _S3_CALLS_END),
                           separator="\n")
    openers = (_S3_CALLS,)
    _SECTION = markers(_S3_CALL, _S3_CALLS_END)
    _HEAD_END = markers(_S3_SEP, _S3_CALL_END, _S3_CALL, _S3_CALLS_END)
    _TO_INVOKE = markers(_S3_INVOKE, _S3_CALL_END, _S3_CALL, _S3_CALLS_END)
    _NAME_END = markers(">", _S3_CALL_END, _S3_CALL, _S3_CALLS_END)
    _PARAM_SCAN = markers(_S3_PARAM, _S3_INVOKE_END, _S3_CALL_END, _S3_CALL, _S3_CALLS_END)
    _KEY_END = markers(">", _S3_PARAM_END, _S3_INVOKE_END, _S3_CALL_END, _S3_CALL, _S3_CALLS_END)
    _VALUE_END = markers(_S3_PARAM_END, _S3_PARAM, _S3_INVOKE_END, _S3_CALL_END, _S3_CALL, _S3_CALLS_END)
    _TAIL = markers(_S3_CALL_END, _S3_CALL, _S3_CALLS_END)

    def _section(self, opener):
        return (yield from self._element_section(_S3_CALL, _S3_CALL_END, self._call))

    def _skip(self, m):
        """A broken call: drop to its end (returned)."""
        self._fail()
        if m in (None, _S3_CALL_END, _S3_CALL, _S3_CALLS_END):
            return m
        return (yield from self._until(self._TAIL, _drop))

    def _call(self):
        kind, m = yield from self._text_until(self._HEAD_END)
        if m != _S3_SEP or kind.strip() != "function":
            return (yield from self._skip(m))
        m = yield from self._until(self._TO_INVOKE, _drop)
        if m != _S3_INVOKE:
            return (yield from self._skip(m))
        name, m = yield from self._text_until(self._NAME_END)
        name = _unquote(name)
        if m != ">" or not valid_name(name):
            return (yield from self._skip(m))
        self._open_call(name)
        count = 0
        m = yield from self._until(self._PARAM_SCAN, _drop)
        while m == _S3_PARAM:
            key, m = yield from self._text_until(self._KEY_END)
            if m != ">":
                if m == _S3_PARAM_END:
                    m = yield from self._until(self._PARAM_SCAN, _drop)
                continue
            key = _unquote(key)
            raw, m = yield from self._text_until(self._VALUE_END)
            self._param_prefix(count, key)
            count += 1
            self._emit_args(_step3_value(raw, self._types_for(name, key)))
            if m == _S3_PARAM_END:
                m = yield from self._until(self._PARAM_SCAN, _drop)
        self._emit_args("}" if count else "{}")
        self._close_call(True)
        if m == _S3_INVOKE_END:
            m = yield from self._until(self._TAIL, _drop)
        return m


# ---------------------------------------------------------------------------- kimi_k3

_K3_TOOLS, _K3_TOOLS_END = tool_opener("kimi_k3"), "<|close|>tools<|sep|>"
_K3_CALL, _K3_CALL_END = "<|open|>call", "<|close|>call<|sep|>"
_K3_ARG, _K3_ARG_END = "<|open|>argument", "<|close|>argument<|sep|>"
_K3_SEP = "<|sep|>"
# the response channel's frame: dropped from content, as both engines do
_K3_FRAMES = ("<|open|>response<|sep|>", "<|close|>response<|sep|>", "<|close|>message<|sep|>")
_K3_ATTR = re.compile(r'(\w+)="([^"]*)"')


def _k3_attrs(head: str) -> Optional[dict]:
    """``tool="x" index="1"`` -> ``{"tool": "x", "index": "1"}`` (the template's
    ``&quot;``/``&amp;`` escapes undone); ``None`` unless whitespace leads."""
    if not head[:1].isspace():
        return None
    return {k: v.replace("&quot;", '"').replace("&amp;", "&") for k, v in _K3_ATTR.findall(head)}


class KimiK3ToolParser(BaseToolParser):
    """Kimi K3 (XTML): a ``tools`` channel of ``call`` blocks, one ``argument``
    block per parameter::

        <|open|>tools<|sep|>
        <|open|>call tool="NAME" index="1"<|sep|>
        <|open|>argument key="k" type="string"<|sep|>raw text<|close|>argument<|sep|>
        <|open|>argument key="n" type="integer"<|sep|>3<|close|>argument<|sep|>
        <|close|>call<|sep|>
        <|close|>tools<|sep|>

    ``type="string"`` (or no type) values are the raw text, streamed as they
    arrive; other types are JSON (a value that does not parse stays a string).
    Text between blocks in the channel is dropped; text after it is content.
    The response channel's frame (``<|open|>response<|sep|>``,
    ``<|close|>response<|sep|>``, ``<|close|>message<|sep|>``) is dropped from
    content; ``<|open|>think<|sep|>`` … is reasoning, never read for calls."""

    format_name = "kimi_k3"
    tool_tag = ToolTagSpec(_K3_TOOLS, _k3_call, section=(_K3_TOOLS, _K3_TOOLS_END))
    openers = (_K3_TOOLS, *_K3_FRAMES)
    think_pairs = (think_pair_of("kimi_k3"),)
    _SECTION = markers(_K3_CALL, _K3_TOOLS_END)
    _HEAD_END = markers(_K3_SEP, _K3_CALL_END, _K3_CALL, _K3_TOOLS_END)
    _ARG_SCAN = markers(_K3_ARG, _K3_CALL_END, _K3_CALL, _K3_TOOLS_END)
    _AHEAD_END = markers(_K3_SEP, _K3_ARG_END, _K3_CALL_END, _K3_CALL, _K3_TOOLS_END)
    _VALUE_END = markers(_K3_ARG_END, _K3_CALL_END, _K3_CALL, _K3_TOOLS_END)
    _TO_CALL_END = markers(_K3_CALL_END, _K3_CALL, _K3_TOOLS_END)

    def _section(self, opener):
        if opener != _K3_TOOLS:
            # a frame marker is not tool markup
            if self._marker_at == self._base + self._pos - len(opener):
                self._marker_at = None
            return None
        found = False
        m = yield from self._until(self._SECTION, _drop)
        while m == _K3_CALL:
            found = True
            m = yield from self._call()
            if m == _K3_CALL_END:
                m = yield from self._until(self._SECTION, _drop)
        if not found:
            self._fail()
        return None

    def _call(self):
        head, m = yield from self._text_until(self._HEAD_END)
        attrs = _k3_attrs(head) if m == _K3_SEP else None
        name = attrs.get("tool", "") if attrs else ""
        if not valid_name(name):
            self._fail()
            if m != _K3_SEP:
                return m
            return (yield from self._until(self._TO_CALL_END, _drop))
        self._open_call(name)
        count = 0
        m = yield from self._until(self._ARG_SCAN, _drop)
        while m == _K3_ARG:
            head, m = yield from self._text_until(self._AHEAD_END)
            attrs = _k3_attrs(head) if m == _K3_SEP else None
            if attrs is None:
                if m == _K3_SEP or m == _K3_ARG_END:
                    m = yield from self._until(self._ARG_SCAN, _drop)
                continue
            self._param_prefix(count, attrs.get("key", ""))
            count += 1
            if attrs.get("type", "string") == "string":
                self._emit_args('"')
                m = yield from self._until(self._VALUE_END, _base._scan.XmlStringSink(self._emit_args, False))
                self._emit_args('"')
            else:
                raw, m = yield from self._text_until(self._VALUE_END)
                canon = normalize(raw)
                self._emit_args(canon if canon is not None else dump_str(raw))
            if m == _K3_ARG_END:
                m = yield from self._until(self._ARG_SCAN, _drop)
        self._emit_args("}" if count else "{}")
        self._close_call(True)
        return m


# ---------------------------------------------------------------------------- k2_horizon

_IFM_CALLS, _IFM_CALLS_END = tool_opener("k2_horizon"), "</ifm|tool_calls>"
_IFM_CALL, _IFM_CALL_END = "<ifm|tool_call>", "</ifm|tool_call>"
_IFM_KEY, _IFM_KEY_END = "<ifm|arg_key>", "</ifm|arg_key>"
_IFM_TYPE, _IFM_TYPE_END = "<ifm|arg_type>", "</ifm|arg_type>"
_IFM_VALUE, _IFM_VALUE_END = "<ifm|arg_value>", "</ifm|arg_value>"


def _ifm_value(raw: str, types: frozenset, inline: Optional[str]) -> str:
    """K2 Horizon's value rule: a ``string`` parameter (by schema, else by its
    ``<ifm|arg_type>``) is the text verbatim; otherwise the trimmed text as JSON
    of an allowed kind, else the text as a string."""
    if not types and inline:
        base = inline.split("[", 1)[0].strip().lower()
        if base in ("string", "any", "str"):
            return dump_str(raw)
    if types == _STRING:
        return dump_str(raw)
    canon = normalize(raw.strip())
    if canon is None or (types and not _allowed(canon, types)):
        return dump_str(raw.strip() if types else raw)
    return canon


class K2HorizonToolParser(BaseToolParser):
    """K2 Horizon (IFM): ``<ifm|tool_calls><ifm|tool_call>BODY</ifm|tool_call>…
    </ifm|tool_calls>``; a ``<ifm|tool_call>`` block outside the group too.
    A body is one of the three ``tool_call_format`` dialects, told apart by its
    text: ``{"name": …, "arguments": {…}}`` (json), or ``NAME`` followed by
    ``<ifm|arg_key>K</ifm|arg_key>[<ifm|arg_type>T</ifm|arg_type>]
    <ifm|arg_value>V</ifm|arg_value>`` pairs (xml, xml_typed). Values: see
    ``_ifm_value``. Text between blocks in the group is dropped; text after it
    is content; reasoning (``<ifm|think>``, ``<ifm|think_fast>``,
    ``<ifm|think_faster>``) is never read for calls."""

    format_name = "k2_horizon"
    # any of the template's three dialects (see _ifm_call)
    tool_tag = ToolTagSpec(_IFM_CALLS, _ifm_call, section=(_IFM_CALLS + "\n", "\n" + _IFM_CALLS_END),
                           separator="\n")
    openers = (_IFM_CALLS, _IFM_CALL)
    think_pairs = tuple(zip(get_family("k2_horizon").start, get_family("k2_horizon").end))
    _SECTION = markers(_IFM_CALL, _IFM_CALLS_END)
    _NAME_END = markers(_IFM_KEY, _IFM_CALL_END, _IFM_CALL, _IFM_CALLS_END)
    _TO_CALL_END = markers(_IFM_CALL_END, _IFM_CALL, _IFM_CALLS_END)
    _ARG_SCAN = markers(_IFM_KEY, _IFM_CALL_END, _IFM_CALL, _IFM_CALLS_END)
    _KEY_END = markers(_IFM_KEY_END, _IFM_KEY, _IFM_CALL_END, _IFM_CALL, _IFM_CALLS_END)
    _TO_VALUE = markers(_IFM_TYPE, _IFM_VALUE, _IFM_KEY, _IFM_CALL_END, _IFM_CALL, _IFM_CALLS_END)
    _TYPE_END = markers(_IFM_TYPE_END, _IFM_VALUE, _IFM_KEY, _IFM_CALL_END, _IFM_CALL, _IFM_CALLS_END)
    _VALUE_END = markers(_IFM_VALUE_END, _IFM_KEY, _IFM_CALL_END, _IFM_CALL, _IFM_CALLS_END)

    def _section(self, opener):
        if opener == _IFM_CALL:
            m = yield from self._call()
            return _IFM_CALL if m == _IFM_CALL else None
        found = False
        m = yield from self._until(self._SECTION, _drop)
        while m == _IFM_CALL:
            found = True
            m = yield from self._call()
            if m == _IFM_CALL_END:
                m = yield from self._until(self._SECTION, _drop)
        if not found:
            self._fail()
        return None

    def _call(self):
        """One block after its ``<ifm|tool_call>``; returns the marker that ended it."""
        yield from self._skip_ws()
        if (yield from self._peek()) == "{":
            self._pos += 1
            yield from self._call_object(False)
            return (yield from self._until(self._TO_CALL_END, _drop))
        name, m = yield from self._text_until(self._NAME_END)
        name = name.strip()
        if not valid_name(name):
            self._fail()
            if m == _IFM_KEY:
                m = yield from self._until(self._TO_CALL_END, _drop)
            return m
        self._open_call(name)
        count = 0
        while m == _IFM_KEY:
            key, m = yield from self._text_until(self._KEY_END)
            if m != _IFM_KEY_END:
                continue
            key = key.strip()
            inline = None
            m = yield from self._until(self._TO_VALUE, _drop)
            if m == _IFM_TYPE:
                inline, m = yield from self._text_until(self._TYPE_END)
                if m == _IFM_TYPE_END:
                    m = yield from self._until(self._TO_VALUE, _drop)
            if m != _IFM_VALUE:
                continue
            raw, m = yield from self._text_until(self._VALUE_END)
            self._param_prefix(count, key)
            count += 1
            self._emit_args(_ifm_value(raw, self._types_for(name, key), inline))
            if m == _IFM_VALUE_END:
                m = yield from self._until(self._ARG_SCAN, _drop)
        self._emit_args("}" if count else "{}")
        self._close_call(True)
        return m


# ---------------------------------------------------------------------------- plamo3

_PL_REQS, _PL_REQS_END = tool_opener("plamo3"), "<|plamo:end_tool_requests:plamo|>"
_PL_REQ, _PL_REQ_END = "<|plamo:begin_tool_request:plamo|>", "<|plamo:end_tool_request:plamo|>"
_PL_NAME, _PL_NAME_END = "<|plamo:begin_tool_name:plamo|>", "<|plamo:end_tool_name:plamo|>"
_PL_ARGS = "<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>"
_PL_ARGS_END = "<|plamo:end_tool_arguments:plamo|>"


class Plamo3ToolParser(BaseToolParser):
    """PLaMo 3: ``<|plamo:begin_tool_requests:plamo|>`` then per call
    ``<|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>NAME
    <|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json
    <|plamo:msg|>{json}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>``,
    then ``<|plamo:end_tool_requests:plamo|>``. Text between markers inside the
    block is dropped; text after it is content."""

    format_name = "plamo3"
    tool_tag = ToolTagSpec(_PL_REQS, schema_call(_PL_REQ + _PL_NAME + "{name}" + _PL_NAME_END + _PL_ARGS,
                                                 _PL_ARGS_END + _PL_REQ_END), section=(_PL_REQS, _PL_REQS_END))
    openers = terminators_of("plamo3")
    think_pairs = (think_pair_of("plamo3"),)
    _SECTION = markers(_PL_REQ, _PL_REQS_END)
    _TO_NAME = markers(_PL_NAME, _PL_REQ_END, _PL_REQ, _PL_REQS_END)
    _NAME_END = markers(_PL_NAME_END, _PL_ARGS, _PL_REQ_END, _PL_REQ, _PL_REQS_END)
    _TO_ARGS = markers(_PL_ARGS, _PL_REQ_END, _PL_REQ, _PL_REQS_END)
    _TAIL = markers(_PL_REQ_END, _PL_REQ, _PL_REQS_END)

    def _section(self, opener):
        found = False
        m = yield from self._until(self._SECTION, _drop)
        while m == _PL_REQ:
            found = True
            m = yield from self._request()
            if m == _PL_REQ_END:
                m = yield from self._until(self._SECTION, _drop)
        if not found:
            self._fail()
        return None

    def _request(self):
        m = yield from self._until(self._TO_NAME, _drop)
        if m != _PL_NAME:
            self._fail()
            return m
        name, m = yield from self._text_until(self._NAME_END)
        name = name.strip()
        if m == _PL_NAME_END:
            m = yield from self._until(self._TO_ARGS, _drop)
        if m != _PL_ARGS or not valid_name(name):
            self._fail()
            return m if m != _PL_ARGS else (yield from self._until(self._TAIL, _drop))
        self._open_call(name)
        yield from self._skip_ws()
        ok = yield from self._json(self._emit_args, True)
        self._close_call(ok)
        return (yield from self._until(self._TAIL, _drop))


# ---------------------------------------------------------------------------- minimax_m3

_MM = "]<]minimax[>["
_MM_CALL, _MM_CALL_END = _MM + "<tool_call>", _MM + "</tool_call>"
_MM_INVOKE, _MM_INVOKE_END = _MM + "<invoke name=", _MM + "</invoke>"
_MM_OPEN, _MM_CLOSE = _MM + "<", _MM + "</"
_MM_DEPTH = 128
_MM_TEXT = "$text"
_TYPE_ALIASES = {"str": "string", "text": "string", "varchar": "string", "char": "string", "enum": "string",
                 "int": "integer", "int32": "integer", "int64": "integer", "uint": "integer", "uint32": "integer",
                 "uint64": "integer", "long": "integer", "short": "integer", "unsigned": "integer",
                 "float": "number", "float32": "number", "float64": "number", "double": "number",
                 "bool": "boolean", "dict": "object", "arr": "array", "list": "array", "sequence": "array"}


def _mm_elements(body: str) -> list:
    """The parameter elements of an invoke body: ``[(name, value)]`` where a value
    is the element's text, or its ``[(name, value)]`` children (non-blank text
    beside children goes under ``$text``). Reading stops at the first malformed
    or unclosed element, keeping the elements before it. Iterative: nesting
    costs no stack."""
    out: list = []
    pos, n = 0, len(body)
    while True:
        while pos < n and body[pos].isspace():
            pos += 1
        if not body.startswith(_MM_OPEN, pos):
            return out
        stack: list = []  # frames [name, close_tag, text_parts, children]
        while True:
            start = pos + len(_MM_OPEN)
            end = body.find(">", start)
            name = body[start:end] if end > start else ""
            if not name or name.startswith("/") or not name.strip() or len(stack) >= _MM_DEPTH:
                return out
            stack.append([name, f"{_MM_CLOSE}{name}>", [], []])
            pos = end + 1
            while True:
                at = body.find(_MM, pos)
                if at < 0:
                    return out
                frame = stack[-1]
                frame[2].append(body[pos:at])
                if body.startswith(frame[1], at):
                    pos = at + len(frame[1])
                    stack.pop()
                    text = "".join(frame[2])
                    value = text if not frame[3] else frame[3]
                    if frame[3] and text.strip():
                        field = _MM_TEXT
                        while any(k == field for k, _ in frame[3]):
                            field = "$" + field
                        frame[3].append((field, text))
                    if stack:
                        stack[-1][3].append((frame[0], value))
                        continue
                    out.append((frame[0], value))
                    break
                if not body.startswith(_MM_OPEN, at):
                    return out
                pos = at
                break  # open a child
            if not stack:
                break


def _mm_types(schema) -> list:
    if not isinstance(schema, dict):
        return ["string"]
    types: set = set()
    t = schema.get("type")
    if isinstance(t, str):
        types.add(t)
    elif isinstance(t, list):
        types.update(x for x in t if isinstance(x, str))
    enum = schema.get("enum")
    if isinstance(enum, list):
        for v in enum:
            types.add("null" if v is None else "boolean" if isinstance(v, bool) else "integer"
                      if isinstance(v, int) else "number" if isinstance(v, float) else "string"
                      if isinstance(v, str) else "array" if isinstance(v, list) else "object"
                      if isinstance(v, dict) else "string")
    for key in ("anyOf", "oneOf", "allOf"):
        choices = schema.get(key)
        if isinstance(choices, list):
            for c in choices:
                types.update(_mm_types(c))
    return list(types) if types else ["string"]


def _finite(v) -> bool:
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, list):
        return all(_finite(x) for x in v)
    if isinstance(v, dict):
        return all(_finite(x) for x in v.values())
    return True


def _mm_coerce(value: str, types: list):
    """A leaf's text as the schema's type: null, integer, number, boolean,
    object, array, string in that order of preference; else JSON, else the text."""
    norm = {_TYPE_ALIASES.get(k, k) for t in types if isinstance(t, str) for k in [t.strip().lower()]}
    for cand in ("null", "integer", "number", "boolean", "object", "array", "string"):
        if cand not in norm:
            continue
        if cand == "null":
            if value.lower() == "null":
                return None
        elif cand == "string":
            return value
        elif cand == "integer":
            try:
                return int(value)
            except ValueError:
                pass
        elif cand == "number":
            try:
                return int(value)
            except ValueError:
                pass
            try:
                f = float(value)
            except ValueError:
                continue
            if math.isfinite(f):
                return f if f != int(f) else int(f)
        elif cand == "boolean":
            low = value.lower().strip()
            if low in ("true", "1"):
                return True
            if low in ("false", "0"):
                return False
        else:
            try:
                parsed = json.loads(value)
            except (ValueError, RecursionError):
                continue
            if _finite(parsed):
                return parsed
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return value
    return parsed if _finite(parsed) else value


def _mm_container(schema):
    t = schema.get("type")
    for kind in ("array", "object"):
        if t == kind or (isinstance(t, list) and kind in t):
            return kind, schema
    if t is None:
        if "items" in schema:
            return "array", schema
        if "properties" in schema or "additionalProperties" in schema:
            return "object", schema
    for key in ("anyOf", "oneOf"):
        for c in schema.get(key) or ():
            if isinstance(c, dict):
                found = _mm_container(c)
                if found:
                    return found
    return None


def _mm_convert(value, schema):
    if not isinstance(schema, dict):
        schema = None
    container = _mm_container(schema) if schema is not None else None
    if isinstance(value, str):
        if schema is None:
            return value
        types = _mm_types(schema)
        if container is not None and "string" not in types and not value.strip():
            return [] if container[0] == "array" else {}
        return _mm_coerce(value, types)
    if container is not None and container[0] == "array":
        items = container[1].get("items")
        return [_mm_convert(v, items) for _, v in value]
    return _mm_object(value, container[1] if container is not None else None)


def _mm_object(elements, schema) -> dict:
    props = (schema or {}).get("properties") or {}
    extra = (schema or {}).get("additionalProperties")
    out: dict = {}
    repeated: set = set()
    for name, element in elements:
        v = _mm_convert(element, props.get(name, extra) if isinstance(props, dict) else extra)
        if name not in out:
            out[name] = v
        elif name in repeated:
            out[name].append(v)
        else:
            out[name] = [out[name], v]
            repeated.add(name)
    return out


class MiniMaxM3ToolParser(BaseToolParser):
    """MiniMax M3: every tag carries the ``]<]minimax[>[`` namespace marker::

        ]<]minimax[>[<tool_call>
        ]<]minimax[>[<invoke name="NAME">
        ]<]minimax[>[<city>Paris]<]minimax[>[</city>
        ]<]minimax[>[<items>]<]minimax[>[<item>a]<]minimax[>[</item>]<]minimax[>[</items>
        ]<]minimax[>[</invoke>
        ]<]minimax[>[</tool_call>

    One element per parameter, named after it; elements nest (an element with
    children is an object, or an array when its schema says so; repeated names
    collect into a list). A leaf is its text, typed by the request's schema (no
    schema: a string). The arguments of an invoke are written once it is read
    (a later element can change an earlier value). Text between invokes is
    dropped; text after the block is content."""

    format_name = "minimax_m3"
    tool_tag = ToolTagSpec(_MM_CALL, _mm3_call, section=(_MM_CALL + "\n", _MM_CALL_END))
    openers = (_MM_CALL,)
    think_pairs = (think_pair_of("minimax_m3"),)
    _SECTION = markers(_MM_INVOKE, _MM_CALL_END)
    _NAME_END = markers(">", _MM_INVOKE_END, _MM_INVOKE, _MM_CALL_END)
    _BODY_END = markers(_MM_INVOKE_END, _MM_CALL_END)

    def _section(self, opener):
        found = False
        m = yield from self._until(self._SECTION, _drop)
        while m == _MM_INVOKE:
            found = True
            name, m = yield from self._text_until(self._NAME_END)
            name = _unquote(name)
            if m != ">" or not valid_name(name):
                self._fail()
                if m == ">":
                    m = yield from self._until(self._BODY_END, _drop)
            else:
                self._open_call(name)
                body, m = yield from self._text_until(self._BODY_END)
                self._emit_args(self._arguments(name, body))
                self._close_call(True)
            if m == _MM_INVOKE_END:
                m = yield from self._until(self._SECTION, _drop)
        if not found:
            self._fail()
        return None

    def _arguments(self, name: str, body: str) -> str:
        props = self._properties(name)
        try:
            value = _mm_object(_mm_elements(body), {"properties": props})
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
            # a lone surrogate in the model's text is escaped, so the arguments always encode
            return re.sub("[\ud800-\udfff]", lambda m: "\\u%04x" % ord(m.group()), text)
        except (ValueError, RecursionError, TypeError):  # pragma: no cover - a deep model value
            return "{}"

    def _properties(self, name: str) -> dict:
        schema = self._schemas.get(name)
        if isinstance(schema, dict) and isinstance(schema.get("function"), dict):
            schema = schema["function"]
        if isinstance(schema, dict) and isinstance(schema.get("parameters"), dict):
            schema = schema["parameters"]
        props = schema.get("properties") if isinstance(schema, dict) else None
        return props if isinstance(props, dict) else {}


# ---------------------------------------------------------------------------- gpt_oss (harmony)

_H_START, _H_CHANNEL, _H_MESSAGE = "<|start|>assistant", "<|channel|>", "<|message|>"
_H_ENDS = ("<|end|>", "<|call|>", "<|return|>")
_H_TO = re.compile(r"to=([^\s<]+)")
_H_CHANNEL_NAME = re.compile(r"<\|channel\|>\s*([A-Za-z_]+)")


class GptOssToolParser(BaseToolParser):
    """gpt-oss (harmony): a call is a commentary message addressed to a function,
    ``<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json
    <|message|>{...}<|call|>`` (the recipient may sit in the role header instead:
    ``<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>``;
    ``<|start|>assistant`` may be missing). Other messages
    (``<|channel|>final<|message|>…<|return|>``, a commentary preamble) are
    content with their frame dropped; ``<|channel|>analysis<|message|>`` … is
    reasoning, never read for calls."""

    format_name = "gpt_oss"
    tool_tag = ToolTagSpec("to=functions.", _gpt_oss_call)
    openers = (_H_START, _H_CHANNEL)
    think_pairs = tuple((st, get_family("gpt_oss").end[0]) for st in get_family("gpt_oss").start)
    _HEAD_END = markers(_H_MESSAGE, _H_START, *_H_ENDS)
    _BODY_END = markers(*_H_ENDS, _H_START)

    def _section(self, opener):
        head, m = yield from self._text_until(self._HEAD_END)
        head = opener + head
        if m != _H_MESSAGE:
            # not a message header: its text is content
            self._not_markup(opener, head + (m or ""))
            self._content(head)
            if m == _H_START:
                return m
            if m is not None:
                self._content(m)
            return None
        to = _H_TO.search(head)
        if to is None:
            # a message to the user: its body is content, the frame is dropped
            self._not_markup(opener, head + m)
            m = yield from self._until(self._BODY_END, self._content)
            return m if m == _H_START else None
        name = to.group(1).rsplit(".", 1)[-1]
        if not valid_name(name):
            self._fail()
            m = yield from self._until(self._BODY_END, _drop)
            return m if m == _H_START else None
        self._open_call(name)
        yield from self._skip_ws()
        if (yield from self._peek()) == "<":
            self._emit_args("{}")
            self._close_call(True)
        else:
            ok = yield from self._json(self._emit_args, True)
            self._close_call(ok)
        m = yield from self._until(self._BODY_END, _drop)
        return m if m == _H_START else None

    def _not_markup(self, opener: str, head: str) -> None:
        if self._marker_at == self._base + self._pos - len(head):
            self._marker_at = None


# our format name (and aliases) -> parser class, for reasoning_core.tools.create
PARSERS: dict[str, type[BaseToolParser]] = {
    "seed_oss": SeedOssToolParser,
    "cohere_command": CohereCommandToolParser,
    "step3": Step3ToolParser,
    "kimi_k3": KimiK3ToolParser,
    "k2_horizon": K2HorizonToolParser,
    "plamo3": Plamo3ToolParser,
    "minimax_m3": MiniMaxM3ToolParser,
    "gpt_oss": GptOssToolParser,
}
# vLLM 0.33 tool-parser name -> our format name
VLLM_NAMES: dict[str, str] = {
    "seed_oss": "seed_oss",
    # Qwen3EngineToolParser with Step-5's content whitespace kept (ours keeps it)
    "step5": "qwen3_coder",
    # GLM-4.5's pairs with Laguna's value rule (Poolside's own model)
    "poolside_v1": "laguna",
    # vLLM parses Command's whole message with cohere_melody (an action block
    # is this JSON list); its ToolParser classes are capability stubs
    "cohere_command3": "cohere_command",
    "cohere_command4": "cohere_command",
    "step3": "step3",
    "kimi_k3": "kimi_k3",
    "k2_horizon": "k2_horizon",
    "plamo3": "plamo3",
    "minimax_m3": "minimax_m3",
}
# SGLang 0.5.23 function-call parser name -> (our format, one-shot tool_index
# mode "tools"|"local", unlisted tools dropped one-shot, ... dropped streaming)
SGLANG_NAMES: dict[str, tuple[str, str, bool, bool]] = {
    "poolside_v1": ("laguna", "tools", True, True),
    "cohere_command4": ("cohere_command", "tools", True, True),
    "step3": ("step3", "tools", True, True),
    "kimi_k3": ("kimi_k3", "local", False, False),
    "k2_horizon": ("k2_horizon", "local", True, True),
    "minimax-m3": ("minimax_m3", "local", True, False),
    "gpt-oss": ("gpt_oss", "local", True, True),
}
# engine name -> why it is not served (the README lists these)
VLLM_UNSERVED: dict[str, str] = {
    "openai": "vLLM's openai tool parser is a stub that raises: vLLM reads gpt-oss output from token ids with "
              "openai_harmony's encoding (model-specific vocabulary files), not as text; our gpt_oss format "
              "serves SGLang's gpt-oss",
}
SGLANG_UNSERVED: dict[str, str] = {}
