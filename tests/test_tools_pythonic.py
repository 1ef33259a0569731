"""The pythonic and JSON-list tool formats (``reasoning_core.tools._pythonic_formats``).

No engine needed (the differential against vLLM's and SGLang's own parsers is
tests/integrations/test_tools_pythonic_differential.py). Per format: generated
outputs parse to what was generated and stream to the one-shot result in any
chunking; marker soup never raises, is chunking-invariant and conserves content;
a malformed call beside a valid one is skipped; a huge argument finishes; Python
literals convert to the JSON values they denote.
"""

from __future__ import annotations

import ast
import json
import re
import warnings

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from reasoning_core import tools
from reasoning_core.tools import _pythonic_formats as pf
from toolstreams import stream

FORMATS = sorted({cls.format_name for cls in pf.PARSERS.values()})
PYTHONIC = {"pythonic", "lfm2", "olmo3"}
# formats whose ``[``/marker may be prose: a non-call is content, never an error
LENIENT = {"pythonic", "xlam", "phi4_mini_json"}


def test_names_resolve_and_engine_names_point_at_formats():
    for n, cls in pf.PARSERS.items():
        assert isinstance(tools.create(n), cls)
    assert tools.get_parser_cls("llama4_pythonic") is tools.get_parser_cls("pythonic")
    for fmt in pf.VLLM_NAMES.values():
        assert fmt in tools.available()
    for fmt, mode, _a, _b in pf.SGLANG_NAMES.values():
        assert fmt in tools.available() and mode in ("tools", "local")


# ------------------------------------------------------------------ Python literals


def _pystr(s: str, style: int) -> str:
    if style == 1:
        return json.dumps(s, ensure_ascii=False)  # JSON's escapes are Python's too
    if style == 2 and "\\" not in s and "'" not in s and "\n" not in s and "\r" not in s:
        return "r'" + s + "'"
    if style == 3 and not s.endswith('"') and '"""' not in s:
        return '"""' + s.replace("\\", "\\\\") + '"""'
    return repr(s)


def pylit(v, style: int = 0) -> str:
    """Python source for a JSON-like value (tuples for lists in some styles)."""
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return _pystr(v, style)
    if isinstance(v, list):
        inner = [pylit(x, style) for x in v]
        if style == 2:
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        return "[" + ", ".join(inner) + ("," if style == 3 and inner else "") + "]"
    return "{" + ", ".join(f"{pylit(k, style)}: {pylit(x, style)}" for k, x in v.items()) + "}"


def pycall(name, args, style=0) -> str:
    sep = ", " if style != 1 else ",\n    "
    return f"{name}(" + sep.join(f"{k}={pylit(v, style)}" for k, v in args.items()) + ")"


def _lit(text):
    """What our reader makes of one Python literal (None on error)."""
    out: list[str] = []
    r = pf.PyLiteralReader(out.append)
    pos, status = r.feed(text, 0, True)
    return json.loads("".join(out)) if status == pf.DONE and not text[pos:].strip() else None


@pytest.mark.parametrize("text,value", [
    ("'a\\'b'", "a'b"), ('"a\\"b"', 'a"b'), ("'''x''y'''", "x''y"), ('""', ""), ("''", ""),
    ("r'\\d+\\''", "\\d+\\'"), ("u'é'", "é"), ("'\\x41\\u00e9\\U0001F600\\101\\0'", "Aé😀A\x00"),
    ("'\\N{BULLET}'", "•"), ("'a\\\nb'", "ab"), ("'\\q'", "\\q"), ("'tab\there'", "tab\there"),
    ("1_000", 1000), ("007", 7), ("-0.5", -0.5), (".5", 0.5), ("1.", 1.0), ("+3", 3), ("1e-7", 1e-7),
    ("2.5E+20", 2.5e20), ("True", True), ("None", None), ("null", None), ("false", False),
    ("(1, 2)", [1, 2]), ("(1,)", [1]), ("()", []), ("(1)", 1), ("((1), (2,))", [1, [2]]),
    ("[1, [2, {'a': (3,)}],]", [1, [2, {"a": [3]}]]), ("{1: 'x', None: 2, True: 3}", {"1": "x", "null": 2, "true": 3}),
    ("{'k': {'n': [None, ()]}, }", {"k": {"n": [None, []]}}), ("[]", []), ("{}", {}),
])
def test_literals_convert_to_json(text, value):
    assert _lit(text) == value
    for n in (1, 2, 3):  # and the same in any chunking
        out: list[str] = []
        r = pf.PyLiteralReader(out.append)
        pos = 0
        for i in range(0, len(text), n):
            piece = text[i:i + n]
            pos, status = r.feed(piece, 0, False)
            assert status == pf.NEED or (status == pf.DONE and not piece[pos:].strip()), (text, n)
        assert r.feed("", 0, True)[1] == pf.DONE
        assert json.loads("".join(out)) == value


