"""Formats framed by their own tags: JSON calls (apertus, hunyuan_a13b,
gigachat3, longcat = hermes with other tags), near-JSON (functiongemma), and
the tag-per-parameter forms of the same engines' models (mimo = qwen3_coder with
verbatim values, dots = minimax_m2's invokes in other tags or a JSON body,
hunyuan = Hy3/Hy4's arg_key/arg_value, gigachat35 = GCML).

Each section is read with the shared machinery: ``_json`` streams a call's
arguments as they arrive; a malformed call fails cleanly (the section's text up
to its end tag is dropped, as hermes does) and never raises while streaming.
Values written as text are strings unless the request's schema types them,
except where the format marks its own types (gigachat35's ``string`` flag,
functiongemma's JSON-or-string values).
"""

from __future__ import annotations

import re

from ..families import terminators_of, think_pair_of, tool_opener
from .._tag_calls import ToolTagSpec, _fg_call, _flagged_call, _hunyuan_call, _mimo_call, schema_call
from ._base import BaseToolParser, Markers, _drop, _json_string, markers, valid_name
from ._json import dump_str, typed_value
from ._json_formats import HermesToolParser
from ._max_formats import DsmlToolParser
from ._xml_formats import _INVOKE, _PARAM, MiniMaxM2ToolParser, Qwen3CoderToolParser


_UNTHINK = think_pair_of("deepseek_r1")[1]  # </think>


class _JsonListSection(BaseToolParser):
    """``OPEN [elem, elem, …] CLOSE``: a JSON list of calls after the opener.

    Whitespace is allowed around the list. The close tag is optional (a cut-off
    answer keeps its calls); text after the list that is not the close tag is
    content again. A malformed element ends the section: the rest up to the close
    tag is dropped, the calls before it stay.
    """

    close: str = ""

    def _section(self, opener):
        yield from self._skip_ws()
        c = yield from self._peek()
        if c != "[":
            return (yield from self._broken())
        self._pos += 1
        first = True
        while True:
            yield from self._skip_ws()
            c = yield from self._peek()
            if first and c == "]":
                self._pos += 1
                self._fail()  # an empty list is markup without a call
                break
            if c != "{":
                return (yield from self._broken())
            self._pos += 1
            if not (yield from self._element()):
                return (yield from self._broken())
            yield from self._skip_ws()
            c = yield from self._peek()
            if c == ",":
                self._pos += 1
                first = False
                continue
            if c != "]":
                return (yield from self._broken())
            self._pos += 1
            break
        yield from self._ws_then(self.close)
        return None

    def _broken(self):
        self._fail()
        yield from self._until(markers(self.close), _drop)
        return None

    def _element(self):  # pragma: no cover - overridden
        raise NotImplementedError
        yield


class ApertusToolParser(_JsonListSection):
    """``<|tools_prefix|>[{"NAME": {args}}, {"NAME2": {args}}]<|tools_suffix|>``:
    each element is an object whose first key is the tool name and whose value is
    the arguments object (further keys are ignored)."""

    format_name = "apertus"
    tool_tag = ToolTagSpec(tool_opener("apertus"), schema_call('{"{name}": ', "}"),
                           section=(tool_opener("apertus") + "[", "]<|tools_suffix|>"), separator=", ")
    openers = terminators_of("apertus")  # the family table's <|tools_prefix|>
    think_pairs = (think_pair_of("deepseek_r1"), think_pair_of("apertus"))
    close = "<|tools_suffix|>"

    def _element(self):
        yield from self._skip_ws()
        if (yield from self._peek()) != '"':
            return False
        parts: list[str] = []
        if not (yield from self._json(parts.append)):
            return False
        name = _json_string("".join(parts))
        yield from self._skip_ws()
        if name is None or not valid_name(name) or not (yield from self._expect(":")):
            return False
        yield from self._skip_ws()
        if (yield from self._peek()) != "{":
            return False
        self._open_call(name)
        if not (yield from self._json(self._emit_args, True)):
            self._close_call(False)
            return False
        while True:  # further keys of the element: read and dropped
            yield from self._skip_ws()
            c = yield from self._peek()
            if c == "}":
                self._pos += 1
                self._close_call(True)
                return True
            ok = c == ","
            if ok:
                self._pos += 1
                yield from self._skip_ws()
                ok = (yield from self._peek()) == '"' and (yield from self._json(_drop))
            if ok:
                yield from self._skip_ws()
                ok = yield from self._expect(":")
            if ok:
                yield from self._skip_ws()
                ok = yield from self._json(_drop)
            if not ok:
                self._close_call(False)
                return False


