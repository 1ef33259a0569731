"""XML-style formats with one element per parameter: qwen3_coder, glm45, minimax_m2.

Arguments stream as ``{"k": `` + value + ``, "k2": `` … ``}``; values are typed by
``_xml_value`` (JSON if it parses, else a string; a schema decides when given).
A call whose closing tag never came is completed at the end of input.
"""

from __future__ import annotations

from ..families import terminators_of
from . import _base
from ._base import BaseToolParser, _drop, markers, valid_name

_SCAN = object()  # "look for the next element" sentinel


class _ParamElements(BaseToolParser):
    """Formats whose parameters are ``<opener>KEY>VALUE</parameter>`` elements."""

    _PARAM_SCAN: object
    _KEY_END: object
    _VALUE_END: object

    def _params(self, name, opener, clean_key):
        # One element per parameter until the call ends; the arguments object
        # streams as each key and value arrive. Each step is first tried on
        # the buffer as it is (``take``, ``_xml_value_now``: no generator when
        # the element is whole), then waited for.
        take = _base._scan.take
        now = type(self)._xml_value is BaseToolParser._xml_value
        scan, key_end, value_end = self._PARAM_SCAN, self._KEY_END, self._VALUE_END
        r = self._params_now(name, opener, clean_key)
        if r is not None:
            self._emit_args(r[0])
            self._close_call(True)
            return r[1]
        count = 0
        r = take(self, scan)
        m = r[1] if r is not None else (yield from self._until(scan, _drop))
        while m == opener:
            r = take(self, key_end)
            key, km = r if r is not None else (yield from self._text_until(key_end))
            if km != ">":
                if km == "</parameter>":
                    r = take(self, scan)
                    m = r[1] if r is not None else (yield from self._until(scan, _drop))
                else:
                    m = km
                continue
            key = clean_key(key)
            self._param_prefix(count, key)
            count += 1
            if now:
                m = self._xml_value_now(name, key, value_end)
                if m is False:
                    m = yield from self._xml_value_stream(name, key, value_end)
            else:
                m = yield from self._xml_value(name, key, value_end)
            if m == "</parameter>":
                r = take(self, scan)
                m = r[1] if r is not None else (yield from self._until(scan, _drop))
        self._emit_args("}" if count else "{}")
        self._close_call(True)
        return m


    def _params_now(self, name, opener, clean_key):
        """``_params``'s arguments and end marker, ``(JSON, marker)``, when no
        schema types the values and the buffer decides every element up to the
        call's end: read in one compiled pass (``_scan.xml_params``: the same
        arguments, in one piece); ``None`` otherwise (nothing read)."""
        cls = type(self)
        if self.undeclared_as_string or self._tool_types(name) or cls._xml_value is not BaseToolParser._xml_value \
                or cls._emit_args is not BaseToolParser._emit_args \
                or cls._param_prefix is not BaseToolParser._param_prefix:
            return None
        r = _base._scan.xml_params(self._buf, self._pos, opener, ">", "</parameter>", self._PARAM_SCAN,
                                   self._KEY_END, self._VALUE_END, clean_key)
        if r is None:
            return None
        self._pos = r[2]
        return r[0], r[1]


class Qwen3CoderToolParser(_ParamElements):
    """``<tool_call>\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>\\n…</function>\\n</tool_call>``;
    ``<function=…>`` without the wrapper too. A parameter whose ``</parameter>`` is
    missing ends at the next ``<parameter=``, ``</function>`` or ``</tool_call>``."""

    format_name = "qwen3_coder"
    openers = (*terminators_of("qwen3_5"), "<function=")  # the wrapper is optional
    _IN_WRAPPER = markers("<function=", "</tool_call>")
    _NAME_END = markers(">", "\n", "</function>", "</tool_call>")
    _TO_FUNC_END = markers("</function>", "</tool_call>")
    _PARAM_SCAN = markers("<parameter=", "</function>", "</tool_call>")
    _KEY_END = markers(">", "</parameter>", "<parameter=", "</function>", "</tool_call>")
    _VALUE_END = markers("</parameter>", "<parameter=", "</function>", "</tool_call>")

    def _section(self, opener):
        now = type(self)._function is Qwen3CoderToolParser._function
        if opener == "<function=":
            m = self._function_now() if now else False
            if m is False:
                m = yield from self._function()
            return "<function=" if m == "<function=" else None
        found = False
        until = _base._scan.until
        while True:
            m = until(self, self._IN_WRAPPER, _drop)
            while m is False:  # ``_until``, written out (no generator per wait)
                yield
                self._lane = None
                m = until(self, self._IN_WRAPPER, _drop)
            if m != "<function=":
                if not found:
                    self._fail()
                return None
            found = True
            m = self._function_now() if now else False
            if m is False:
                m = yield from self._function()
            if m != "</function>":
                return None

    def _function(self):
        take = _base._scan.take
        r = take(self, self._NAME_END)
        name, m = r if r is not None else (yield from self._text_until(self._NAME_END))
        name = name.strip()
        if m != ">" or not valid_name(name):
            self._fail()
            if m in (None, "</function>", "</tool_call>"):
                return m
            return (yield from self._until(self._TO_FUNC_END, _drop))
        self._open_call(name)
        return (yield from self._params(name, "<parameter=", str.strip))

    def _function_now(self):
        """``_function`` without a generator when the buffer holds the whole
        call and ``_params_now`` reads its parameters: the marker after them,
        with the same events; ``False`` otherwise (nothing read)."""
        pos0 = self._pos
        r = _base._scan.take(self, self._NAME_END)
        if r is not None and r[1] == ">":
            name = r[0].strip()
            if valid_name(name):
                a = self._params_now(name, "<parameter=", str.strip)
                if a is not None:
                    self._whole_call(name, a[0])
                    return a[1]
        self._pos = pos0
        return False


