"""The engines' remaining tool formats and their names for formats we have.

DeepSeek V3.2 and V4.1 write the DSML block of V4 under other tags (one parser,
the tags as data); Trinity writes hermes blocks that may sit inside ``<think>``;
IQuest Q1 writes GLM-4.7's argument pairs inside its own call tags; Spark 2.5
writes GLM's pairs with a schema-only value rule; MiniCPM5 writes XML calls;
SGLang reads Inkling's calls as whole ``<|message_model|>`` messages; Beam (SGLang's
fixed template) writes `` to=NAME`` headers with ``rfl:parameter`` values. Each is
a generator on the shared incremental machine (``_base``).
"""

from __future__ import annotations

import re

from ..families import terminators_of, tool_opener
from .._tag_calls import ToolTagSpec, _beam_call, _flagged_call, _minicpm_call, schema_call
from ._base import BaseToolParser, _drop, markers, valid_name
from ._json import dump_str, normalize, typed_value
from ._json_formats import HermesToolParser
from ._base import Markers
from ._max_formats import (
    ATEM_INVOKE,
    ATEM_INVOKE_END,
    DsmlToolParser,
    InklingToolParser,
    MuseGlimmerToolParser,
)
from ._xml_formats import Glm45ToolParser

_STRING_ONLY = frozenset(["string"])

# ---------------------------------------------------------------------------- DSML (V3.2, V4.1)


class DeepSeekV32ToolParser(DsmlToolParser):
    """DeepSeek V3.2: ``<｜DSML｜function_calls>`` … ``</｜DSML｜function_calls>``;
    ``<｜DSML｜invoke name="NAME"/>`` is a call without arguments, and any
    ``string`` flag but "true" reads the value as JSON."""

    format_name = "deepseek_v32"
    tool_tag = ToolTagSpec("<｜DSML｜function_calls>", schema_call(
        '<｜DSML｜invoke name="{name}">\n', "</｜DSML｜invoke>\n", "deepseek_xml"),
        section=("<｜DSML｜function_calls>\n", "</｜DSML｜function_calls>"))
    _BLOCK = "function_calls"
    _SELF_CLOSING = True
    _ANY_FLAG_JSON = True


class DeepSeekV41ToolParser(DeepSeekV32ToolParser):
    """DeepSeek V4.1: ``<｜DSML｜ calls>``, ``<｜DSML｜ invoke name=…>``,
    ``<｜DSML｜ parameter name=…>`` (a space after the DSML marker)."""

    format_name = "deepseek_v41"
    tool_tag = ToolTagSpec("<｜DSML｜ calls>", _flagged_call("｜DSML｜ "),
                           section=("<｜DSML｜ calls>\n", "</｜DSML｜ calls>"))
    _BLOCK = " calls"
    _INVOKE_TAG = " invoke"
    _PARAM_TAG = " parameter"


# ---------------------------------------------------------------------------- trinity

_THINK_TAGS = ("<think>", "</think>")
_HERMES_CALL = tool_opener("qwen3")  # <tool_call>


class TrinityToolParser(HermesToolParser):
    """Hermes blocks (``<tool_call>{"name": …, "arguments": {…}}</tool_call>``) that
    may sit inside reasoning: ``<think>`` and ``</think>`` are dropped wherever they
    are and the text between them is read for calls like any other (SGLang's
    Trinity detector)."""

    format_name = "trinity"
    tool_tag = ToolTagSpec(_HERMES_CALL, schema_call(_HERMES_CALL + '\n{"name": "{name}", "arguments": ',
                                                     "}\n</tool_call>"))
    think_pairs = ()
    openers = (*HermesToolParser.openers, *_THINK_TAGS)

    def reset(self) -> None:
        super().reset()
        self._tool_seen = False

    def _section(self, opener):
        if opener in _THINK_TAGS:
            if not self._tool_seen:  # a think tag is not tool markup
                self._marker_at = None
            return None
        self._tool_seen = True
        return (yield from HermesToolParser._section(self, opener))


# ---------------------------------------------------------------------------- iquest_q1

IQ_CALL, IQ_CALL_END = "<iquest_tool_call>", "</iquest_tool_call>"