# Hunyuan's <tool_calls> (the family table has it as hy_v3's opener; A13B writes the same)
_HY_CALLS = tool_opener("hy_v3")


class HunyuanA13BToolParser(_JsonListSection):
    """``<tool_calls>[{"name": NAME, "arguments": {...}}, …]</tool_calls>``
    (Hunyuan-A13B)."""

    format_name = "hunyuan_a13b"
    tool_tag = ToolTagSpec(_HY_CALLS, schema_call('{"name": "{name}", "arguments": ', "}"),
                           section=(_HY_CALLS + "[", "]</tool_calls>"), separator=", ")
    openers = (_HY_CALLS,)
    close = "</tool_calls>"
    # the family's "<think>\n" … "\n</think>\n<answer>\n"; a block ends at its
    # "</think>" however the answer frame follows
    think_pairs = (think_pair_of("deepseek_r1"), think_pair_of("hunyuan_a13b"))

    def __init__(self) -> None:
        super().__init__()
        self._think_end = {s: markers(_UNTHINK) for s, _ in self.think_pairs}

    def _element(self):
        return bool((yield from self._call_object(True)))


class LongcatToolParser(HermesToolParser):
    """Hermes's ``{"name": …, "arguments": {…}}`` blocks inside
    ``<longcat_tool_call>`` … ``</longcat_tool_call>`` (LongCat-Flash)."""

    format_name = "longcat"
    tool_tag = ToolTagSpec("<longcat_tool_call>", schema_call(
        '<longcat_tool_call>\n{"name": "{name}", "arguments": ', "}\n</longcat_tool_call>"))
    openers = ("<longcat_tool_call>",)
    _END = markers("</longcat_tool_call>", "<longcat_tool_call>")


GC_FUNCTION_CALL = "<|function_call|>"
GC_ROLE_CALL = "function call<|role_sep|>\n"
GC_MESSAGE_SEP = "<|message_sep|>"


class GigaChat3ToolParser(BaseToolParser):
    """``content<|message_sep|>function call<|role_sep|>\\n{"name": …, "arguments": {…}}``
    (``<|function_call|>`` in place of the role header too): one JSON call object;
    an ``</s>`` right after it is dropped, other text after it is content."""

    format_name = "gigachat3"
    # the role header (after content, <|message_sep|> before it is content to the tag)
    tool_tag = ToolTagSpec(GC_ROLE_CALL, schema_call(GC_ROLE_CALL + '{"name": "{name}", "arguments": ', "}"))
    openers = (GC_FUNCTION_CALL, GC_ROLE_CALL, GC_MESSAGE_SEP + GC_ROLE_CALL, GC_MESSAGE_SEP + GC_FUNCTION_CALL)

    def _section(self, opener):
        yield from self._skip_ws()
        if (yield from self._peek()) != "{":
            self._fail()
            return None
        self._pos += 1
        if (yield from self._call_object(True)):
            yield from self._expect("</s>")
        return None


FG_CALL = "<start_function_call>"
FG_CALL_END = "<end_function_call>"
FG_ESC = "<escape>"
_FG_NAME_END = markers("{", FG_CALL_END, FG_CALL)
_FG_AFTER = markers(FG_CALL_END, FG_CALL)
_FG_KEY_END = markers(":", "}", FG_CALL_END, FG_CALL)
_FG_ESC_END = markers(FG_ESC, FG_CALL_END, FG_CALL)
_FG_BARE_END = markers(",", "}", FG_CALL_END, FG_CALL)
_BAD = object()  # a malformed pair inside a call


