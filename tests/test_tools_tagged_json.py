"""The tagged tool formats of ``reasoning_core.tools._tagged_json_formats``
(apertus, hunyuan_a13b, longcat, gigachat3, functiongemma, mimo) and the engine
names wired to them.

No engine needed (the differential against vLLM's and SGLang's own parsers is
tests/integrations/test_tools_tagged_json_differential.py). Per format:
generated outputs stream to the one-shot result in any chunking and that result
is what was generated; marker soup never raises and is chunking-invariant; a
malformed call beside a valid one is skipped; a huge argument finishes; schemas
type the values of the formats that write them as text.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from reasoning_core import tools
from reasoning_core.tools import _tagged_json_formats as fm
from toolstreams import assert_soup_consistent, stream

FORMATS = ("apertus", "hunyuan_a13b", "longcat", "gigachat3", "functiongemma", "mimo", "hunyuan", "dots",
           "gigachat35")
# the formats whose parameters are text: values typed by the schema
TEXT_VALUES = ("functiongemma", "mimo", "hunyuan", "dots", "gigachat35")

MARKERS = [
    "<|tools_prefix|>", "<|tools_suffix|>", "<tool_calls>", "</tool_calls>", "<longcat_tool_call>",
    "</longcat_tool_call>", "<|message_sep|>", "function call<|role_sep|>\n", "<|function_call|>", "</s>",
    "<start_function_call>", "<end_function_call>", "<escape>", "<tool_call>", "</tool_call>", "<function=",
    "</function>", "<parameter=", "</parameter>", "<think>", "</think>", "<tool_calls", "<tool_sep>", "<arg_key>",
    "</arg_key>", "<arg_value>", "</arg_value>", "<tool_calls:x1>", "</tool_calls:x1>", "<tool_call:x1>",
    "<dots_function_call>", "</dots_function_call>", "<invoke name=", "</invoke>", "<parameter name=",
    "<｜GCML｜tool_calls>", "</｜GCML｜tool_calls>", "<｜GCML｜invoke", "</｜GCML｜invoke>",
    "<｜GCML｜parameter", "</｜GCML｜parameter>",
]
FRAGMENTS = MARKERS + [m[: len(m) // 2] for m in MARKERS] + [
    "{", "}", "[", "]", '"', "\\", ":", ",", "\n", " ", "name", "arguments", '"name": "f"', "call:", "f", ">",
    "1", "true", "é", "\x00", "\ud800",
]


def _no_markers(s: str) -> bool:
    return not any(m in s for m in MARKERS) and "<|" not in s and "|>" not in s and "function call" not in s


def _j(v, style=0) -> str:
    return json.dumps(v, ensure_ascii=bool(style % 2), separators=(",", ":") if style % 3 == 2 else (", ", ": "))


def _text(v) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def render(fmt: str, calls, style: int = 0) -> str:
    ws = "\n" if style % 2 else ""
    if fmt == "apertus":
        body = "[" + ", ".join(_j({n: a}, style) for n, a in calls) + "]"
        return "<|tools_prefix|>" + ws + body + ws + "<|tools_suffix|>"
    if fmt == "hunyuan_a13b":
        return "<tool_calls>" + ws + _j([{"name": n, "arguments": a} for n, a in calls], style) + ws + "</tool_calls>"
    if fmt == "longcat":
        return "".join(f"<longcat_tool_call>\n{_j({'name': n, 'arguments': a}, style)}\n</longcat_tool_call>"
                       for n, a in calls)
    if fmt == "gigachat3":
        head = ("<|message_sep|>function call<|role_sep|>\n", "<|function_call|>", "function call<|role_sep|>\n")
        return "".join(head[style % 3] + _j({"name": n, "arguments": a}, style) for n, a in calls)
    if fmt == "functiongemma":
        return "".join("<start_function_call>call:" + n + "{"
                       + ",".join(f"{k}:<escape>{_text(v)}<escape>" for k, v in a.items())
                       + "}<end_function_call>" for n, a in calls)
    if fmt == "mimo":
        return "".join(f"<tool_call>\n<function={n}>\n"
                       + "".join(f"<parameter={k}>{_text(v)}</parameter>\n" for k, v in a.items())
                       + "</function>\n</tool_call>" for n, a in calls)
    if fmt == "hunyuan":
        sfx = ":x1" if style % 3 == 2 else ""
        nl = "\n" if style % 2 else ""
        sep = f"<tool_sep{sfx}>{nl}" if style % 2 else ""
        return (f"<tool_calls{sfx}>{nl}" + "".join(
            f"<tool_call{sfx}>{n}{sep}" + "".join(
                f"<arg_key{sfx}>{k}</arg_key{sfx}>{nl}<arg_value{sfx}>{_text(v)}</arg_value{sfx}>{nl}"
                for k, v in a.items()) + f"</tool_call{sfx}>{nl}" for n, a in calls) + f"</tool_calls{sfx}>")
    if fmt == "dots":
        if style % 3 == 2:  # the JSON body
            return "".join(f"<dots_function_call>{_j({'name': n, 'arguments': a}, style)}</dots_function_call>"
                           for n, a in calls)
        q = '"' if style % 2 else ""
        return "<dots_function_call>\n" + "".join(
            f"<invoke name={q}{n}{q}>\n" + "".join(f"<parameter name={q}{k}{q}> {_text(v)}\n</parameter>\n"
                                                   for k, v in a.items())
            + "</invoke>\n" for n, a in calls) + "</dots_function_call>"
    if fmt == "gigachat35":
        g = "｜GCML｜"

        def flag(v):
            return ("", ' string="true"', ' string="false"')[style % 3] if isinstance(v, str) else ' string="false"'

        return (("<|message_sep|>" if style % 2 else "") + f"<{g}tool_calls>\n" + "".join(
            f'<{g}invoke name="{n}">\n' + "".join(f'<{g}parameter name="{k}"{flag(v)}>{_text(v)}</{g}parameter>\n'
                                                  for k, v in a.items()) + f"</{g}invoke>\n" for n, a in calls)
            + f"</{g}tool_calls>")
    raise KeyError(fmt)


def _canon(args) -> str:
    text = json.dumps(args, ensure_ascii=False)
    return re.sub("[\ud800-\udfff]", lambda m: "\\u%04x" % ord(m.group()), text)


def _kind(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(v)]


# ------------------------------------------------------------------ generated outputs

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,15}", fullmatch=True)
bare_keys = st.from_regex(r"[a-z_][a-z0-9_]{0,7}", fullmatch=True)
text_chars = st.sampled_from(list('ab <>/="\n\t\\é中😀{}[]1,:') + ["\x01", "\ud800"])
strings = st.text(text_chars, max_size=10).filter(_no_markers)
scalars = (st.none() | st.booleans() | st.integers(-(10**20), 10**20)
           | st.floats(allow_nan=False, allow_infinity=False) | strings)
values = st.recursive(scalars, lambda ch: st.lists(ch, max_size=3) | st.dictionaries(bare_keys, ch, max_size=3),
                      max_leaves=8)


@st.composite
def call(draw, fmt):
    keys = bare_keys if fmt in TEXT_VALUES else st.text(text_chars, max_size=6)
    args = draw(st.dictionaries(keys, values, max_size=4))
    if fmt in TEXT_VALUES:
        # a surrogate cannot be written as raw text and read back as JSON
        assume("\ud800" not in json.dumps(args, ensure_ascii=False))
    if fmt == "dots":  # values are trimmed
        assume(all(_text(v).strip() == _text(v) for v in args.values()))
    return draw(names), args


def content_text():
    return st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=6).map("".join).filter(_no_markers)


@st.composite
def output(draw, fmt):
    """(text, expected content, expected [(name, arguments)], schemas)."""
    pieces = draw(st.lists(st.sampled_from(["content", "think", "calls"]), max_size=6))
    pieces = [k for i, k in enumerate(pieces) if k != "content" or i == 0 or pieces[i - 1] != "content"]
    text, content, calls, typing = [], [], [], {}
    for kind in pieces:
        if kind == "calls":
            group = draw(st.lists(call(fmt), min_size=1, max_size=1 if fmt == "gigachat3" else 3))
            text.append(render(fmt, group, draw(st.integers(0, 5))))
            for name, args in group:
                calls.append((name, _canon(args)))
                seen = typing.setdefault(name, {})
                for k, v in args.items():
                    assume(seen.setdefault(k, _kind(v)) == _kind(v))
            continue
        if kind == "think":
            inner = draw(content_text())
            if draw(st.booleans()):
                inner += render(fmt, draw(st.lists(call(fmt), min_size=1, max_size=1)), 1)
            assume("</think>" not in inner)
            piece = "<think>" + inner + "</think>"
        else:
            piece = draw(content_text())
        text.append(piece)
        content.append(piece)
    schemas = {n: {"properties": {k: {"type": t} for k, t in ts.items()}} for n, ts in typing.items()}
    return "".join(text), "".join(content), calls, schemas


def chunked(data, text):
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=30), label="cuts")
    cuts = sorted(set(c for c in cuts if 0 < c < len(text)))
    return [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]


@pytest.mark.parametrize("fmt", FORMATS)
@given(data=st.data())
def test_any_chunking_streams_to_the_one_shot_result(fmt, data):
    text, content, calls, schemas = data.draw(output(fmt), label="output")
    p = tools.create(fmt)
    p.set_streaming_tool_schemas(schemas)
    full = p.parse_complete(text)
    assert (full.content or "") == content
    assert [(c.name, c.arguments) for c in full.tool_calls] == calls
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", c.id) for c in full.tool_calls)
    q = tools.create(fmt)
    q.set_streaming_tool_schemas(schemas)
    assert stream(q, chunked(data, text), with_ids=False) == (content, calls)


@pytest.mark.parametrize("fmt", FORMATS)
@given(data=st.data())
def test_marker_soup_is_chunking_invariant_and_conserves_content(fmt, data):
    text = data.draw(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=25).map("".join),
                     label="text")
    assert_soup_consistent(fmt, text, chunked(data, text))


# ------------------------------------------------------------------ format facts

def _run(fmt, text, schemas=None):
    p = tools.create(fmt)
    if schemas:
        p.set_streaming_tool_schemas(schemas)
    r = p.parse_complete(text)
    got = (r.content or "", [(c.name, json.loads(c.arguments)) for c in r.tool_calls])
    for n in (1, 2, 3, 7):
        q = tools.create(fmt)
        if schemas:
            q.set_streaming_tool_schemas(schemas)
        content, calls = stream(q, [text[i:i + n] for i in range(0, len(text), n)], with_ids=False)
        assert (content, [(c, json.loads(a)) for c, a in calls]) == got
    return got


def test_apertus_elements_are_name_keyed_objects():
    text = ('I will check. <|tools_prefix|>[{"get_weather": {"city": "Paris"}}, '
            '{"f": {}, "ignored": [1]}]<|tools_suffix|> Then more.')
    assert _run("apertus", text) == ("I will check.  Then more.", [("get_weather", {"city": "Paris"}), ("f", {})])
    # the suffix is optional (a cut-off answer); text after the list is content
    assert _run("apertus", '<|tools_prefix|>[{"f": {"a": 1}}] tail') == (" tail", [("f", {"a": 1})])
    # arguments that are not an object are not a call
    with pytest.raises(ValueError, match="apertus"):
        tools.create("apertus").parse_complete('<|tools_prefix|>[{"f": 5}]<|tools_suffix|>')


def test_hunyuan_a13b_list_of_call_objects():
    text = ('<think>plan <tool_calls>[{"name": "x", "arguments": {}}]</tool_calls></think>\n'
            '<tool_calls>\n[{"name": "a", "arguments": {"k": [1, {"z": null}]}}, '
            '{"arguments": {"q": "é"}, "name": "b"}]\n</tool_calls>')
    assert _run("hunyuan_a13b", text) == (
        '<think>plan <tool_calls>[{"name": "x", "arguments": {}}]</tool_calls></think>\n',
        [("a", {"k": [1, {"z": None}]}), ("b", {"q": "é"})])


def test_longcat_is_hermes_with_its_own_tags():
    assert issubclass(tools.get_parser_cls("longcat"), tools.get_parser_cls("hermes"))
    text = 'A<longcat_tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</longcat_tool_call>B<tool_call>C'
    assert _run("longcat", text) == ("AB<tool_call>C", [("f", {"x": 1})])


def test_gigachat3_one_call_object_after_the_role_header():
    text = 'Sure.<|message_sep|>function call<|role_sep|>\n{"name": "f", "arguments": {"a": "b"}}</s>'
    assert _run("gigachat3", text) == ("Sure.", [("f", {"a": "b"})])
    assert _run("gigachat3", '<|function_call|>{"name": "g", "arguments": {}} ok') == (" ok", [("g", {})])
    # the words alone, without the role separator, are content
    assert _run("gigachat3", "a function call is made") == ("a function call is made", [])


def test_functiongemma_values_and_schema_types():
    text = ('Hi <start_function_call>call:f{s:<escape>a "q" }<escape>,n:<escape>-1.5e3<escape>,'
            'o:<escape>{"k": [true]}<escape>,b:7}<end_function_call> bye')
    assert _run("functiongemma", text) == ("Hi  bye", [("f", {"s": 'a "q" }', "n": -1.5e3, "o": {"k": [True]},
                                                               "b": 7})])
    schema = {"f": {"properties": {"n": {"type": "string"}, "b": {"type": "string"}}}}
    assert _run("functiongemma", text, schema)[1][0][1] == {"s": 'a "q" }', "n": "-1.5e3", "o": {"k": [True]},
                                                             "b": "7"}
    assert _run("functiongemma", "<start_function_call>call:g{}<end_function_call>") == ("", [("g", {})])


def test_mimo_values_are_verbatim_strings_unless_the_schema_types_them():
    text = ("<tool_call>\n<function=f>\n<parameter=cmd>\npwd && ls\n</parameter>\n"
            "<parameter=n>12</parameter>\n</function>\n</tool_call>")
    assert _run("mimo", text) == ("", [("f", {"cmd": "\npwd && ls\n", "n": "12"})])
    schema = {"f": {"properties": {"n": {"type": "integer"}, "cmd": {"type": "string"}}}}
    assert _run("mimo", text, schema)[1] == [("f", {"cmd": "\npwd && ls\n", "n": 12})]
    # qwen3_coder reads the same text with its newline framing and JSON values
    assert _run("qwen3_coder", text)[1] == [("f", {"cmd": "pwd && ls", "n": 12})]


def test_hunyuan_hy3_hy4_and_suffixed_tags():
    hy3 = ("Hi <tool_calls>\n<tool_call>f<tool_sep>\n<arg_key>s</arg_key>\n<arg_value>\n two \n</arg_value>\n"
           "<arg_key>n</arg_key>\n<arg_value>12</arg_value>\n</tool_call>\n</tool_calls> bye")
    assert _run("hunyuan", hy3) == ("Hi  bye", [("f", {"s": "\n two \n", "n": "12"})])
    assert _run("hunyuan", hy3, {"f": {"properties": {"n": {"type": "integer"}}}})[1] == [
        ("f", {"s": "\n two \n", "n": 12})]
    hy4 = ("<tool_calls:6124c78e><tool_call:6124c78e>g<arg_key:6124c78e>k</arg_key:6124c78e>"
           "<arg_value:6124c78e>v</arg_value:6124c78e></tool_call:6124c78e><tool_call:6124c78e>h"
           "</tool_call:6124c78e></tool_calls:6124c78e>")
    assert _run("hunyuan", hy4) == ("", [("g", {"k": "v"}), ("h", {})])
    # tags of another suffix are not this section's tags
    with pytest.raises(ValueError, match="hunyuan"):
        tools.create("hunyuan").parse_complete("<tool_calls:a><tool_call:b>g</tool_call:b></tool_calls:a>x")
    assert stream(tools.create("hunyuan"), ["<tool_calls:a><tool_call:b>g</tool_call:b></tool_calls:a>x"],
                  with_ids=False) == ("x", [])
    # "<tool_calls" that is no tag stays content (and is reported as markup without a call)
    with pytest.raises(ValueError, match="hunyuan"):
        tools.create("hunyuan").parse_complete("a <tool_calls are listed> b")
    assert stream(tools.create("hunyuan"), list("a <tool_calls are listed> b"), with_ids=False) == (
        "a <tool_calls are listed> b", [])
    assert tools.get_parser_cls("hy_v3") is tools.get_parser_cls("hy_v4") is tools.get_parser_cls("hunyuan")


def test_dots_invokes_or_a_json_body():
    text = ('Hi <dots_function_call>\n<invoke name="f">\n<parameter name="s">\n two words \n</parameter>\n'
            '<parameter name=n>12</parameter>\n</invoke>\n<invoke name="g">\n</invoke>\n</dots_function_call> and '
            '<dots_function_call>\n{"name": "h", "arguments": {"a": [1]}}\n</dots_function_call>.')
    assert _run("dots", text) == ("Hi  and .", [("f", {"s": "two words", "n": "12"}), ("g", {}), ("h", {"a": [1]})])
    assert _run("dots", text, {"f": {"properties": {"n": {"type": "integer"}}}})[1][0] == (
        "f", {"s": "two words", "n": 12})
    assert issubclass(tools.get_parser_cls("dots"), tools.get_parser_cls("minimax_m2"))


def test_gigachat35_values_follow_the_string_flag():
    g = "｜GCML｜"
    text = (f'Ok.<|message_sep|><{g}tool_calls>\n<{g}invoke name="f">\n'
            f'<{g}parameter name="s" string="true"> 12 </{g}parameter>\n'
            f'<{g}parameter name="n" string="false">12</{g}parameter>\n'
            f'<{g}parameter name="bad" string="false">not json</{g}parameter>\n'
            f'<{g}parameter name="u">7</{g}parameter>\n</{g}invoke>\n</{g}tool_calls>!')
    assert _run("gigachat35", text) == ("Ok.!", [("f", {"s": " 12 ", "n": 12, "bad": "not json", "u": 7})])
    assert _run("gigachat35", text, {"f": {"properties": {"u": {"type": "string"}}}})[1][0][1]["u"] == "7"


def test_engine_names_are_wired():
    assert fm.VLLM_NAMES["ernie45"] == "hermes" and fm.VLLM_NAMES["ling3"] == "glm45"
    for name, fmt in fm.VLLM_NAMES.items():
        assert fmt in tools.available(), name
    for name, (fmt, mode, drop, sdrop) in fm.SGLANG_NAMES.items():
        assert fmt in tools.available() and mode in ("tools", "local"), name
        assert isinstance(drop, bool) and isinstance(sdrop, bool)
    assert not set(fm.VLLM_NAMES) & set(fm.VLLM_UNSERVED)
    assert not set(fm.SGLANG_NAMES) & set(fm.SGLANG_UNSERVED)
    for name in fm.PARSERS:
        assert tools.get_parser_cls(name) is fm.PARSERS[name]


# ------------------------------------------------------------------ malformed calls, errors

SECRET = "s3cr3t_payload"
BROKEN = {
    "apertus": f'<|tools_prefix|>[{{"{SECRET} bad": {{}}}}]<|tools_suffix|>',
    "hunyuan_a13b": f'<tool_calls>[{{"name": "{SECRET} bad", "arguments": {{}}}}]</tool_calls>',
    "longcat": f'<longcat_tool_call>{{"name": "{SECRET} bad", "arguments": {{}}}}</longcat_tool_call>',
    "gigachat3": f'<|function_call|>{{"name": "{SECRET} bad", "arguments": {{}}}}',
    "functiongemma": f"<start_function_call>call:{SECRET} bad{{a:<escape>1<escape>}}<end_function_call>",
    "mimo": f"<tool_call>\n<function={SECRET} bad>\n<parameter=a>1</parameter>\n</function>\n</tool_call>",
    "hunyuan": (f"<tool_calls><tool_call>{SECRET} bad<arg_key>a</arg_key><arg_value>1</arg_value>"
                "</tool_call></tool_calls>"),
    "dots": f'<dots_function_call><invoke name="{SECRET} bad"></invoke></dots_function_call>',
    "gigachat35": (f'<｜GCML｜tool_calls><｜GCML｜invoke name="{SECRET} bad"></｜GCML｜invoke>'
                   "</｜GCML｜tool_calls>"),
}
GOOD = {
    "apertus": '<|tools_prefix|>[{"ok": {"x": 1}}]<|tools_suffix|>',
    "hunyuan_a13b": '<tool_calls>[{"name": "ok", "arguments": {"x": 1}}]</tool_calls>',
    "longcat": '<longcat_tool_call>{"name": "ok", "arguments": {"x": 1}}</longcat_tool_call>',
    "gigachat3": '<|function_call|>{"name": "ok", "arguments": {"x": 1}}',
    "functiongemma": "<start_function_call>call:ok{x:<escape>1<escape>}<end_function_call>",
    "mimo": "<tool_call>\n<function=ok>\n<parameter=x>1</parameter>\n</function>\n</tool_call>",
    "hunyuan": "<tool_calls><tool_call>ok<arg_key>x</arg_key><arg_value>1</arg_value></tool_call></tool_calls>",
    "dots": '<dots_function_call><invoke name="ok"><parameter name="x">1</parameter></invoke></dots_function_call>',
    "gigachat35": ('<｜GCML｜tool_calls><｜GCML｜invoke name="ok"><｜GCML｜parameter name="x" string="false">1'
                   "</｜GCML｜parameter></｜GCML｜invoke></｜GCML｜tool_calls>"),
}
INT_X = {"ok": {"properties": {"x": {"type": "integer"}}}}


@pytest.mark.parametrize("fmt", FORMATS)
def test_malformed_call_is_skipped_and_errors_never_echo_output(fmt):
    with pytest.raises(ValueError) as e:
        tools.create(fmt).parse_complete("before " + BROKEN[fmt])
    msg = str(e.value)
    assert fmt in msg and re.search(r"offset \d+", msg) and SECRET not in msg
    text = "before " + BROKEN[fmt] + " mid " + GOOD[fmt] + " after"
    p = tools.create(fmt)
    p.set_streaming_tool_schemas(INT_X)
    r = p.parse_complete(text)
    assert [(c.name, c.arguments) for c in r.tool_calls] == [("ok", '{"x": 1}')]
    assert r.content.startswith("before ") and r.content.endswith(" after")
    # streaming never raises and ends the same way
    q = tools.create(fmt)
    q.set_streaming_tool_schemas(INT_X)
    content, calls = stream(q, list(text), with_ids=False)
    assert calls == [("ok", '{"x": 1}')] and content == r.content


@pytest.mark.parametrize("fmt", FORMATS)
def test_cut_off_call_is_completed_when_its_body_parses(fmt):
    good = GOOD[fmt]
    cut = {"apertus": good[: -len("<|tools_suffix|>")], "hunyuan_a13b": good[: -len("</tool_calls>")],
           "longcat": good[: -len("</longcat_tool_call>")], "gigachat3": good,
           "functiongemma": good[: -len("<end_function_call>")], "mimo": good.split("\n</function>")[0],
           "hunyuan": good.split("</arg_value>")[0], "dots": good.split("</parameter>")[0],
           "gigachat35": good.split("</｜GCML｜parameter>")[0]}[fmt]
    p = tools.create(fmt)
    p.set_streaming_tool_schemas(INT_X)
    r = p.parse_complete("x " + cut)
    assert [(c.name, json.loads(c.arguments)) for c in r.tool_calls] == [("ok", {"x": 1})]
    q = tools.create(fmt)
    q.set_streaming_tool_schemas(INT_X)
    assert stream(q, [cut[:5], cut[5:]], with_ids=False)[1] == [("ok", '{"x": 1}')]


# ------------------------------------------------------------------ huge and hostile payloads

def _huge(fmt: str, body: str) -> str:
    return {
        "apertus": f'<|tools_prefix|>[{{"f": {{"x": "{body}"}}}}]<|tools_suffix|>',
        "hunyuan_a13b": f'<tool_calls>[{{"name": "f", "arguments": {{"x": "{body}"}}}}]</tool_calls>',
        "longcat": f'<longcat_tool_call>{{"name": "f", "arguments": {{"x": "{body}"}}}}</longcat_tool_call>',
        "gigachat3": f'<|function_call|>{{"name": "f", "arguments": {{"x": "{body}"}}}}',
        "functiongemma": f"<start_function_call>call:f{{x:<escape>{body}<escape>}}<end_function_call>",
        "mimo": f"<tool_call>\n<function=f>\n<parameter=x>{body}</parameter>\n</function>\n</tool_call>",
        "hunyuan": (f"<tool_calls><tool_call>f<arg_key>x</arg_key><arg_value>{body}</arg_value>"
                    "</tool_call></tool_calls>"),
        "dots": (f'<dots_function_call><invoke name="f"><parameter name="x">{body}</parameter></invoke>'
                 "</dots_function_call>"),
        "gigachat35": ('<｜GCML｜tool_calls><｜GCML｜invoke name="f"><｜GCML｜parameter name="x" string="true">'
                       f"{body}</｜GCML｜parameter></｜GCML｜invoke></｜GCML｜tool_calls>"),
    }[fmt]


@pytest.mark.parametrize("fmt", FORMATS)
def test_huge_argument_finishes(fmt):
    body = ("ab cd é " * 25_000).strip()  # 200k characters
    text = "go " + _huge(fmt, body) + " end"
    r = tools.create(fmt).parse_complete(text)
    assert [(c.name, json.loads(c.arguments)) for c in r.tool_calls] == [("f", {"x": body})]
    assert r.content == "go  end"
    content, calls = stream(tools.create(fmt), [text[i:i + 97] for i in range(0, len(text), 97)], with_ids=False)
    assert content == r.content and calls == [("f", r.tool_calls[0].arguments)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_hostile_payloads_never_raise(fmt):
    deep = "[" * 1100 + "]" * 1100
    for payload in ("1" * 4400, deep, "[" * 1100, "\ud800", "\x00", '{"a": ' * 1100):
        for text in (GOOD[fmt].replace("1", payload, 1), BROKEN[fmt].replace(SECRET, payload)):
            text = "before " + text + " after"
            one = stream(tools.create(fmt), [text], with_ids=False)
            assert stream(tools.create(fmt), [text[i:i + 7] for i in range(0, len(text), 7)], with_ids=False) == one
            assert one[0].startswith("before ")
            for _, a in one[1]:
                a.encode("utf-8")
            try:
                tools.create(fmt).parse_complete(text)
            except ValueError as e:
                assert fmt in str(e)


@pytest.mark.parametrize("family,fmt", [
    ("apertus", "apertus"), ("hunyuan_a13b", "hunyuan_a13b"), ("hy_v3", "hunyuan"), ("hy_v4", "hunyuan"),
    ("mimo", "mimo"),
])
def test_ready_to_pair_with_their_family_rows(family, fmt):
    # what tests/test_structure.py asks of a Family.tool_parser pairing
    from reasoning_core.families import get_family

    fam = get_family(family)
    cls = tools.get_parser_cls(fmt)
    assert set(fam.terminators) <= set(cls.openers) or not fam.terminators
    assert (fam.start[0], fam.end[0]) in cls.think_pairs


def test_family_think_blocks_are_never_read_for_calls():
    call = '<tool_calls>[{"name": "f", "arguments": {}}]</tool_calls>'
    # Hunyuan-A13B's block ends at its </think> whatever follows
    text = "<think>\nplan " + call + "\n</think>\n<answer>\nok" + call
    assert _run("hunyuan_a13b", text) == ("<think>\nplan " + call + "\n</think>\n<answer>\nok", [("f", {})])
    text = "<think>\nplan " + call + "</think>" + call
    assert _run("hunyuan_a13b", text) == ("<think>\nplan " + call + "</think>", [("f", {})])
    ap = '<|tools_prefix|>[{"f": {}}]<|tools_suffix|>'
    assert _run("apertus", "<|inner_prefix|>x " + ap + "<|inner_suffix|>" + ap) == (
        "<|inner_prefix|>x " + ap + "<|inner_suffix|>", [("f", {})])


def test_dots_null_text_switch():
    # off by default: a value written null is the string; on (a class switch,
    # as vLLM's dots reads it): JSON null whatever the type; a JSON body as written
    text = ('<dots_function_call><invoke name="f"><parameter name="a"> NULL </parameter>'
            '<parameter name="b">nullx</parameter></invoke></dots_function_call>'
            '<dots_function_call>{"name": "g", "arguments": {"c": "null"}}</dots_function_call>')
    schemas = {"f": {"type": "object", "properties": {"a": {"type": "integer"}}}}
    on_cls = type("NullDots", (fm.DotsToolParser,), {"null_text_is_null": True})
    got = {}
    for key, p in (("off", tools.create("dots")), ("on", on_cls())):
        p.set_streaming_tool_schemas(schemas)
        got[key] = [json.loads(c.arguments) for c in p.parse_complete(text).tool_calls]
        streamed = stream(p, [text])
        assert [json.loads(a) for _i, _n, a in streamed[1]] == got[key]
    assert got["off"] == [{"a": "NULL", "b": "nullx"}, {"c": "null"}]
    assert got["on"] == [{"a": None, "b": "nullx"}, {"c": "null"}]