_py_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4) | st.integers(-9, 9), kids,
                                                              max_size=3),
    max_leaves=8,
)


@given(value=_py_values, style=st.integers(0, 3), data=st.data())
def test_literals_match_pythons_own_reading(value, style, data):
    """Oracle: ``ast.literal_eval`` (on test input only) then ``json.dumps``."""
    text = pylit(value, style)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = json.loads(json.dumps(ast.literal_eval(text), ensure_ascii=False))
    assert _lit(text) == want
    out: list[str] = []
    r = pf.PyLiteralReader(out.append)
    pieces = chunked(data, text)
    for k, piece in enumerate(pieces):
        pos, status = r.feed(piece, 0, False)
        assert status == pf.NEED or (status == pf.DONE and k == len(pieces) - 1 and pos == len(piece))
    assert r.feed("", 0, True)[1] == pf.DONE
    assert json.loads("".join(out)) == want


@pytest.mark.parametrize("text", ["x", "1 + 2", "f(1)", "b'x'", "1j", "0x10", "{1.5: 2}", "{'a', 'b'}",
                                  "'abc", "'''ab''", "[1, 2", "(1 2)", "{'a' 1}", "'\\xZZ'", "'\\N{NO SUCH}'",
                                  "-", ".", "1..2", "{[1]: 2}", ",", "[,]", "'\\U00110000'"])
def test_non_literals_are_errors(text):
    assert _lit(text) is None


# ------------------------------------------------------------------ rendering


def render(fmt: str, calls, style: int = 0) -> str:
    js = [json.dumps({"name": n, "arguments": a}, ensure_ascii=style == 1) for n, a in calls]
    if fmt == "pythonic":
        body = "[" + ", ".join(pycall(n, a, style) for n, a in calls) + "]"
        return "<|python_start|>" + body + "<|python_end|>" if style == 1 else body
    if fmt == "lfm2":
        if style == 2:
            return "<|tool_call_start|>[" + ", ".join(js) + "]<|tool_call_end|>"
        return "<|tool_call_start|>[" + ", ".join(pycall(n, a, style) for n, a in calls) + "]<|tool_call_end|>"
    if fmt == "olmo3":
        return "<function_calls>\n" + "\n".join(pycall(n, a, style) for n, a in calls) + "\n</function_calls>"
    if fmt == "phi4_mini_json":
        return "functools[" + ", ".join(js) + "]"
    if fmt == "granite":
        return ("<tool_call>" if style == 1 else "<|tool_call|>") + "[" + ", ".join(js) + "]"
    if fmt == "granite_20b_fc":
        return " ".join("<function_call> " + j for j in js)
    if fmt == "internlm":
        sp = " " if style == 1 else ""
        return "".join(f"<|action_start|>{sp}<|plugin|>\n{j}<|action_end|>" for j in js)
    if fmt == "xlam":
        body = "[" + ", ".join(js) + "]"
        return ("```json\n" + body + "\n```") if style == 1 else ("<tool_call>" + body + "</tool_call>") \
            if style == 2 else body
    raise KeyError(fmt)  # pragma: no cover


MARKERS = {
    "pythonic": ["[", "]", "f(", "(", ")", "a=", "=", ",", "'", '"', "<|python_start|>", "<|python_end|>", "True"],
    "lfm2": ["<|tool_call_start|>", "<|tool_call_end|>", "[", "]", "f(", "a=", ")", "'", '{"name": "f"', "}"],
    "olmo3": ["<function_calls>", "</function_calls>", "\n", "f(", "a=", ")", "'", "null", "["],
    "phi4_mini_json": ["functools[", "functools", "]", '{"name": "f"', '"arguments": {', "}", ","],
    "granite": ["<|tool_call|>", "<tool_call>", "[", "]", '{"name": "f"', '"arguments": {', "}", ","],
    "granite_20b_fc": ["<function_call>", '{"name": "f"', '"arguments": {', "}", " "],
    "internlm": ["<|action_start|>", "<|plugin|>", "<|interpreter|>", "<|action_end|>", '{"name": "f"',
                 '"parameters": {', "}"],
    "xlam": ["[", "]", "```json", "```", "[TOOL_CALLS]", "<tool_call>", "</tool_call>", '{"name": "f"',
             '"arguments": {', "}", ","],
}