class FunctionGemmaToolParser(BaseToolParser):
    """``<start_function_call>call:NAME{key:<escape>value<escape>,n:5}<end_function_call>``
    (FunctionGemma), repeated; text around calls is content.

    A value between ``<escape>`` tags is JSON when it parses as JSON, else a string
    (a schema decides when given); a bare value runs to the next ``,`` or ``}``.
    """

    format_name = "functiongemma"
    tool_tag = ToolTagSpec(FG_CALL, _fg_call)
    openers = (FG_CALL,)

    def _section(self, opener):
        if not (yield from self._expect("call:")):
            self._fail()
            m = yield from self._until(_FG_AFTER, _drop)
            return m if m == FG_CALL else None
        name, m = yield from self._text_until(_FG_NAME_END)
        name = name.strip()
        if m != "{" or not valid_name(name):
            self._fail()
            if m != "{":
                return m if m == FG_CALL else None
            m = yield from self._until(_FG_AFTER, _drop)
            return m if m == FG_CALL else None
        self._open_call(name)
        m = yield from self._args(name)
        self._close_call(m == "}")
        if m == "}" or m is _BAD:
            m = yield from self._until(_FG_AFTER, _drop)
        return m if m == FG_CALL else None

    def _args(self, fname):
        """Key/value pairs up to the closing ``}`` (returned); another marker or
        the end of input (returned) breaks the call, and so does a malformed pair
        (``_BAD``: the call's text is then dropped up to its end tag)."""
        count = 0
        while True:
            key, m = yield from self._text_until(_FG_KEY_END)
            key = key.strip()
            if count and key.startswith(","):
                key = key[1:].strip()
            if m == "}" and not key:
                self._emit_args("}" if count else "{}")
                return m
            if m != ":" or not valid_name(key):
                return _BAD if m in (":", "}") else m
            self._param_prefix(count, key)
            count += 1
            types = self._types_for(fname, key)
            yield from self._skip_ws()
            if (yield from self._expect(FG_ESC)):
                value, m = yield from self._text_until(_FG_ESC_END)
                if m != FG_ESC:
                    return m
                self._emit_args(typed_value(value, types))
                continue
            value, m = yield from self._text_until(_FG_BARE_END)
            if m not in (",", "}"):
                return m
            self._emit_args(typed_value(value.strip(), types))
            if m == "}":
                self._emit_args("}")
                return m


class MiMoToolParser(Qwen3CoderToolParser):
    """qwen3_coder's ``<tool_call><function=NAME><parameter=K>V</parameter></function></tool_call>``
    with values written verbatim (MiMo): a value is a string as written, newlines
    included, unless the request's schema gives the parameter another type."""

    format_name = "mimo"
    tool_tag = ToolTagSpec(tool_opener("mimo"), _mimo_call)

    def _xml_value(self, fname, key, ends):
        parts: list[str] = []
        m = yield from self._until(ends, parts.append)
        v = "".join(parts)
        types = self._types_for(fname, key)
        self._emit_args(typed_value(v, types) if types else dump_str(v))
        return m


# ---------------------------------------------------------------------------- dots

DOTS_CALL = "<dots_function_call>"
DOTS_END = "</dots_function_call>"


class DotsToolParser(MiniMaxM2ToolParser):
    """``<dots_function_call><invoke name="X"><parameter name="K">V</parameter></invoke>…
    </dots_function_call>`` (dots.llm), or a JSON ``{"name": …, "arguments": {…}}``
    object as the block's body; several blocks per answer.

    A value is trimmed and kept as a string unless the request's schema gives the
    parameter a non-string type (then it is typed as JSON).  ``null_text_is_null``
    (off by default): a value written ``null`` (any case) is JSON ``null``
    whatever the parameter's type, as vLLM's dots parser reads it.
    """

    format_name = "dots"
    null_text_is_null = False
    tool_tag = ToolTagSpec(DOTS_CALL, schema_call('<invoke name="{name}">\n', "</invoke>\n", "minimax_xml"),
                           section=(DOTS_CALL + "\n", DOTS_END))
    openers = (DOTS_CALL,)
    _SECTION = markers(_INVOKE, DOTS_END)
    _NAME_END = markers(">", "</invoke>", _INVOKE, DOTS_END)
    _TO_INVOKE_END = markers("</invoke>", _INVOKE, DOTS_END)
    _PARAM_SCAN = markers(_PARAM, "</invoke>", _INVOKE, DOTS_END)
    _KEY_END = markers(">", "</parameter>", _PARAM, "</invoke>", _INVOKE, DOTS_END)
    _VALUE_END = markers("</parameter>", _PARAM, "</invoke>", _INVOKE, DOTS_END)
    _TO_END = markers(DOTS_END)

    def _section(self, opener):
        yield from self._skip_ws()
        if (yield from self._peek()) == "{":
            self._pos += 1
            yield from self._call_object(False)
            yield from self._until(self._TO_END, _drop)
            return None
        return (yield from super()._section(opener))

    def _xml_value(self, fname, key, ends):
        parts: list[str] = []
        m = yield from self._until(ends, parts.append)
        v = "".join(parts).strip()
        if self.null_text_is_null and v.lower() == "null":
            self._emit_args("null")
            return m
        types = self._types_for(fname, key)
        self._emit_args(typed_value(v, types) if types else dump_str(v))
        return m