class IQuestQ1ToolParser(Glm45ToolParser):
    """IQuest Q1: GLM-4.7's argument pairs in IQuest's own call tags,
    ``<iquest_tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…</iquest_tool_call>``
    (a newline after the name and between pairs is allowed)."""

    format_name = "iquest_q1"
    tool_tag = ToolTagSpec(IQ_CALL, schema_call(IQ_CALL + "{name}", IQ_CALL_END, "glm_xml"))
    openers = (IQ_CALL,)
    _END = markers(IQ_CALL_END)
    _NAME_END = markers("\n", "<arg_key>", IQ_CALL_END)
    _SCAN_ARGS = markers("<arg_key>", IQ_CALL_END)
    _KEY_END = markers("</arg_key>", "<arg_key>", IQ_CALL_END)
    _TO_VALUE = markers("<arg_value>", "<arg_key>", IQ_CALL_END)
    _VALUE_END = markers("</arg_value>", "<arg_key>", IQ_CALL_END)

    def _section(self, opener):
        name, m = yield from self._text_until(self._NAME_END)
        name = name.strip()
        if m is None or not valid_name(name):
            self._fail()
            if m is not None and m != IQ_CALL_END:
                yield from self._until(self._END, _drop)
            return None
        self._open_call(name)
        count = 0
        while m is not None and m != IQ_CALL_END:
            if m != "<arg_key>":
                m = yield from self._until(self._SCAN_ARGS, _drop)
                continue
            key, m = yield from self._text_until(self._KEY_END)
            if m != "</arg_key>":
                continue
            m = yield from self._until(self._TO_VALUE, _drop)
            if m != "<arg_value>":
                continue
            key = key.strip()
            self._param_prefix(count, key)
            count += 1
            m = yield from self._xml_value(name, key, self._VALUE_END)
            if m == "</arg_value>":
                m = yield from self._until(self._SCAN_ARGS, _drop)
        self._emit_args("}" if count else "{}")
        self._close_call(True)
        return None


# ---------------------------------------------------------------------------- spark25


def _spark_value(raw: str, types: frozenset) -> str:
    """Spark 2.5's value rule: ``null`` (any case) is null; without a single
    schema type the text is a string; integer, number and boolean convert as
    Python reads them (``1``/``0`` are booleans too); other types are JSON; a
    value that does not convert is JSON when it parses, else the text."""
    if raw.lower() == "null":
        return "null"
    if len(types) != 1 or types == _STRING_ONLY:
        return dump_str(raw)
    (t,) = types
    try:
        if t == "integer":
            return str(int(raw))
        if t == "number":
            x = float(raw)
            if x == x and x not in (float("inf"), float("-inf")):
                return str(int(x)) if x.is_integer() else repr(x)
        elif t == "boolean":
            v = raw.strip().lower()
            if v in ("true", "1", "false", "0"):
                return "true" if v in ("true", "1") else "false"
    except ValueError:
        pass
    canon = normalize(raw)
    return canon if canon is not None else dump_str(raw)


class Spark25ToolParser(Glm45ToolParser):
    """Spark 2.5: GLM's ``<tool_call>NAME\n<arg_key>k</arg_key><arg_value>v</arg_value>…
    </tool_call>`` with Spark's value rule (``_spark_value``): values are kept as
    written (no newline trimmed) and typed only by the request's schema."""

    format_name = "spark25"
    tool_tag = ToolTagSpec(tool_opener("glm45"), schema_call(tool_opener("glm45") + "{name}", "</tool_call>", "glm_xml"))

    def _xml_value(self, fname, key, ends):
        raw, m = yield from self._text_until(ends)
        self._emit_args(_spark_value(raw, self._types_for(fname, key)))
        return m


# ---------------------------------------------------------------------------- minicpm5

_MC_FUNC, _MC_FUNC_END, _MC_PARAM, _MC_PARAM_END = "<function", "</function>", "<param", "</param>"
# "\s*": a tag written collapsed (``<functionname="f">``, ``<paramname="k">``) reads too
_MC_NAME = re.compile(r"""\s*name\s*=\s*(?:"([^"]*)"|'([^']*)')[^>]*""")
_XML_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#x[0-9A-Fa-f]{1,6}|lt|gt|amp|quot|apos);")
_XML_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_CDATA = "<![CDATA["


def _xml_char(m: re.Match) -> str:
    ref = m.group()[1:-1]
    if ref[0] != "#":
        return _XML_NAMED[ref]
    code = int(ref[2:], 16) if ref[1] == "x" else int(ref[1:])
    return chr(code) if 0 < code < 0x110000 else m.group()


