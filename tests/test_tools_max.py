"""The tool-call formats added for Modular MAX 26.7's names (issue 18): deepseekv4
(DSML), gemma4, inkling, laguna, muse_glimmer, and MAX's aliases for ours.

No MAX needed here (the differential against MAX's own parsers is
tests/integrations/test_tools_max_differential.py). Per format: generated outputs
stream to the one-shot result in any chunking, and that result is what was
generated; marker soup never raises and is chunking-invariant; a malformed call
beside a valid one is skipped; errors never echo model output; total work is
linear in the output (a deterministic counter, no clock); schemas type values.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from reasoning_core import tools
from reasoning_core.tools import _base
from toolstreams import MAX_NAMES, assert_soup_consistent, stream

NEW = ("deepseekv4", "gemma4", "inkling", "laguna", "muse_glimmer")
D = "｜DSML｜"
INK = "<|content_invoke_tool_json|>"

MARKERS = [
    "\n\n<｜DSML｜tool_calls>", "<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>", "<｜DSML｜invoke", "</｜DSML｜invoke>",
    "<｜DSML｜parameter", "</｜DSML｜parameter>", "<|tool_call>", "<tool_call|>", '<|"|>', INK, "<tool_call>",
    "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<atem:function_calls>",
    "</atem:function_calls>", "<atem:invoke name=", "</atem:invoke>", "<atem:parameter name=", "</atem:parameter>",
    "<think>", "</think>", "<|channel>", "<channel|>", "<|content_thinking|>", "<|end_message|>",
]
FRAGMENTS = MARKERS + [m[: len(m) // 2] for m in MARKERS] + [
    "{", "}", "[", "]", '"', "\\", ":", ",", "\n", " ", "name", "args", "call:", "f", '"name":"f"',
    'name="f"', 'string="true"', 'string="false"', ">", "1", "true", "é", "\x00", "\ud800",
]


def test_every_max_name_resolves():
    names = {"deepseekv3", "deepseekv3_1", "deepseekv4", "gemma4", "glm45", "inkling", "kimik2_5", "laguna",
             "llama", "minimax_m2", "muse_glimmer", "qwen3_5"}
    assert names <= set(tools.available())
    assert MAX_NAMES <= names
    for n in names:
        p = tools.create(n)
        assert isinstance(p, tools.ToolParser) and p is not tools.create(n)


@pytest.mark.parametrize("alias,ours", [
    ("deepseekv3", "deepseek_v3"), ("deepseekv3_1", "deepseek_v31"), ("kimik2_5", "kimi_k2"),
    ("llama", "llama3_json"), ("qwen3_5", "qwen3_coder"),
])
def test_max_aliases_are_our_formats(alias, ours):
    assert tools.get_parser_cls(alias) is tools.get_parser_cls(ours)


# ------------------------------------------------------------------ rendering

def _gemma(v) -> str:
    if isinstance(v, str):
        return '<|"|>' + json.dumps(v, ensure_ascii=False)[1:-1].replace('\\"', '"') + '<|"|>'
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{_gemma(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(_gemma(x) for x in v) + "]"
    return json.dumps(v)


def _bare(v) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def render(fmt: str, calls, style: int = 0) -> str:
    out = []
    for name, args in calls:
        if fmt == "deepseekv4":
            params = "\n".join(
                f'<{D}parameter name="{k}" string="{"true" if isinstance(v, str) else "false"}">{_bare(v)}</{D}parameter>'
                for k, v in args.items())
            out.append(f'<{D}invoke name="{name}">\n{params}\n</{D}invoke>')
        elif fmt == "gemma4":
            out.append(f"<|tool_call>call:{name}{_gemma(args)}<tool_call|>")
        elif fmt == "inkling":
            body = {"args": args, "name": name} if style % 3 == 2 else {"name": name, "args": args}
            sep = (",", ":") if style % 2 else (", ", ": ")
            out.append(name + INK + json.dumps(body, ensure_ascii=bool(style % 2), separators=sep))
        elif fmt == "laguna":
            nl = "\n" if style % 2 else ""
            params = "".join(f"<arg_key>{k}</arg_key>{nl}<arg_value>{_bare(v)}</arg_value>{nl}" for k, v in args.items())
            out.append(f"<tool_call>{name}{nl or chr(10)}{params}</tool_call>")
        elif fmt == "muse_glimmer":
            params = "".join(f'<atem:parameter name="{k}">{_bare(v)}</atem:parameter>\n' for k, v in args.items())
            out.append(f'<atem:invoke name="{name}">\n{params}</atem:invoke>\n')
    if fmt == "deepseekv4":
        return f"\n\n<{D}tool_calls>\n" + "\n".join(out) + f"\n</{D}tool_calls>"
    if fmt == "muse_glimmer":
        return "<atem:function_calls>\n" + "".join(out) + "</atem:function_calls>"
    return "".join(out)


def _canon(args) -> str:
    text = json.dumps(args, ensure_ascii=False)
    return re.sub("[\ud800-\udfff]", lambda m: "\\u%04x" % ord(m.group()), text)


# ------------------------------------------------------------------ generated outputs

def _no_markers(s: str) -> bool:
    return not any(m in s for m in MARKERS) and "｜" not in s and "<|" not in s and "|>" not in s


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
    keys = bare_keys if fmt == "gemma4" else st.text(st.sampled_from(list("abk_é 1-")), min_size=1, max_size=6)
    args = draw(st.dictionaries(keys, values, max_size=4))
    if fmt in ("laguna", "muse_glimmer"):
        for k, v in args.items():
            assume(k.strip() == k)
            assume(_no_markers(_bare(v)))
    if fmt == "gemma4":
        # Gemma's strings are JSON-escaped inside <|"|>, except a raw quote
        assume("\ud800" not in json.dumps(args, ensure_ascii=False))
    return draw(names), args


def content_text(fmt):
    return st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=6).map("".join).filter(_no_markers)


@st.composite
def output(draw, fmt):
    """(text, expected content, expected [(name, arguments)], schemas)."""
    pieces = draw(st.lists(st.sampled_from(["content", "think", "calls"]), max_size=6))
    pieces = [k for i, k in enumerate(pieces) if k != "content" or i == 0 or pieces[i - 1] != "content"]
    text, content, calls, typing = [], [], [], {}
    for kind in pieces:
        if kind == "calls":
            group = draw(st.lists(call(fmt), min_size=1, max_size=3))
            text.append(render(fmt, group, draw(st.integers(0, 5))))
            for name, args in group:
                calls.append((name, _canon(args)))
                seen = typing.setdefault(name, {})
                for k, v in args.items():
                    assume(seen.setdefault(k, isinstance(v, str)) == isinstance(v, str))
            continue
        if kind == "think":
            o, c = draw(st.sampled_from([("<think>", "</think>")]
                                        + ([("<|channel>", "<channel|>")] if fmt == "gemma4" else [])))
            inner = draw(content_text(fmt))
            if draw(st.booleans()):
                inner += render(fmt, draw(st.lists(call(fmt), min_size=1, max_size=2)), 1)
            assume(c not in inner)
            piece = o + inner + c
        else:
            piece = draw(content_text(fmt))
        text.append(piece)
        content.append(piece)
    # string parameters are declared strings: the XML-style values stay verbatim
    schemas = {n: {"properties": {k: {"type": "string"} for k, s in t.items() if s}} for n, t in typing.items()}
    return "".join(text), "".join(content), calls, schemas


def chunked(data, text):
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=30), label="cuts")
    cuts = sorted(set(c for c in cuts if 0 < c < len(text)))
    return [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]


@pytest.mark.parametrize("fmt", NEW)
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


@pytest.mark.parametrize("fmt", NEW)
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


def test_deepseekv4_values_follow_the_string_flag():
    text = (f'Done.\n\n<{D}tool_calls>\n<{D}invoke name="f">\n'
            f'<{D}parameter name="s" string="true"> 12 </{D}parameter>\n'
            f'<{D}parameter name="n" string="false">12</{D}parameter>\n'
            f'<{D}parameter name="o" string="false">{{"a": [1, "x"]}}</{D}parameter>\n'
            f'<{D}parameter name="bad" string="false">not json</{D}parameter>\n'
            f'<{D}parameter name="untyped">7</{D}parameter>\n'
            f'</{D}invoke>\n</{D}tool_calls>')
    assert _run("deepseekv4", text) == ("Done.", [("f", {"s": " 12 ", "n": 12, "o": {"a": [1, "x"]},
                                                         "bad": "not json", "untyped": 7})])
    # a parameter without the flag is typed by the schema
    assert _run("deepseekv4", text, {"f": {"properties": {"untyped": {"type": "string"}}}})[1][0][1]["untyped"] == "7"
    # the block without its two newlines is read too; text after it is content
    text2 = f'A<{D}tool_calls><{D}invoke name="g"></{D}invoke></{D}tool_calls>B'
    assert _run("deepseekv4", text2) == ("AB", [("g", {})])


def test_gemma4_values_and_content_between_calls():
    text = ('Sure.<|tool_call>call:f{s:<|"|>a "q" \\n<|"|>,n:-1.5e3,b:false,z:null,o:{k:<|"|>v}<|"|>},'
            'l:[1,<|"|>x<|"|>,[true]],e:}<tool_call|> and <|tool_call>call:g{}<tool_call|>.')
    assert _run("gemma4", text) == ("Sure. and .", [
        ("f", {"s": 'a "q" \n', "n": -1.5e3, "b": False, "z": None, "o": {"k": "v}"}, "l": [1, "x", [True]],
               "e": ""}),
        ("g", {}),
    ])
    # a bare value of a string parameter stays a string
    assert _run("gemma4", "<|tool_call>call:f{zip:01234,n:5}<tool_call|>",
                {"f": {"properties": {"zip": {"type": "string"}, "n": {"type": "string"}}}})[1] == [
        ("f", {"zip": "01234", "n": "5"})]
    # thinking is never read for calls
    t = '<|channel>thought <|tool_call>call:x{a:1}<tool_call|><channel|>ok'
    assert _run("gemma4", t) == (t, [])


def test_inkling_name_before_the_marker_is_the_header():
    text = ('I will look.\nget_weather' + INK + '{"name":"get_weather","args":{"city":"Paris"}}'
            ' then ' + 'f' + INK + '{"args":{"x":1},"name":"f"}' + ' done')
    assert _run("inkling", text) == ("I will look.\n then  done", [("get_weather", {"city": "Paris"}), ("f", {"x": 1})])
    # a name-like tail with no marker after it is content
    assert _run("inkling", "call get_weather") == ("call get_weather", [])
    # a header that is not the call's name stays content
    assert _run("inkling", "other" + INK + '{"name":"f","args":{}}') == ("other", [("f", {})])


def test_laguna_values_are_trimmed_and_python_literals_read():
    text = ("<tool_call>f\n<arg_key>a</arg_key>\n<arg_value> hi there </arg_value>\n"
            "<arg_key>b</arg_key>\n<arg_value>True</arg_value>\n<arg_key>c</arg_key>\n<arg_value>None</arg_value>\n"
            "<arg_key>d</arg_key>\n<arg_value> [1, 2] </arg_value>\n<arg_key>e</arg_key>\n<arg_value>12</arg_value>\n"
            "</tool_call>")
    assert _run("laguna", text) == ("", [("f", {"a": "hi there", "b": True, "c": None, "d": [1, 2], "e": 12})])
    schema = {"f": {"properties": {"a": {"type": "string"}, "e": {"type": "string"}, "b": {"type": "string"}}}}
    assert _run("laguna", text, schema)[1][0][1] == {"a": " hi there ", "b": "True", "c": None, "d": [1, 2], "e": "12"}


def test_muse_glimmer_values_are_kept_byte_for_byte():
    text = ('Hi<atem:function_calls>\n<atem:invoke name="f">\n<atem:parameter name="s">\n two \n</atem:parameter>\n'
            '<atem:parameter name="n" kind="int">5</atem:parameter>\n'
            '<atem:parameter name="o">{"a": [true]}</atem:parameter>\n</atem:invoke>\n</atem:function_calls>!')
    assert _run("muse_glimmer", text) == ("Hi!", [("f", {"s": "\n two \n", "n": 5, "o": {"a": [True]}})])
    assert _run("muse_glimmer", text, {"f": {"properties": {"n": {"type": "string"}}}})[1][0][1]["n"] == "5"


# ------------------------------------------------------------------ malformed calls, errors

SECRET = "s3cr3t_payload"
BROKEN = {
    "deepseekv4": f'\n\n<{D}tool_calls>\n<{D}invoke name="{SECRET} bad">\n</{D}invoke>\n</{D}tool_calls>',
    "gemma4": f"<|tool_call>call:{SECRET} bad{{a:1}}<tool_call|>",
    "inkling": f'f{INK}{{"name": "{SECRET} bad", "args": {{}}}}',
    "laguna": f"<tool_call>{SECRET} bad\n<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
    "muse_glimmer": f'<atem:function_calls><atem:invoke name="{SECRET} bad"></atem:invoke></atem:function_calls>',
}
GOOD = {
    "deepseekv4": f'\n\n<{D}tool_calls>\n<{D}invoke name="ok">\n<{D}parameter name="x" string="false">1</{D}parameter>\n</{D}invoke>\n</{D}tool_calls>',
    "gemma4": "<|tool_call>call:ok{x:1}<tool_call|>",
    "inkling": f'ok{INK}{{"name": "ok", "args": {{"x": 1}}}}',
    "laguna": "<tool_call>ok\n<arg_key>x</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
    "muse_glimmer": '<atem:function_calls><atem:invoke name="ok"><atem:parameter name="x">1</atem:parameter></atem:invoke></atem:function_calls>',
}


@pytest.mark.parametrize("fmt", NEW)
def test_malformed_call_is_skipped_and_errors_never_echo_output(fmt):
    with pytest.raises(ValueError) as e:
        tools.create(fmt).parse_complete("before " + BROKEN[fmt])
    msg = str(e.value)
    assert fmt in msg and re.search(r"offset \d+", msg) and SECRET not in msg
    text = "before " + BROKEN[fmt] + " mid " + GOOD[fmt] + " after"
    r = tools.create(fmt).parse_complete(text)
    assert [(c.name, c.arguments) for c in r.tool_calls] == [("ok", '{"x": 1}')]
    assert r.content.startswith("before ") and r.content.endswith(" after")
    # streaming never raises and ends the same way
    content, calls = stream(tools.create(fmt), list(text), with_ids=False)
    assert calls[-1] == ("ok", '{"x": 1}') and content == r.content


@pytest.mark.parametrize("fmt", NEW)
def test_cut_off_call_is_completed_when_its_body_parses(fmt):
    good = GOOD[fmt]
    cut = {"deepseekv4": good.split(f"\n</{D}invoke>")[0], "gemma4": good[: -len("<tool_call|>")],
           "inkling": good, "laguna": good[: -len("\n</tool_call>")],
           "muse_glimmer": good.split("</atem:parameter>")[0]}[fmt]
    r = tools.create(fmt).parse_complete("x " + cut)
    assert [(c.name, json.loads(c.arguments)) for c in r.tool_calls] == [("ok", {"x": 1})]
    assert stream(tools.create(fmt), [cut[:5], cut[5:]], with_ids=False)[1] == [("ok", '{"x": 1}')]


# ------------------------------------------------------------------ linear work

def _counting(cls, counter):
    class Counting(cls):
        def __setattr__(self, key, value):
            if isinstance(value, str):
                counter[0] += len(value)
            super().__setattr__(key, value)

    Counting.__name__ = Counting.__qualname__ = cls.__name__
    return Counting


def _huge(fmt: str, n: int, kind: str):
    """(head, body, tail): one call whose argument is ``body`` (n characters)."""
    if kind == "string":
        body = "ab cd é " * (n // 8)
        g = {"deepseekv4": (f'\n\n<{D}tool_calls>\n<{D}invoke name="f">\n<{D}parameter name="x" string="true">',
                            f"</{D}parameter>\n</{D}invoke>\n</{D}tool_calls>"),
             "gemma4": ('<|tool_call>call:f{x:<|"|>', '<|"|>}<tool_call|>'),
             "inkling": (f'f{INK}{{"name": "f", "args": {{"x": "', '"}}'),
             "laguna": ("<tool_call>f\n<arg_key>x</arg_key>\n<arg_value>", "</arg_value>\n</tool_call>"),
             "muse_glimmer": ('<atem:function_calls><atem:invoke name="f"><atem:parameter name="x">',
                              "</atem:parameter></atem:invoke></atem:function_calls>")}[fmt]
        return g[0], body, g[1]
    if kind == "number":
        body = "7" * n
        g = {"deepseekv4": (f'\n\n<{D}tool_calls>\n<{D}invoke name="f">\n<{D}parameter name="x" string="false">',
                            f"</{D}parameter>\n</{D}invoke>\n</{D}tool_calls>"),
             "gemma4": ("<|tool_call>call:f{x:", "}<tool_call|>"),
             "inkling": (f'f{INK}{{"name": "f", "args": {{"x": ', "}}"),
             "laguna": ("<tool_call>f\n<arg_key>x</arg_key>\n<arg_value>", "</arg_value>\n</tool_call>"),
             "muse_glimmer": ('<atem:function_calls><atem:invoke name="f"><atem:parameter name="x">',
                              "</atem:parameter></atem:invoke></atem:function_calls>")}[fmt]
        return g[0], body, g[1]
    # many parameters / elements
    args = {f"k{i}": i for i in range(n // 10)}
    return "go ", render(fmt, [("f", args)]), ""


def _work(monkeypatch, fmt, kind, n, chars):
    counter = [0]
    monkeypatch.setattr(_base, "JsonReader", _counting(_base.JsonReader, counter))
    monkeypatch.setattr(_base, "ParsedToolCallDelta", _counting(_base.ParsedToolCallDelta, counter))
    p = _counting(tools.get_parser_cls(fmt), counter)()
    head, body, tail = _huge(fmt, n, kind)
    p.parse_delta(head)
    if chars:
        for ch in body:
            p.parse_delta(ch)
    else:
        p.parse_delta(body)
    p.parse_delta(tail)
    out = p.finish()
    assert isinstance(out, list)
    if not chars:
        r = tools.create(fmt).parse_complete(head + body + tail)
        assert len(r.tool_calls) == 1
    return counter[0]


@pytest.mark.parametrize("kind,chars", [("string", True), ("number", True), ("many", False), ("string", False)])
@pytest.mark.parametrize("fmt", NEW)
def test_huge_arguments_cost_linear_work(monkeypatch, fmt, kind, chars):
    small = _work(monkeypatch, fmt, kind, 4000, chars)
    big = _work(monkeypatch, fmt, kind, 8000, chars)
    assert small > 0
    assert big <= 2.5 * small, (small, big)


@pytest.mark.parametrize("fmt", NEW)
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
    ("gemma4", "gemma4"), ("inkling", "inkling"), ("poolside_v1", "laguna"), ("muse_glimmer", "muse_glimmer"),
    ("deepseek_v3", "deepseekv4"),
])
def test_ready_to_pair_with_their_family_rows(family, fmt):
    # what tests/test_structure.py asks of a Family.tool_parser pairing
    from reasoning_core.families import get_family

    fam = get_family(family)
    cls = tools.get_parser_cls(fmt)
    if fmt != "deepseekv4":  # V4's DSML opener is not the V3 row's terminator
        assert set(fam.terminators) <= set(cls.openers) or not fam.terminators
    assert (fam.start[0], fam.end[0]) in cls.think_pairs


def test_muse_self_channel_is_never_read_for_calls():
    block = GOOD["muse_glimmer"]
    text = "<|start|>assistant to=self<|message|>plan: " + block + "<|eom|>" + block
    content, calls = _run("muse_glimmer", text)
    assert content == "<|start|>assistant to=self<|message|>plan: " + block + "<|eom|>"
    assert calls == [("ok", {"x": 1})]