# ---------------------------------------------------------------------------- hunyuan (Hy3, Hy4)

_HY_SUFFIX = re.compile(r"[^\s<>]{0,65}")


# Tag sets by suffix. The suffix is model output: only the first few distinct
# ones are kept (a checkpoint writes one), any other is built for its section
# and dropped with it, so hostile suffixes cannot grow a server.
_HY_TAGS: dict = {}
_HY_TAGS_KEPT = 8


def _hy_tags(sfx: str) -> dict:
    found = _HY_TAGS.get(sfx)
    if found is None:
        keep = len(_HY_TAGS) < _HY_TAGS_KEPT
        # (an unkept set is made with Markers itself: the shared markers()
        # cache must not hold it either)
        found = _hy_tag_set(sfx, markers if keep else Markers.of)
        if keep:
            _HY_TAGS[sfx] = found
    return found


def _hy_tag_set(sfx: str, make) -> dict:
    t = {k: f"<{k}{sfx}>" for k in ("tool_call", "tool_sep", "arg_key", "arg_value")}
    t.update({"/" + k: f"</{k}{sfx}>" for k in ("tool_calls", "tool_call", "arg_key", "arg_value")})
    stop = (t["/tool_call"], t["/tool_calls"], t["tool_call"])  # what ends a call
    return {
        **t,
        "section": make(t["tool_call"], t["/tool_calls"]),
        "name_end": make(t["tool_sep"], t["arg_key"], *stop),
        "scan": make(t["arg_key"], *stop),
        "key_end": make(t["/arg_key"], t["arg_key"], *stop),
        "to_value": make(t["arg_value"], t["arg_key"], *stop),
        "value_end": make(t["/arg_value"], t["arg_key"], *stop),
        "stop": make(*stop),
    }


class HunyuanToolParser(BaseToolParser):
    """``<tool_calls><tool_call>NAME<tool_sep><arg_key>K</arg_key><arg_value>V</arg_value>…
    </tool_call>…</tool_calls>`` (Hunyuan Hy3; Hy4 writes no ``<tool_sep>``).

    A checkpoint may suffix every tag (``<tool_calls:6124c78e>``): the suffix is
    read from the section's opening tag and expected on the tags inside it. Text
    between tags inside the section is dropped; text after it is content. A value
    is the text as written, unless the request's schema gives the parameter a
    non-string type (then it is typed as JSON).
    """

    format_name = "hunyuan"
    # the unsuffixed tags (a suffix is a checkpoint's choice, not expressible as fixed text)
    tool_tag = ToolTagSpec(_HY_CALLS, _hunyuan_call, section=(_HY_CALLS, "</tool_calls>"))
    openers = (_HY_CALLS, _HY_CALLS[:-1])  # <tool_calls>, or a suffixed <tool_calls:…>

    def _section(self, opener):
        sfx = "" if opener == _HY_CALLS else (yield from self._suffix())
        if sfx is None:
            return None
        t = _hy_tags(sfx)
        m = yield from self._until(t["section"], _drop)
        while m == t["tool_call"]:
            m = yield from self._call(t)
            if m == t["/tool_call"]:
                m = yield from self._until(t["section"], _drop)
        return None

    def _suffix(self):
        """The tag suffix up to ``>`` ("" or ``:…``), or None (then the text
        read is content: ``<tool_calls`` was not a tag)."""
        parts: list[str] = []
        while True:
            m = _HY_SUFFIX.match(self._buf, self._pos)
            parts.append(m.group())
            self._pos = m.end()
            sfx = "".join(parts)
            if len(sfx) > 64 or self._pos < len(self._buf) or self._eof:
                break
            yield
        if len(sfx) <= 64 and (sfx == "" or sfx[0] == ":") and (yield from self._expect(">")):
            return sfx
        self._fail()
        self._content("<tool_calls" + sfx)
        return None

    def _call(self, t):
        name, m = yield from self._text_until(t["name_end"])
        name = name.strip()
        if not valid_name(name) or m in (None, t["/tool_calls"], t["tool_call"]):
            self._fail()
            if m in (t["tool_sep"], t["arg_key"]):
                m = yield from self._until(t["stop"], _drop)
            return m
        self._open_call(name)
        if m == t["tool_sep"]:
            m = yield from self._until(t["scan"], _drop)
        count = 0
        while m == t["arg_key"]:
            key, m = yield from self._text_until(t["key_end"])
            if m != t["/arg_key"]:
                continue
            m = yield from self._until(t["to_value"], _drop)
            if m != t["arg_value"]:
                continue
            key = key.strip()
            value, m = yield from self._text_until(t["value_end"])
            types = self._types_for(name, key)
            self._param_prefix(count, key)
            count += 1
            self._emit_args(typed_value(value, types) if types else dump_str(value))
            if m == t["/arg_value"]:
                m = yield from self._until(t["scan"], _drop)
        self._emit_args("}" if count else "{}")
        self._close_call(True)
        return m