def _xml_text(raw: str) -> str:
    """A parameter's text: a ``<![CDATA[…]]>`` body byte for byte, else the text
    with its XML character references decoded and surrounding whitespace trimmed."""
    if raw.startswith(_CDATA) and raw.endswith("]]>"):
        return raw[len(_CDATA):-3]
    return _XML_ENTITY.sub(_xml_char, raw).strip()


class MiniCPM5ToolParser(BaseToolParser):
    """MiniCPM5's XML calls, flat and repeated; text around them is content::

        <function name="NAME"><param name="K">V</param>…</function>

    A value is XML text (``&lt;`` … references decoded, trimmed) or a CDATA
    section (kept as written); a ``string`` parameter stays a string, others are
    JSON when the text parses (else the text). A parameter whose ``</param>`` is
    missing ends at the next ``<param`` or ``</function>``.
    A tag written without its space (``<functionname="NAME">``,
    ``<paramname="K">``) reads as the spaced one.
    """

    format_name = "minicpm5"
    tool_tag = ToolTagSpec('<function name="', _minicpm_call)
    openers = (_MC_FUNC,)
    _HEAD_END = markers(">", _MC_FUNC_END, _MC_FUNC)
    _TO_END = markers(_MC_FUNC_END)
    _PARAM_SCAN = markers(_MC_PARAM, _MC_FUNC_END)
    _PHEAD_END = markers(">", _MC_PARAM_END, _MC_FUNC_END)
    _VALUE_END = markers(_MC_PARAM_END, _MC_PARAM, _MC_FUNC_END)

    def reset(self) -> None:
        super().reset()
        self._calls_seen = False

    def _section(self, opener):
        # the head is held until it reads as a function's: "<functions>" in prose
        # is content
        self._rec = [opener]
        self._rec_from = self._pos
        head, m = yield from self._text_until(self._HEAD_END)
        hm = _MC_NAME.fullmatch(head) if m == ">" else None
        name = (hm.group(1) if hm.group(1) is not None else hm.group(2)).strip() if hm else ""
        if hm is None:
            text = "".join(self._rec) + self._buf[self._rec_from:self._pos]
            self._rec = None
            if m == _MC_FUNC:  # the next call's opener is not this text
                text = text[:-len(m)]
            self._content(text)
            if not self._calls_seen:
                self._marker_at = None
            return m if m == _MC_FUNC else None
        self._rec = None
        self._calls_seen = True
        if not valid_name(name):
            self._fail()
            yield from self._until(self._TO_END, _drop)
            return None
        self._open_call(name)
        count = 0
        m = yield from self._until(self._PARAM_SCAN, _drop)
        while m == _MC_PARAM:
            head, m = yield from self._text_until(self._PHEAD_END)
            pm = _MC_NAME.fullmatch(head) if m == ">" else None
            if pm is None:
                if m != _MC_FUNC_END:
                    m = yield from self._until(self._PARAM_SCAN, _drop)
                continue
            key = pm.group(1) if pm.group(1) is not None else pm.group(2)
            raw, m = yield from self._text_until(self._VALUE_END)
            self._param_prefix(count, key)
            count += 1
            self._emit_args(typed_value(_xml_text(raw), self._types_for(name, key)))
            if m == _MC_PARAM_END:
                m = yield from self._until(self._PARAM_SCAN, _drop)
        self._emit_args("}" if count else "{}")
        self._close_call(True)
        return None


# ---------------------------------------------------------------------------- inkling_framed

INK_CALL = terminators_of("inkling")[0]  # <|content_invoke_tool_json|>
INK_MODEL = "<|message_model|>"
# Inkling's framing tokens (besides the two above); in this form they are never text
_INK_FRAMING = (
    "<|endoftext|>", "<|message_user|>", "<|message_system|>", "<|message_tool|>", "<|content_text|>",
    "<|content_image|>", "<|content_model_end_sampling|>", "<|content_thinking|>", "<|end_message|>",
    "<|content_audio_input|>", "<|content_tool_error|>", "<|content_xml|>", "<|audio_end|>",
    "<|content_invoke_tool|>", "<|model_trigger_generation|>",
)