_names = st.sampled_from(["get_weather", "f", "A1", "tool_9", "_x"])
_keys = st.sampled_from(["a", "city", "n", "k_1", "days"])
_plain = st.text(st.sampled_from(list("ab xyz Q09_-.,:;!?'é中😀\t\n/=()")), min_size=1, max_size=20)
_strs = st.text(st.sampled_from(list("ab x'\"\\\n\té中😀{}[]()=,<>")), max_size=12)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False, allow_infinity=False)
    | _strs,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_keys, kids, max_size=3),
    max_leaves=6,
)


@st.composite
def output(draw, fmt):
    text, content, calls = [], [], []
    after_calls = False
    for kind in draw(st.lists(st.sampled_from(["text", "calls", "think"]), max_size=5)):
        if kind == "calls":
            group = draw(st.lists(st.tuples(_names, st.dictionaries(_keys, _json, max_size=4)), min_size=1,
                                  max_size=3))
            text.append(render(fmt, group, draw(st.integers(0, 3))))
            calls.extend((n, json.loads(json.dumps(a))) for n, a in group)
            after_calls = True
            continue
        piece = draw(_plain)
        if kind == "think":
            piece = "<think>" + piece + render(fmt, [("f", {})]) + "</think>"
        elif fmt == "granite_20b_fc" and after_calls:
            piece = piece.lstrip(" \t\n\r") or "x"  # whitespace after a call is markup
        text.append(piece)
        content.append(piece)
        after_calls = False
    return "".join(text), "".join(content), calls


def chunked(data, text):
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=30), label="cuts")
    cuts = sorted(set(c for c in cuts if 0 < c < len(text)))
    return [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]


def _calls(pairs):
    return [(n, json.loads(a)) for n, a in pairs]


@pytest.mark.parametrize("fmt", FORMATS)
@given(data=st.data())
def test_any_chunking_streams_to_the_one_shot_result(fmt, data):
    text, content, calls = data.draw(output(fmt), label="output")
    full = tools.create(fmt).parse_complete(text)
    assert (full.content or "") == content
    assert _calls((c.name, c.arguments) for c in full.tool_calls) == calls
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", c.id) for c in full.tool_calls)
    got = stream(tools.create(fmt), chunked(data, text), with_ids=False)
    assert got[0] == content
    assert got[1] == [(c.name, c.arguments) for c in full.tool_calls]


