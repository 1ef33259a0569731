"""The channel/markup tool formats (``reasoning_core.tools._markup_formats``).

No engine needed (the differential against vLLM's and SGLang's own parsers is
tests/integrations/test_tools_markup_differential.py). Per format: generated
outputs parse to what was generated and stream to the one-shot result in any
chunking; marker soup never raises, is chunking-invariant and conserves content;
a malformed call beside a valid one is skipped; a huge argument finishes; a
schema types values.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reasoning_core import tools
from reasoning_core.tools import _markup_formats as mf
from toolstreams import stream

FORMATS = sorted(mf.PARSERS)


def test_names_resolve_and_engine_names_point_at_formats():
    for n in mf.PARSERS:
        assert isinstance(tools.create(n), tools.BaseToolParser)
    for fmt in mf.VLLM_NAMES.values():
        assert fmt in tools.available()
    for fmt, mode, _a, _b in mf.SGLANG_NAMES.values():
        assert fmt in tools.available() and mode in ("tools", "local")


# ------------------------------------------------------------------ rendering


def _bare(v) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


MM = "]<]minimax[>["


def _mm(v) -> str:
    if isinstance(v, dict):
        return "".join(f"{MM}<{k}>{_mm(x)}{MM}</{k}>" for k, x in v.items())
    if isinstance(v, list):
        return "".join(f"{MM}<item>{_mm(x)}{MM}</item>" for x in v)
    return "null" if v is None else _bare(v)


def render(fmt: str, calls, style: int = 0) -> str:
    out = []
    for name, args in calls:
        if fmt == "seed_oss":
            params = "".join(f"<parameter={k}>\n{_bare(v)}\n</parameter>\n" for k, v in args.items())
            body = f"<function={name}>\n{params}</function>"
            out.append(body if style == 1 else f"<seed:tool_call>\n{body}\n</seed:tool_call>")
        elif fmt == "cohere_command":
            obj = {"tool_call_id": str(len(out)), "tool_name": name, "parameters": args}
            if style == 2:
                obj = {"name": name, "arguments": args}
            out.append(json.dumps(obj, ensure_ascii=style == 1, indent=4 if style == 0 else None))
        elif fmt == "gpt_oss":
            js = json.dumps(args, ensure_ascii=style == 1)
            if style == 2:
                out.append(f"<|start|>assistant to=functions.{name}<|channel|>commentary json<|message|>{js}<|call|>")
            else:
                start = "<|start|>assistant" if style == 0 else ""
                out.append(f"{start}<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{js}<|call|>")
        elif fmt == "minimax_m3":
            params = "".join(f"{MM}<{k}>{_mm(v)}{MM}</{k}>\n" for k, v in args.items())
            q = "'" if style == 1 else '"'
            out.append(f"{MM}<invoke name={q}{name}{q}>\n{params}{MM}</invoke>\n")
        elif fmt == "plamo3":
            js = json.dumps(args, ensure_ascii=style == 1, indent=2 if style == 2 else None)
            out.append(f"<|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>{name}"
                       "<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json"
                       f"<|plamo:msg|>{js}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>")
        elif fmt == "k2_horizon":
            if style == 2:
                body = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
            else:
                body = name + "\n" + "".join(
                    f"<ifm|arg_key>{k}</ifm|arg_key>"
                    + (f"<ifm|arg_type>{_type_of(v)}</ifm|arg_type>" if style == 1 else "")
                    + f"<ifm|arg_value>{_bare(v)}</ifm|arg_value>\n" for k, v in args.items())
            out.append(f"<ifm|tool_call>{body}</ifm|tool_call>")
        elif fmt == "kimi_k3":
            params = "".join(f'<|open|>argument key="{k}" type="{_type_of(v)}"<|sep|>{_bare(v)}<|close|>argument<|sep|>'
                             for k, v in args.items())
            out.append(f'<|open|>call tool="{name}" index="{len(out) + 1}"<|sep|>{params}<|close|>call<|sep|>')
        elif fmt == "step3":
            params = "".join(f'<steptml:parameter name="{k}">{_bare(v)}</steptml:parameter>\n'
                             for k, v in args.items())
            out.append(f'<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{name}">\n{params}'
                       "</steptml:invoke><｜tool_call_end｜>")
        else:  # pragma: no cover
            raise KeyError(fmt)
    if fmt == "minimax_m3":
        return f"{MM}<tool_call>\n" + "".join(out) + f"{MM}</tool_call>"
    if fmt == "plamo3":
        return "<|plamo:begin_tool_requests:plamo|>" + "".join(out) + "<|plamo:end_tool_requests:plamo|>"
    if fmt == "k2_horizon":
        return "<ifm|tool_calls>\n" + "\n".join(out) + "\n</ifm|tool_calls>" if style != 1 else "".join(out)
    if fmt == "kimi_k3":
        nl = "\n" if style == 1 else ""
        return f"<|open|>tools<|sep|>{nl}" + nl.join(out) + f"{nl}<|close|>tools<|sep|>"
    if fmt == "step3":
        return "<｜tool_calls_begin｜>\n" + "\n".join(out) + "\n<｜tool_calls_end｜>"
    if fmt == "cohere_command":
        body = out[0] if style == 2 and len(out) == 1 else "[\n" + ",\n".join(out) + "\n]"
        return "<|START_ACTION|>" + body + "<|END_ACTION|>"
    return "".join(out)


# per format: markup a content string must not contain, and the markers of the format
CONTENT_AVOID = {
    "gpt_oss": ("<|",),
    "minimax_m3": (MM,),
    "plamo3": ("<|plamo:",),
    "k2_horizon": ("<ifm|",),
    "kimi_k3": ("<|open|>", "<|close|>"),
    "step3": ("<｜tool_calls_begin｜>", "<think>"),
    "cohere_command": ("<|START_ACTION|>", "<|START_THINKING|>"),
    "seed_oss": ("<seed:tool_call>", "<function=", "<seed:think>"),
}
MARKERS = {
    "gpt_oss": ["<|start|>assistant", "<|channel|>", "commentary", " to=functions.f", "<|constrain|>json",
                "<|message|>", "<|call|>", "<|end|>", "<|return|>", "final", "<|channel|>analysis<|message|>"],
    "minimax_m3": [MM, MM + "<tool_call>", MM + "</tool_call>", MM + '<invoke name="f">', MM + "</invoke>",
                   MM + "<a>", MM + "</a>", MM + "<item>", MM + "</item>", "<mm:think>", "</mm:think>"],
    "plamo3": ["<|plamo:begin_tool_requests:plamo|>", "<|plamo:end_tool_requests:plamo|>",
               "<|plamo:begin_tool_request:plamo|>", "<|plamo:end_tool_request:plamo|>",
               "<|plamo:begin_tool_name:plamo|>", "<|plamo:end_tool_name:plamo|>",
               "<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>",
               "<|plamo:end_tool_arguments:plamo|>", "<|plamo:begin_think:plamo|>", "<|plamo:end_think:plamo|>"],
    "k2_horizon": ["<ifm|tool_calls>", "</ifm|tool_calls>", "<ifm|tool_call>", "</ifm|tool_call>", "<ifm|arg_key>",
                   "</ifm|arg_key>", "<ifm|arg_type>", "</ifm|arg_type>", "<ifm|arg_value>", "</ifm|arg_value>",
                   "<ifm|think>", "</ifm|think>", "<ifm|think_fast>", "</ifm|think_fast>", '{"name": "f"',
                   '"arguments": {'],
    "kimi_k3": ["<|open|>tools<|sep|>", "<|close|>tools<|sep|>", "<|open|>call", ' tool="f"', "<|sep|>",
                "<|close|>call<|sep|>", "<|open|>argument", ' key="a" type="string"', ' key="b" type="integer"',
                "<|close|>argument<|sep|>", "<|open|>response<|sep|>", "<|close|>response<|sep|>",
                "<|close|>message<|sep|>", "<|open|>think<|sep|>", "<|close|>think<|sep|>"],
    "step3": ["<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "<｜tool_call_begin｜>", "<｜tool_call_end｜>",
              "<｜tool_sep｜>", "function", '<steptml:invoke name="f">', "</steptml:invoke>",
              '<steptml:parameter name="a">', "</steptml:parameter>", "<think>", "</think>"],
    "cohere_command": ["<|START_ACTION|>", "<|END_ACTION|>", "<|START_THINKING|>", "<|END_THINKING|>",
                       '"tool_name": "f"', '"parameters": {', '"tool_call_id": "0"', "<|START_RESPONSE|>"],
    "seed_oss": ["<seed:tool_call>", "</seed:tool_call>", "<function=", "</function>", "<parameter=",
                 "</parameter>", "<seed:think>", "</seed:think>", ">", "\n"],
}
THINK = {"gpt_oss": ("<|channel|>analysis<|message|>", "<|end|>"),
         "minimax_m3": ("<mm:think>", "</mm:think>"),
         "plamo3": ("<|plamo:begin_think:plamo|>", "<|plamo:end_think:plamo|>"),
         "k2_horizon": ("<ifm|think_fast>", "</ifm|think_fast>"),
         "kimi_k3": ("<|open|>think<|sep|>", "<|close|>think<|sep|>"),
         "step3": ("<think>", "</think>"),
         "cohere_command": ("<|START_THINKING|>", "<|END_THINKING|>"),
         "seed_oss": ("<seed:think>", "</seed:think>")}

_names = st.sampled_from(["get_weather", "f", "search-web", "A1", "tool_9"])
_keys = st.sampled_from(["a", "city", "n", "k_1", "x-y", "日本"])
_plain = st.text(st.sampled_from(list("ab xyz Q09_-.,:;!?'é中😀\t\n/=()")), min_size=1, max_size=20)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False, allow_infinity=False)
    | _plain,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_keys, kids, max_size=3),
    max_leaves=6,
)


@st.composite
def xml_string(draw):
    """A string value no XML-style format can mistake for JSON: trimmed, not JSON."""
    s = draw(_plain).strip()
    if not s:
        return "text"
    try:
        json.loads(s)
        ok = False
    except ValueError:
        ok = bool(s) and s not in ("True", "False", "None")
    return s if ok else ("text " + s).strip()


_scalar = st.booleans() | st.integers(-10**20, 10**20) | st.floats(-1e6, 1e6, allow_nan=False)


@st.composite
def call(draw, fmt):
    # a top-level string is trimmed and not JSON-like (XML-style formats trim values);
    # MiniMax M3's nested values depend on nested schemas (test_minimax_m3_nested_values)
    values = xml_string() | (_scalar if fmt == "minimax_m3" else _json.filter(lambda v: not isinstance(v, str)))
    args = draw(st.dictionaries(_keys, values, max_size=4))
    return draw(_names), args


def _canon(args) -> str:
    return json.dumps(args, ensure_ascii=False)


def _type_of(v) -> str:
    if isinstance(v, bool):
        return "boolean"
    for t, name in ((str, "string"), (int, "integer"), (float, "number"), (list, "array"), (dict, "object")):
        if isinstance(v, t):
            return name
    return "null"


@st.composite
def output(draw, fmt):
    """(text, content, calls, schemas): the schema declares each parameter's type
    as generated (the first one seen for a tool and key)."""
    text, content, calls = [], [], []
    seen: dict = {}
    for kind in draw(st.lists(st.sampled_from(["text", "calls", "think"]), max_size=5)):
        if kind == "calls":
            group = draw(st.lists(call(fmt), min_size=1, max_size=3))
            if any(seen.setdefault((n, k), _type_of(v)) != _type_of(v) for n, a in group for k, v in a.items()):
                continue
            text.append(render(fmt, group, draw(st.integers(0, 2))))
            calls.extend((n, json.loads(_canon(a))) for n, a in group)
            continue
        piece = draw(_plain)
        if kind == "think":
            o, c = THINK[fmt]
            piece = o + piece + render(fmt, [draw(call(fmt))]) + c
        elif any(m in piece for m in CONTENT_AVOID[fmt]):
            continue
        text.append(piece)
        content.append(piece)
    schemas: dict = {}
    for (n, k), t in seen.items():
        schemas.setdefault(n, {"type": "object", "properties": {}})["properties"][k] = {"type": t}
    return "".join(text), "".join(content), calls, schemas


def chunked(data, text):
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=30), label="cuts")
    cuts = sorted(set(c for c in cuts if 0 < c < len(text)))
    return [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]


def _calls(pairs):
    return [(n, json.loads(a)) for n, a in pairs]


@pytest.mark.parametrize("fmt", FORMATS)
@given(data=st.data())
def test_any_chunking_streams_to_the_one_shot_result(fmt, data):
    text, content, calls, schemas = data.draw(output(fmt), label="output")
    p = tools.create(fmt)
    p.set_streaming_tool_schemas(schemas)
    full = p.parse_complete(text)
    assert (full.content or "") == content
    assert _calls((c.name, c.arguments) for c in full.tool_calls) == calls
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", c.id) for c in full.tool_calls)
    q = tools.create(fmt)
    q.set_streaming_tool_schemas(schemas)
    got = stream(q, chunked(data, text), with_ids=False)
    assert got[0] == content
    assert got[1] == [(c.name, c.arguments) for c in full.tool_calls]


@pytest.mark.parametrize("fmt", FORMATS)
@given(data=st.data())
def test_marker_soup_is_chunking_invariant_and_conserves_content(fmt, data):
    frags = MARKERS[fmt] + [m[: len(m) // 2] for m in MARKERS[fmt]] + [
        "{", "}", "[", "]", '"', "\\", ":", ",", " ", "f", "1", "true", "é", "\x00", "\ud800"]
    text = data.draw(st.lists(st.sampled_from(frags) | st.text(max_size=3), max_size=25).map("".join), label="t")
    one = stream(tools.create(fmt), [text] if text else [], with_ids=False)
    assert stream(tools.create(fmt), chunked(data, text), with_ids=False) == one
    try:
        full = tools.create(fmt).parse_complete(text)
    except ValueError as e:
        assert fmt in str(e) and re.search(r"offset \d+", str(e))
        return
    assert (full.content or "") == one[0]
    assert [(c.name, c.arguments) for c in full.tool_calls] == one[1]
    for c in full.tool_calls:
        json.loads(c.arguments)


# ------------------------------------------------------------------ malformed, huge, typed

SECRET = "s3cr3t_payload"
BROKEN = {
    "gpt_oss": f"<|start|>assistant<|channel|>commentary to=functions.{SECRET}!bad <|constrain|>json<|message|>"
               "{}<|call|>",
    "minimax_m3": f'{MM}<tool_call>{MM}<invoke name="{SECRET} bad">{MM}<a>1{MM}</a>{MM}</invoke>{MM}</tool_call>',
    "plamo3": f"<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>"
              f"{SECRET} bad<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json"
              "<|plamo:msg|>{}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>"
              "<|plamo:end_tool_requests:plamo|>",
    "k2_horizon": f"<ifm|tool_calls><ifm|tool_call>{SECRET} bad<ifm|arg_key>a</ifm|arg_key><ifm|arg_value>1"
                  "</ifm|arg_value></ifm|tool_call></ifm|tool_calls>",
    "kimi_k3": f'<|open|>tools<|sep|><|open|>call tool="{SECRET} bad"<|sep|><|open|>argument key="a" type="string"<|sep|>'
               "x<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
    "step3": f'<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{SECRET} bad">'
             '<steptml:parameter name="a">1</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>',
    "cohere_command": f'<|START_ACTION|>[{{"tool_call_id": "0", "tool_name": "{SECRET} bad", "parameters": {{}}}}]'
                      "<|END_ACTION|>",
    "seed_oss": f"<seed:tool_call>\n<function={SECRET} bad>\n<parameter=a>\n1\n</parameter>\n</function>\n"
                "</seed:tool_call>",
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_malformed_call_is_skipped_and_errors_never_echo_output(fmt):
    with pytest.raises(ValueError) as e:
        tools.create(fmt).parse_complete("before " + BROKEN[fmt])
    msg = str(e.value)
    assert fmt in msg and re.search(r"offset \d+", msg) and SECRET not in msg
    good = render(fmt, [("ok", {"x": "one"})])
    text = "before " + BROKEN[fmt] + " mid " + good + " after"
    r = tools.create(fmt).parse_complete(text)
    assert _calls((c.name, c.arguments) for c in r.tool_calls) == [("ok", {"x": "one"})]
    assert r.content.startswith("before ") and r.content.endswith(" after")
    content, calls = stream(tools.create(fmt), list(text), with_ids=False)
    assert _calls(calls) == [("ok", {"x": "one"})] and content == r.content


@pytest.mark.parametrize("fmt", FORMATS)
def test_huge_argument_finishes(fmt):
    big = "x\u00e9 " * 70_000  # ~210k characters
    text = "Working. " + render(fmt, [("write", {"content": "start " + big + " end", "n": 3})])
    schemas = {"write": {"properties": {"content": {"type": "string"}, "n": {"type": "integer"}}}}
    p = tools.create(fmt)
    p.set_streaming_tool_schemas(schemas)
    r = p.parse_complete(text)
    assert r.content == "Working. "
    assert json.loads(r.tool_calls[0].arguments) == {"content": "start " + big + " end", "n": 3}
    n = 4096
    q = tools.create(fmt)
    q.set_streaming_tool_schemas(schemas)
    content, calls = stream(q, [text[i:i + n] for i in range(0, len(text), n)], with_ids=False)
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


def test_seed_oss_values_are_typed_by_schema():
    text = ("I'll check.\n<seed:tool_call>\n<function=f>\n<parameter=zip>\n01234\n</parameter>\n"
            "<parameter=n>\n12\n</parameter>\n<parameter=o>\n{\"a\": [1, \"中\"]}\n</parameter>\n"
            "<parameter=s>\ntwo\nlines\n</parameter>\n</function>\n</seed:tool_call>")
    schema = {"f": {"properties": {"zip": {"type": "string"}, "n": {"type": "integer"}}}}
    assert _run("seed_oss", text, schema) == (
        "I'll check.\n", [("f", {"zip": "01234", "n": 12, "o": {"a": [1, "中"]}, "s": "two\nlines"})])
    # Qwen3's own wrapper is not Seed's: it stays content
    q = text.replace("seed:tool_call", "tool_call")
    assert _run("seed_oss", q.replace("<function=", "<functio n=")) == (q.replace("<function=", "<functio n="), [])
    # reasoning is never read for calls
    t = "<seed:think>maybe <seed:tool_call>\n<function=f>\n</function>\n</seed:tool_call></seed:think>ok"
    assert _run("seed_oss", t) == (t, [])


def test_cohere_command_actions():
    text = ('<|START_THINKING|>I should look.<|END_THINKING|><|START_RESPONSE|>Sure.<|END_RESPONSE|>'
            '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "f", "parameters": {"a": [1, "中"], "n": -2.5e3}},'
            '\n    {"parameters": {"q": "x"}, "tool_call_id": "1", "tool_name": "g"},'
            '\n    {"tool_call_id": "2", "tool_name": "h"}\n]<|END_ACTION|>')
    assert _run("cohere_command", text) == (
        "<|START_THINKING|>I should look.<|END_THINKING|><|START_RESPONSE|>Sure.<|END_RESPONSE|>",
        [("f", {"a": [1, "中"], "n": -2.5e3}), ("g", {"q": "x"}), ("h", {})])
    # one object without the list; text after the list inside the block is dropped
    assert _run("cohere_command", 'A<|START_ACTION|>{"tool_name": "f", "parameters": {}} junk<|END_ACTION|>B') == (
        "AB", [("f", {})])
    # a broken second action keeps the first call; the block's rest is dropped
    assert _run("cohere_command", '<|START_ACTION|>[{"tool_name": "f", "parameters": {"a": 1}}, '
                '{"tool_name": "g", "parameters": [1]}]<|END_ACTION|>ok') == ("ok", [("f", {"a": 1})])
    # reasoning is never read for calls
    t = '<|START_THINKING|><|START_ACTION|>[{"tool_name": "f", "parameters": {}}]<|END_ACTION|><|END_THINKING|>'
    assert _run("cohere_command", t) == (t, [])


def test_step3_values_are_strings_unless_the_schema_types_them():
    text = ('Sure.<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="f">\n'
            '<steptml:parameter name="n"> 12 </steptml:parameter>\n<steptml:parameter name="b">True</steptml:parameter>\n'
            '<steptml:parameter name="o">{"a": [1, "中"]}</steptml:parameter>\n'
            '<steptml:parameter name="s"> 12 </steptml:parameter>\n<steptml:parameter name="x">abc</steptml:parameter>\n'
            '</steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜> Done.')
    assert _run("step3", text) == ("Sure. Done.", [("f", {"n": "12", "b": "True", "o": '{"a": [1, "中"]}', "s": "12",
                                                          "x": "abc"})])
    schema = {"f": {"properties": {"n": {"type": "integer"}, "b": {"type": "boolean"}, "o": {"type": "object"},
                                   "s": {"type": "string"}, "x": {"type": "integer"}}}}
    assert _run("step3", text, schema)[1] == [("f", {"n": 12, "b": True, "o": {"a": [1, "中"]}, "s": "12",
                                                     "x": "abc"})]
    # a call of another type than "function" is skipped; the block's other calls stay
    t2 = text.replace("<｜tool_calls_begin｜>\n", "<｜tool_calls_begin｜>\n<｜tool_call_begin｜>python<｜tool_sep｜>"
                      "print(1)<｜tool_call_end｜>")
    assert _run("step3", t2)[1] == _run("step3", text)[1]


def test_kimi_k3_channels():
    text = ('<|open|>think<|sep|>Let me look.<|close|>think<|sep|><|open|>response<|sep|>On it.'
            '<|close|>response<|sep|><|open|>tools<|sep|>\n<|open|>call tool="f" index="1"<|sep|>\n'
            '<|open|>argument key="code" type="string"<|sep|> print(1)\n<|close|>argument<|sep|>\n'
            '<|open|>argument key="n" type="integer"<|sep|>12<|close|>argument<|sep|>\n'
            '<|open|>argument key="o" type="object"<|sep|>{"a": [1, "中"]}<|close|>argument<|sep|>\n'
            '<|open|>argument key="bad" type="number"<|sep|>1.2.3<|close|>argument<|sep|>\n'
            '<|open|>argument key="q&quot;k" type="string"<|sep|>v<|close|>argument<|sep|>\n'
            '<|close|>call<|sep|>\n<|open|>call tool="g" index="2"<|sep|><|close|>call<|sep|>\n'
            '<|close|>tools<|sep|><|close|>message<|sep|>')
    assert _run("kimi_k3", text) == (
        "<|open|>think<|sep|>Let me look.<|close|>think<|sep|>On it.",
        [("f", {"code": " print(1)\n", "n": 12, "o": {"a": [1, "中"]}, "bad": "1.2.3", 'q"k': "v"}), ("g", {})])
    # the response frame alone is not tool markup: no error, the frame is dropped
    assert tools.create("kimi_k3").parse_complete("Hi<|close|>response<|sep|>").content == "Hi"


def test_k2_horizon_dialects_and_values():
    text = ("<ifm|think>hm <ifm|tool_call>f</ifm|tool_call></ifm|think>\nOk.<ifm|tool_calls>\n"
            "<ifm|tool_call>f\n<ifm|arg_key>s</ifm|arg_key>\n<ifm|arg_value> two words\n</ifm|arg_value>\n"
            "<ifm|arg_key>n</ifm|arg_key>\n<ifm|arg_value> 12 </ifm|arg_value>\n"
            "<ifm|arg_key>t</ifm|arg_key><ifm|arg_type>string</ifm|arg_type><ifm|arg_value>12</ifm|arg_value>\n"
            "<ifm|arg_key>o</ifm|arg_key><ifm|arg_type>object</ifm|arg_type><ifm|arg_value>{\"a\": [1]}</ifm|arg_value>\n"
            "</ifm|tool_call>\n<ifm|tool_call>{\"name\": \"g\", \"arguments\": {\"q\": \"中\"}}</ifm|tool_call>\n"
            "<ifm|tool_call>h</ifm|tool_call>\n</ifm|tool_calls> Done.")
    think = "<ifm|think>hm <ifm|tool_call>f</ifm|tool_call></ifm|think>"
    assert _run("k2_horizon", text) == (think + "\nOk. Done.", [
        ("f", {"s": " two words\n", "n": 12, "t": "12", "o": {"a": [1]}}), ("g", {"q": "中"}), ("h", {})])
    schema = {"f": {"properties": {"s": {"type": "string"}, "n": {"type": "string"}, "t": {"type": "integer"}}}}
    assert _run("k2_horizon", text, schema)[1][0] == ("f", {"s": " two words\n", "n": " 12 ", "t": 12,
                                                           "o": {"a": [1]}})
    # a bare block outside the group is a call too
    assert _run("k2_horizon", "A<ifm|tool_call>f<ifm|arg_key>x</ifm|arg_key><ifm|arg_value>1</ifm|arg_value>"
                "</ifm|tool_call>B") == ("AB", [("f", {"x": 1})])


def test_plamo3_requests():
    P = "<|plamo:"
    text = (f"Let me see.\n{P}begin_tool_requests:plamo|>\n{P}begin_tool_request:plamo|>{P}begin_tool_name:plamo|>"
            f"f{P}end_tool_name:plamo|>{P}begin_tool_arguments:plamo|>{P}constrain|>json{P}msg|> "
            f'{{"a": [1, "中"], "n": -2.5}} {P}end_tool_arguments:plamo|>{P}end_tool_request:plamo|>\n'
            f"{P}begin_tool_request:plamo|>{P}begin_tool_name:plamo|>g h{P}end_tool_name:plamo|>"
            f"{P}begin_tool_arguments:plamo|>{P}constrain|>json{P}msg|>{{}}{P}end_tool_arguments:plamo|>"
            f"{P}end_tool_request:plamo|>{P}end_tool_requests:plamo|> Done.")
    # the second call's name is not a name: it is skipped, the first stays
    assert _run("plamo3", text) == ("Let me see.\n Done.", [("f", {"a": [1, "中"], "n": -2.5})])
    # arguments that are not an object fail the call: no call parses
    bad = text.replace('{"a": [1, "中"], "n": -2.5}', "[1]")
    with pytest.raises(ValueError, match="plamo3"):
        tools.create("plamo3").parse_complete(bad)


def test_minimax_m3_nested_values():
    def el(k, v):
        return f"{MM}<{k}>{v}{MM}</{k}>"
    body = (el("city", " Paris ") + "\n" + el("n", "12") + el("o", el("a", "1") + el("b", el("c", "x")))
            + el("l", el("item", "1") + el("item", "2.5")) + el("e", "") + el("r", "x") + el("r", "y")
            + el("m", "mixed " + el("k", "v")))
    text = f'Sure.{MM}<tool_call>\n{MM}<invoke name="f">\n{body}\n{MM}</invoke>\n{MM}</tool_call> Done.'
    # without a schema every leaf is its text
    assert _run("minimax_m3", text) == ("Sure. Done.", [("f", {
        "city": " Paris ", "n": "12", "o": {"a": "1", "b": {"c": "x"}}, "l": {"item": ["1", "2.5"]}, "e": "",
        "r": ["x", "y"], "m": {"k": "v", "$text": "mixed "}})])
    schema = {"f": {"type": "object", "properties": {
        "n": {"type": "integer"}, "o": {"type": "object", "properties": {"a": {"type": "number"}}},
        "l": {"type": "array", "items": {"type": "number"}}, "e": {"type": "array"}}}}
    assert _run("minimax_m3", text, schema)[1] == [("f", {
        "city": " Paris ", "n": 12, "o": {"a": 1, "b": {"c": "x"}}, "l": [1, 2.5], "e": [], "r": ["x", "y"],
        "m": {"k": "v", "$text": "mixed "}})]
    # a malformed element ends the arguments; the elements before it stay
    broken = text.replace(el("n", "12"), f"{MM}<n>12{MM}</x>")
    assert _run("minimax_m3", broken)[1] == [("f", {"city": " Paris "})]
    # deep nesting is read without recursion up to the engines' limit
    deep = "".join(f"{MM}<d>" for _ in range(200)) + "x" + "".join(f"{MM}</d>" for _ in range(200))
    r = _run("minimax_m3", f'{MM}<tool_call>{MM}<invoke name="f">{deep}{MM}</invoke>{MM}</tool_call>')
    assert r[1] == [("f", {})]


def test_gpt_oss_messages():
    text = ("<|channel|>analysis<|message|>Need weather. <|channel|>commentary to=functions.x<|message|>{}<|end|>"
            "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"
            '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
            '{"city": "中", "n": [1, 2.5]}<|call|>'
            "<|start|>assistant to=functions.ping<|channel|>commentary json<|message|><|call|>"
            "<|start|>assistant<|channel|>final<|message|>Done.<|return|>")
    assert _run("gpt_oss", text) == (
        "<|channel|>analysis<|message|>Need weather. <|channel|>commentary to=functions.x<|message|>{}<|end|>"
        "Checking.Done.", [("get_weather", {"city": "中", "n": [1, 2.5]}), ("ping", {})])
    # a message to the user alone is content, not tool markup (no error)
    assert tools.create("gpt_oss").parse_complete("<|channel|>final<|message|>Hi<|return|>").content == "Hi"


def test_minimax_m3_lone_surrogate_is_escaped_in_the_arguments():
    # found by test_hardening_tools: a raw lone surrogate in a leaf reached the arguments unescaped
    text = f'{MM}<tool_call>{MM}<invoke name="f">{MM}<a>x\ud800y{MM}</a>{MM}</invoke>{MM}</tool_call>'
    for r in (tools.create("minimax_m3").parse_complete(text).tool_calls[0].arguments,
              stream(tools.create("minimax_m3"), list(text), with_ids=False)[1][0][1]):
        assert r == '{"a": "x\\ud800y"}'
        r.encode("utf-8")