class InklingFramedToolParser(InklingToolParser):
    """Inkling's calls as whole messages, the form SGLang reads::

        <|message_model|>NAME<|content_invoke_tool_json|>{"name": "NAME", "args": {…}}<|end_message|>

    The text between ``<|message_model|>`` and the call marker is the call's
    header (dropped); a call marker without a message header takes the name
    before it as ``inkling`` does. Inkling's framing tokens are dropped wherever
    they are; a ``<|message_model|>`` not followed by a call opens content.
    """

    format_name = "inkling_framed"
    # the message header before the marker (<|message_model|>NAME) is content to the tag
    tool_tag = ToolTagSpec(INK_CALL, schema_call(
        INK_CALL + '{"name": "{name}", "args": ', "}<|end_message|>"))
    think_pairs = ()
    openers = (INK_CALL, INK_MODEL, *_INK_FRAMING)
    _AFTER_HEADER = markers(INK_CALL, INK_MODEL, *_INK_FRAMING)
    _MESSAGE_END = markers("<|end_message|>", INK_MODEL)

    def reset(self) -> None:
        super().reset()
        self._tool_seen = False

    def _section(self, opener):
        if opener == INK_CALL:
            self._tool_seen = True
            return (yield from InklingToolParser._section(self, opener))
        if not self._tool_seen:  # framing is not tool markup
            self._marker_at = None
        if opener != INK_MODEL:
            return None
        held, self._held = self._held, ""
        BaseToolParser._content(self, held)
        header, m = yield from self._text_until(self._AFTER_HEADER)
        if m != INK_CALL:
            self._content(header)
            return m
        self._tool_seen = True
        if self._marker_at is None:
            self._marker_at = self._base + self._pos - len(m)
        yield from self._skip_ws()
        ok = None
        if (yield from self._peek()) == "{":
            self._pos += 1
            ok = yield from self._call_object(False)
        else:
            self._fail()
        if ok:
            return None
        # the rest of a broken call's message is the call's, not content
        m = yield from self._until(self._MESSAGE_END, _drop)
        return m if m == INK_MODEL else None


# ---------------------------------------------------------------------------- beam

BEAM_TO = " to="
BEAM_HEAD_TAIL = "|channel|>analysis <|constrain|>xml<|message|>"  # after the name's "<"
BEAM_PARAM = '<rfl:parameter name="'
BEAM_PARAM_END = "</rfl:parameter>"
BEAM_CLOSERS = ("<|call|>", "<|end|><|start|>assistant")


class BeamToolParser(BaseToolParser):
    """Beam's calls (the fixed response template SGLang ships for Beam)::

         to=NAME<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name="K">
        V
        </rfl:parameter>…<|call|>

    ``<|end|><|start|>assistant`` also closes a call (the next message follows).
    A value is framed by one newline on each side; it is a string unless the
    request's schema gives the parameter another type. Text that is not a call
    header (`` to=`` in prose) is content; so is the channel framing around the
    answer (the reasoning parser's part).
    """

    format_name = "beam"
    tool_tag = ToolTagSpec(BEAM_TO, _beam_call)
    openers = (BEAM_TO,)
    _NAME_END = markers("<", " ", "\t", "\n", "\r")
    _PARAM_SCAN = markers(BEAM_PARAM, *BEAM_CLOSERS)
    _KEY_END = markers('">', BEAM_PARAM, *BEAM_CLOSERS)
    _VALUE_END = markers(BEAM_PARAM_END, BEAM_PARAM, *BEAM_CLOSERS)

    def reset(self) -> None:
        super().reset()
        self._calls_seen = False

    def _section(self, opener):
        self._rec = [opener]  # held until it reads as a call header
        self._rec_from = self._pos
        name, m = yield from self._text_until(self._NAME_END)
        if m != "<" or not name or not (yield from self._expect(BEAM_HEAD_TAIL)):
            text = "".join(self._rec) + self._buf[self._rec_from:self._pos]
            self._rec = None
            self._content(text)
            if not self._calls_seen:
                self._marker_at = None
            return None
        self._rec = None
        self._calls_seen = True
        if not valid_name(name):
            self._fail()
            yield from self._until(markers(*BEAM_CLOSERS), _drop)
            return None
        self._open_call(name)
        count = 0
        m = yield from self._until(self._PARAM_SCAN, _drop)
        while m == BEAM_PARAM:
            key, m = yield from self._text_until(self._KEY_END)
            if m != '">':
                continue
            self._param_prefix(count, key)
            count += 1
            raw, m = yield from self._text_until(self._VALUE_END)
            if raw.startswith("\n"):
                raw = raw[1:]
            if raw.endswith("\n"):
                raw = raw[:-1]
            types = self._types_for(name, key)
            self._emit_args(typed_value(raw, types) if types else dump_str(raw))
            if m == BEAM_PARAM_END:
                m = yield from self._until(self._PARAM_SCAN, _drop)
        self._emit_args("}" if count else "{}")
        self._close_call(True)
        return None