@pytest.mark.parametrize("fmt", FORMATS)
@given(data=st.data())
@example(data=None)
def test_marker_soup_is_chunking_invariant_and_conserves_content(fmt, data):
    if data is None:  # the bare openers, cut at the end of input
        texts = [m for m in MARKERS[fmt]] + ["[f(a=", "[f(a='x", "<|tool_call_start|>[f(a=1)"]
        for t in texts:
            _soup(fmt, t, [t[:1], t[1:]] if len(t) > 1 else [t])
        # an error inside an open "(" (tuple or parenthesized value undecided): what came
        # before it goes out whether or not a chunk ended there (found by the fuzz target)
        opener = MARKERS[fmt][0] if MARKERS[fmt] else ""
        # and a \N{...} escape whose name cannot be looked up (a lone surrogate, non-ASCII): an
        # error in the value, never an exception out of the stream (found by the fuzz target)
        for body in ("[f(a=[($)", "[f(a=[1, (2, [3, ($x)", "[f(a=(1, $)", "[f(a='\\N{x\ud800y}')]",
                     "[f(a='\\N{LATIN SMALL LETTER \u00e9}')]", "[f(a='\\N{LATIN SMALL LETTER E}')]"):
            t = opener + body + " tail"
            for cut in range(1, len(t)):
                _soup(fmt, t, [t[:cut], t[cut:]])
        return
    frags = MARKERS[fmt] + [m[: len(m) // 2] for m in MARKERS[fmt]] + [
        "{", "}", "[", "]", '"', "'", "\\", ":", ",", " ", "f", "1", "true", "é", "\x00", "\ud800", "(", ")"]
    text = data.draw(st.lists(st.sampled_from(frags) | st.text(max_size=3), max_size=25).map("".join), label="t")
    _soup(fmt, text, chunked(data, text))


def _soup(fmt, text, chunks):
    one = stream(tools.create(fmt), [text] if text else [], with_ids=False)
    assert stream(tools.create(fmt), chunks, with_ids=False) == one
    try:
        full = tools.create(fmt).parse_complete(text)
    except ValueError as e:
        assert fmt not in LENIENT
        assert fmt in str(e) and re.search(r"offset \d+", str(e))
        return
    assert (full.content or "") == one[0]
    # the one-shot calls are the streamed ones less those that failed after opening
    rest = iter(one[1])
    assert all(any(s == (c.name, c.arguments) for s in rest) for c in full.tool_calls)
    for c in full.tool_calls:
        json.loads(c.arguments)
    if fmt in LENIENT and not one[1]:
        assert (full.content or "") == text  # a non-call is content, verbatim


# ------------------------------------------------------------------ malformed, huge, typed

SECRET = "s3cr3t_payload"
BROKEN = {
    "pythonic": f"[{SECRET}-bad(a=1)]",
    "lfm2": f"<|tool_call_start|>[{SECRET}-bad(a=1)]<|tool_call_end|>",
    "olmo3": f"<function_calls>\n{SECRET}-bad(a=1)\n</function_calls>",
    "phi4_mini_json": f'functools[{{"name": "{SECRET} bad", "arguments": {{}}}}]',
    "granite": f'<|tool_call|>[{{"name": "{SECRET} bad", "arguments": {{}}}}]',
    "granite_20b_fc": f'<function_call> {{"name": "{SECRET} bad", "arguments": {{}}}}',
    "internlm": f'<|action_start|><|plugin|>\n{{"name": "{SECRET} bad", "parameters": {{}}}}<|action_end|>',
    "xlam": f'```json\n[{{"name": "{SECRET} bad", "arguments": {{}}}}]\n```',
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_malformed_call_is_skipped_and_errors_never_echo_output(fmt):
    good = render(fmt, [("ok", {"x": 1})])
    text = "before " + BROKEN[fmt] + " mid " + good + " after"
    if fmt in LENIENT:
        r = tools.create(fmt).parse_complete("before " + BROKEN[fmt])
        assert r.tool_calls == [] and r.content == "before " + BROKEN[fmt] or fmt == "pythonic"
    else:
        with pytest.raises(ValueError) as e:
            tools.create(fmt).parse_complete("before " + BROKEN[fmt])
        msg = str(e.value)
        assert fmt in msg and re.search(r"offset \d+", msg) and SECRET not in msg
    r = tools.create(fmt).parse_complete(text)
    assert _calls((c.name, c.arguments) for c in r.tool_calls) == [("ok", {"x": 1})]
    assert r.content.startswith("before ") and r.content.endswith(" after")
    content, calls = stream(tools.create(fmt), list(text), with_ids=False)
    assert _calls(calls) == [("ok", {"x": 1})] and content == r.content


@pytest.mark.parametrize("fmt", FORMATS)
def test_huge_argument_finishes(fmt):
    big = "x\u00e9 '\" \\ " * 30_000  # ~210k characters
    text = "Working. " + render(fmt, [("write", {"content": "start " + big + " end", "n": 3})])
    r = tools.create(fmt).parse_complete(text)
    assert r.content == "Working. "
    assert json.loads(r.tool_calls[0].arguments) == {"content": "start " + big + " end", "n": 3}
    n = 4096
    content, calls = stream(tools.create(fmt), [text[i:i + n] for i in range(0, len(text), n)], with_ids=False)
    assert content == "Working. " and calls == [(c.name, c.arguments) for c in r.tool_calls]


def _run(fmt, text, schemas=None):
    p = tools.create(fmt)
    if schemas:
        p.set_streaming_tool_schemas(schemas)
    r = p.parse_complete(text)
    got = (r.content or "", _calls((c.name, c.arguments) for c in r.tool_calls))
    for n in (1, 2, 5):
        q = tools.create(fmt)
        if schemas:
            q.set_streaming_tool_schemas(schemas)
        content, calls = stream(q, [text[i:i + n] for i in range(0, len(text), n)], with_ids=False)
        assert (content, _calls(calls)) == got
    return got


def test_pythonic_values_keep_their_literal_types():
    # the literal decides the JSON type; a schema does not retype a typed literal
    text = "[f(zip='01234', n=12, r=2.50, ok=False, none=None, t=(1, 'a'), d={'k': [True]})]"
    schema = {"f": {"properties": {"zip": {"type": "string"}, "n": {"type": "integer"}, "r": {"type": "number"}}}}
    want = ("", [("f", {"zip": "01234", "n": 12, "r": 2.5, "ok": False, "none": None, "t": [1, "a"],
                        "d": {"k": [True]}})])
    assert _run("pythonic", text, schema) == want
    assert _run("pythonic", text) == want
    assert json.loads(tools.create("pythonic").parse_complete(text).tool_calls[0].arguments)["r"] == 2.5
    assert '"r": 2.50' in tools.create("pythonic").parse_complete(text).tool_calls[0].arguments  # spelling kept


def test_pythonic_prose_brackets_stay_content():
    for t in ["see [1] and [a, b]", "[note] x", "[f(x)]", "[f(a==1)]", "a[i](j=1)", "[]", "[1](f(a=1))",
              "<|python_start|>print(1)<|python_end|>"]:
        assert _run("pythonic", t) == (t, [])
    # a cut-off list keeps its complete calls
    assert _run("pythonic", "[f(a=1), g(") == ("", [("f", {"a": 1})])
    assert _run("pythonic", "see [1] and [a, b]") == ("see [1] and [a, b]", [])
    assert _run("pythonic", "[f(x)] then [g(y=2)]") == ("[f(x)] then ", [("g", {"y": 2})])
    # a call that breaks after it opened fails; the text after the break is content
    r = tools.create("pythonic").parse_complete("[f(a=1, b=@)] x")
    assert (r.content, r.tool_calls) == ("@)] x", [])
    assert _run("pythonic", "[f(a=1), g(b=2,),] ok") == (" ok", [("f", {"a": 1}), ("g", {"b": 2})])
    # several lists, Llama 4's frame, reasoning never read for calls
    assert _run("pythonic", "A<|python_start|> [f()] <|python_end|>B[g()]") == ("AB", [("f", {}), ("g", {})])
    assert _run("pythonic", "<think>[f()]</think>[g()]") == ("<think>[f()]</think>", [("g", {})])


def test_lfm2_and_olmo3_blocks():
    assert _run("lfm2", "Hi<|tool_call_start|>f(a=1)<|tool_call_end|>ok") == ("Hiok", [("f", {"a": 1})])
    assert _run("lfm2", '<|tool_call_start|>[{"name": "f", "arguments": {"a": 1}}, {"name": "g"}]'
                        "<|tool_call_end|>") == ("", [("f", {"a": 1}), ("g", {})])
    assert _run("lfm2", "<|tool_call_start|>[f(a=1), g(b='x')] junk<|tool_call_end|>end") == (
        "end", [("f", {"a": 1}), ("g", {"b": "x"})])
    assert _run("olmo3", "<function_calls>f(a=null, b=true)\ng()</function_calls>") == (
        "", [("f", {"a": None, "b": True}), ("g", {})])
    assert _run("olmo3", "<function_calls>[f(a=1), g()]</function_calls>x") == ("x", [("f", {"a": 1}), ("g", {})])


def test_json_list_formats():
    assert _run("phi4_mini_json", "use functools[0] here") == ("use functools[0] here", [])
    assert _run("phi4_mini_json", 'functools[{"name": "f", "parameters": {"a": 1}}]') == ("", [("f", {"a": 1})])
    assert _run("granite", '<tool_call>{"name": "f", "arguments": {}} tail') == (" tail", [("f", {})])
    assert _run("granite_20b_fc", '<function_call> {"name": "f", "arguments": {"a": [1]}}\n\nDone') == (
        "Done", [("f", {"a": [1]})])
    assert _run("internlm", "<|action_start|><|interpreter|>\nprint(1)<|action_end|>") == (
        "<|action_start|><|interpreter|>\nprint(1)<|action_end|>", [])
    assert _run("internlm", '<|action_start|> <|plugin|>{"name": "f", "arguments": {"a": 1}} x<|action_end|>y') == (
        "y", [("f", {"a": 1})])
    assert _run("xlam", "[1, 2] and [TOOL_CALLS] x") == ("[1, 2] and [TOOL_CALLS] x", [])
    assert _run("xlam", '[TOOL_CALLS][{"name": "f", "arguments": {}}]\nok') == ("\nok", [("f", {})])
    assert _run("xlam", '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>') == ("", [("f", {"a": 1})])