class Glm45ToolParser(BaseToolParser):
    """``<tool_call>NAME\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>…</tool_call>``
    (GLM-4.5/4.6; GLM-4.7's form without newlines too)."""

    format_name = "glm45"
    openers = terminators_of("glm45")
    _NAME_END = markers("\n", "<arg_key>", "</tool_call>")
    _SCAN_ARGS = markers("<arg_key>", "</tool_call>")
    _KEY_END = markers("</arg_key>", "<arg_key>", "</tool_call>")
    _TO_VALUE = markers("<arg_value>", "<arg_key>", "</tool_call>")
    _VALUE_END = markers("</arg_value>", "<arg_key>", "</tool_call>")
    # ``_section``'s stretches read without a word (the text between elements,
    # dropped; a key; the text between a key and its value, dropped), and the
    # markers that, read there with nothing after them, send nothing and leave
    # the parser waiting in another such stretch: a key begins or ends.  A
    # streaming caller may hold such a marker's delta back with the stretch's
    # text (vllm-mlx's gate: ``TextGate.quiet``); tests drive each entry.
    QUIET_MARKERS = {_SCAN_ARGS: {"<arg_key>": _KEY_END},
                     _KEY_END: {"</arg_key>": _TO_VALUE, "<arg_key>": _KEY_END},
                     _TO_VALUE: {"<arg_key>": _KEY_END}}

    def _section(self, opener):
        take = _base._scan.take
        r = take(self, self._NAME_END)
        name, m = r if r is not None else (yield from self._text_until(self._NAME_END))
        name = name.strip()
        if m is None or not valid_name(name):
            self._fail()
            if m is not None and m != "</tool_call>":
                yield from self._until(markers("</tool_call>"), _drop)
            return None
        self._open_call(name)
        count = 0
        now = type(self)._xml_value is BaseToolParser._xml_value
        until = _base._scan.until
        # the waits below are ``_until`` / ``_text_until`` written out (no generator per
        # element: a streamed call resumes here at each of its tags)
        while m is not None and m != "</tool_call>":
            if m != "<arg_key>":
                m = until(self, self._SCAN_ARGS, _drop)
                while m is False:
                    yield
                    self._lane = None
                    m = until(self, self._SCAN_ARGS, _drop)
                continue
            r = take(self, self._KEY_END)
            if r is not None:
                key, m = r
            else:
                parts: list[str] = []
                sink = parts.append
                m = until(self, self._KEY_END, sink)
                while m is False:
                    yield
                    self._lane = None
                    m = until(self, self._KEY_END, sink)
                key = "".join(parts)
            if m != "</arg_key>":
                continue
            m = until(self, self._TO_VALUE, _drop)
            while m is False:
                yield
                self._lane = None
                m = until(self, self._TO_VALUE, _drop)
            if m != "<arg_value>":
                continue
            key = key.strip()
            self._param_prefix(count, key)
            count += 1
            if now:
                m = self._xml_value_now(name, key, self._VALUE_END)
                if m is False:
                    m = yield from self._xml_value_stream(name, key, self._VALUE_END)
            else:
                m = yield from self._xml_value(name, key, self._VALUE_END)
            if m == "</arg_value>":
                m = _SCAN
        self._emit_args("}" if count else "{}")
        self._close_call(True)
        return None


_MM_END = "</minimax:tool_call>"
_INVOKE = "<invoke name="
_PARAM = "<parameter name="


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        s = s[1:-1]
    return s.strip()


class MiniMaxM2ToolParser(_ParamElements):
    """``<minimax:tool_call><invoke name="X"><parameter name="K">V</parameter></invoke>…
    </minimax:tool_call>``; quotes around names optional, several invokes per section,
    text between elements inside the section dropped."""

    format_name = "minimax_m2"
    openers = terminators_of("minimax_m2")
    _SECTION = markers(_INVOKE, _MM_END)
    _NAME_END = markers(">", "</invoke>", _INVOKE, _MM_END)
    _TO_INVOKE_END = markers("</invoke>", _INVOKE, _MM_END)
    _PARAM_SCAN = markers(_PARAM, "</invoke>", _INVOKE, _MM_END)
    _KEY_END = markers(">", "</parameter>", _PARAM, "</invoke>", _INVOKE, _MM_END)
    _VALUE_END = markers("</parameter>", _PARAM, "</invoke>", _INVOKE, _MM_END)

    def _section(self, opener):
        return (yield from self._element_section(_INVOKE, "</invoke>", self._invoke))

    def _invoke(self):
        take = _base._scan.take
        r = take(self, self._NAME_END)
        name, m = r if r is not None else (yield from self._text_until(self._NAME_END))
        name = _unquote(name)
        if m != ">" or not valid_name(name):
            self._fail()
            if m != ">":
                return m
            return (yield from self._until(self._TO_INVOKE_END, _drop))
        self._open_call(name)
        return (yield from self._params(name, _PARAM, _unquote))