# ---------------------------------------------------------------------------- muse (channels)

M_START, M_MESSAGE, M_EOM, M_EOT = "<|start|>", "<|message|>", "<|eom|>", "<|eot|>"
_M_ENDS = (M_EOM, M_EOT)
_M_RECIPIENT = re.compile(r"to=([^\s<]+)")
_M_NOT_TOOLS = frozenset(["commentary", "self", "user"])
_M_WS = re.compile(r"\s*")


def _with_ends(ms: Markers) -> Markers:
    return markers(*ms.markers, *_M_ENDS)


class MuseChannelsToolParser(MuseGlimmerToolParser):
    """Muse's channel-scoped messages, as SGLang's ``muse`` reads them::

         to=self<|message|>…<|eom|><|start|>assistant to=TOOL<|message|><atem:function_calls>
        <atem:invoke name="NAME"><atem:parameter name="K">V</atem:parameter></atem:invoke>
        </atem:function_calls><|eom|><|start|>assistant to=user<|message|>answer<|eot|>

    Only a message addressed to a tool (not ``self``, ``user`` or ``commentary``)
    is read for ATEM invokes; other bodies are content, their headers and
    ``<|eom|>``/``<|eot|>`` dropped. Output that does not open with a header is
    content up to the first ``<|eom|>``/``<|eot|>``. A doubled namespace
    (``get_weather.get_weather``) names the listed tool ``get_weather``, as does
    ``ns.get_weather`` when one listed tool ends so.
    """

    format_name = "muse"
    think_pairs = ()
    # a tool message is never content: one with no usable call reports no call
    raises_on_failure = False
    openers = (M_START,)  # (the messages are read by _run itself)
    _SECTION = _with_ends(MuseGlimmerToolParser._SECTION)
    _NAME_END = _with_ends(MuseGlimmerToolParser._NAME_END)
    _TO_INVOKE_END = _with_ends(MuseGlimmerToolParser._TO_INVOKE_END)
    _PARAM_SCAN = _with_ends(MuseGlimmerToolParser._PARAM_SCAN)
    _KEY_END = _with_ends(MuseGlimmerToolParser._KEY_END)
    _VALUE_END = _with_ends(MuseGlimmerToolParser._VALUE_END)
    _BODY_END = markers(*_M_ENDS)
    _TOOL_BODY = markers(ATEM_INVOKE, *_M_ENDS)
    _HEADER_END = markers(M_MESSAGE)
    _AT_START = markers("<", " ", "\t", "\n", "\r", M_MESSAGE)

    def _tool_name(self, name: str) -> str:
        """A doubled namespace (``f.f``) names the listed tool ``f``; so does any
        ``ns.f`` whose last part is one listed tool's."""
        if "." not in name or name in self._schemas:
            return name
        head, _, tail = name.partition(".")
        if head == tail and head in self._schemas:
            return head
        leaf = name.rsplit(".", 1)[-1]
        found = [n for n in self._schemas if n.rsplit(".", 1)[-1] == leaf]
        return found[0] if len(found) == 1 else name

    def _run(self):
        rcpt = yield from self._first_header()
        while True:
            if rcpt is None or rcpt in _M_NOT_TOOLS:
                m = yield from self._until(self._BODY_END, self._content)
            else:
                m = yield from self._tool_body()
            if m is None:
                return
            # between messages: whitespace is content; then a header or prose
            ws = yield from self._ws_run()
            self._content(ws)
            if (yield from self._expect(M_START)):
                header, m = yield from self._text_until(self._HEADER_END)
                if m is None:
                    self._content(M_START + header)
                    return
                hm = _M_RECIPIENT.search(header)
                rcpt = hm.group(1) if hm else "user"
            else:
                rcpt = None

    def _ws_run(self):
        parts = []
        while True:
            end = _M_WS.match(self._buf, self._pos).end()
            parts.append(self._buf[self._pos:end])
            self._pos = end
            if end < len(self._buf) or self._eof:
                return "".join(parts)
            yield

    def _first_header(self):
        """The recipient of the opening message (``None``: the output is prose)."""
        self._rec = []  # held until it is known whether a header opens the output
        self._rec_from = self._pos
        yield from self._ws_run()
        if (yield from self._expect("to=")):
            rcpt, m = yield from self._text_until(self._AT_START)
            if m == M_MESSAGE or (m == "<" and (yield from self._expect(M_MESSAGE[1:]))):
                self._rec = None
                return rcpt or "user"
        elif (yield from self._expect(M_START)):
            header, m = yield from self._text_until(self._HEADER_END)
            if m is not None:
                self._rec = None
                hm = _M_RECIPIENT.search(header)
                return hm.group(1) if hm else "user"
        text = "".join(self._rec) + self._buf[self._rec_from:self._pos]
        self._rec = None
        self._content(text)
        return None

    def _tool_body(self):
        m = yield from self._until(self._TOOL_BODY, _drop)
        while m == ATEM_INVOKE:
            m = yield from self._invoke()
            if m == ATEM_INVOKE_END or m not in (ATEM_INVOKE, *_M_ENDS, None):
                m = yield from self._until(self._TOOL_BODY, _drop)
        return m