# ---------------------------------------------------------------------------- gigachat35 (GCML)

GCML = "｜GCML｜"


class GigaChat35ToolParser(DsmlToolParser):
    """GigaChat 3.5's GCML block::

        <｜GCML｜tool_calls>
        <｜GCML｜invoke name="NAME">
        <｜GCML｜parameter name="K" string="true">text</｜GCML｜parameter>
        <｜GCML｜parameter name="N" string="false">3</｜GCML｜parameter>
        </｜GCML｜invoke>
        </｜GCML｜tool_calls>

    ``string="true"`` values are strings byte for byte; ``string="false"`` values
    are JSON (a value that does not parse stays a string); a parameter without
    the attribute is JSON-or-string, a schema deciding. A ``<|message_sep|>``
    right before the block belongs to it. Text between elements inside the block
    is dropped; text after the block is content.
    """

    format_name = "gigachat35"
    tool_tag = ToolTagSpec(f"<{GCML}tool_calls>", _flagged_call(GCML),
                           section=(f"<{GCML}tool_calls>\n", f"</{GCML}tool_calls>"))
    _PREFIX = GCML
    _LEADS = ("", GC_MESSAGE_SEP)


# our format name (and aliases) -> parser class, for reasoning_core.tools.create
PARSERS: dict[str, type[BaseToolParser]] = {
    "apertus": ApertusToolParser,
    "hunyuan_a13b": HunyuanA13BToolParser,
    "longcat": LongcatToolParser,
    "gigachat3": GigaChat3ToolParser,
    "functiongemma": FunctionGemmaToolParser,
    "mimo": MiMoToolParser,
    "hunyuan": HunyuanToolParser,
    "dots": DotsToolParser,
    "gigachat35": GigaChat35ToolParser,
    "hy_v3": HunyuanToolParser,
    "hy_v4": HunyuanToolParser,
}
# vLLM 0.33 tool-parser name -> our format name
VLLM_NAMES: dict[str, str] = {
    "apertus": "apertus",
    "hunyuan_a13b": "hunyuan_a13b",
    "longcat": "longcat",
    "gigachat3": "gigachat3",
    "functiongemma": "functiongemma",
    "mimo": "mimo",
    "ernie45": "hermes",
    "ling3": "glm45",
    "hy_v3": "hunyuan",
    "hy_v4": "hunyuan",
    "dots": "dots",
}
# SGLang 0.5.23 function-call parser name -> (our format, one-shot tool_index
# mode "tools"|"local", unlisted tools dropped one-shot, ... dropped streaming)
SGLANG_NAMES: dict[str, tuple[str, str, bool, bool]] = {
    "apertus2509": ("apertus", "local", True, True),
    "gigachat3": ("gigachat3", "tools", True, False),
    "mimo": ("mimo", "tools", True, True),
    "ling3": ("glm45", "tools", True, False),
    "hunyuan": ("hunyuan", "tools", True, False),
    "dots": ("dots", "tools", True, True),
    "gigachat35": ("gigachat35", "tools", True, True),
}
# engine name -> why it is not served (the README lists these)
VLLM_UNSERVED: dict[str, str] = {}
SGLANG_UNSERVED: dict[str, str] = {}