# our format name (and aliases) -> parser class, for reasoning_core.tools.create
PARSERS: dict[str, type[BaseToolParser]] = {
    "deepseek_v32": DeepSeekV32ToolParser,
    "deepseek_v41": DeepSeekV41ToolParser,
    "trinity": TrinityToolParser,
    "iquest_q1": IQuestQ1ToolParser,
    "minicpm5": MiniCPM5ToolParser,
    "spark25": Spark25ToolParser,
    "inkling_framed": InklingFramedToolParser,
    "beam": BeamToolParser,
    "muse": MuseChannelsToolParser,
}
# vLLM 0.33 tool-parser name -> our format name
VLLM_NAMES: dict[str, str] = {
    # the same parser class as another name in vLLM's registry
    "qwen3_json": "hermes",
    "qwen3_xml": "qwen3_coder",
    "step3p5": "qwen3_coder",
    "llama4_json": "llama3_json",
    "deepseek_v32": "deepseek_v32",
    "deepseek_v41": "deepseek_v41",
    "minicpm5": "minicpm5",
}
# SGLang 0.5.23 function-call parser name -> (our format, one-shot tool_index
# mode "tools"|"local", unlisted tools dropped one-shot, ... dropped streaming)
SGLANG_NAMES: dict[str, tuple[str, str, bool, bool]] = {
    # SGLang registers its Qwen3CoderDetector under these names too
    "step3p5": ("qwen3_coder", "local", False, False),
    "nanbeige": ("qwen3_coder", "local", False, False),
    "deepseekv32": ("deepseek_v32", "tools", True, False),
    "deepseekv4": ("deepseekv4", "tools", True, False),
    "deepseekv41": ("deepseek_v41", "tools", True, False),
    "glm47": ("glm45", "tools", True, False),
    "gemma4": ("gemma4", "tools", False, True),
    "trinity": ("trinity", "tools", True, True),
    "iquest_q1": ("iquest_q1", "local", True, True),
    "minicpm5": ("minicpm5", "tools", True, True),
    "spark25": ("spark25", "local", True, True),
    "inkling": ("inkling_framed", "local", False, False),
    "beam": ("beam", "local", True, True),
    "muse": ("muse", "local", True, True),
}
# engine name -> why it is not served (the README lists these)
_MUSE_REASONING = ("vLLM's muse parser also returns reasoning (recipient-less messages) and drops developer "
                   "messages; a tool parser here has no reasoning output, so that text would be lost: pair the "
                   "muse reasoning family with the muse_glimmer tool format instead")
VLLM_UNSERVED: dict[str, str] = {
    "hf": "the format is the checkpoint's response_template metadata (read from its tokenizer), not a fixed one",
    "beam": "vLLM reads Beam's format from the checkpoint's response_template metadata through its unified "
            "parser path, not a fixed format (SGLang's fixed Beam template is served as beam)",
    "muse": _MUSE_REASONING,
    "musespark1x": _MUSE_REASONING,
}
SGLANG_UNSERVED: dict[str, str] = {
    "response_template": "the format is the checkpoint's response_template metadata (read from its tokenizer), "
                         "not a fixed one",
}
