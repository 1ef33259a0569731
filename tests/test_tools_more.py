"""The formats of ``reasoning_core.tools._more_formats``: deepseek_v32 and deepseek_v41
(DSML under other tags), trinity (hermes read through ``<think>``), iquest_q1
(GLM-4.7 pairs in IQuest's tags), and the engines' names for formats we have.

No engine needed (the differential against vLLM's and SGLang's own parsers is
tests/integrations/test_tools_more_differential.py). Per format: written vectors;
generated outputs stream to the one-shot result in any chunking and that result is
what was generated; a malformed call beside a valid one; a huge argument; values
typed by a schema; marker soup never raises.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reasoning_core import tools
from reasoning_core.tools import _more_formats as more
from toolstreams import stream

D = "｜DSML｜"
NEW = ("deepseek_v32", "deepseek_v41", "trinity", "iquest_q1", "minicpm5", "spark25", "inkling_framed", "beam")
NEW += ("muse",)
TEXT_UNTYPED = ("spark25", "beam")  # without a schema every value is its text
_TAGS = {"deepseek_v32": ("function_calls", "invoke", "parameter"),
         "deepseek_v41": (" calls", " invoke", " parameter")}


def _bare(v):
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def render(fmt, calls, nl=True):
    """``calls`` ([(name, args)]) as the format's template writes them."""
    if fmt in _TAGS:
        block, inv, par = _TAGS[fmt]
        out = []
        for name, args in calls:
            ps = "".join(f'<{D}{par} name="{k}" string="{"true" if isinstance(v, str) else "false"}">'
                         f"{_bare(v)}</{D}{par}>\n" for k, v in args.items())
            out.append(f'<{D}{inv} name="{name}">\n{ps}</{D}{inv}>\n')
        return f"\n\n<{D}{block}>\n" + "".join(out) + f"</{D}{block}>"
    if fmt == "trinity":
        return "".join(f"<tool_call>\n{json.dumps({'name': n, 'arguments': a}, ensure_ascii=False)}\n</tool_call>"
                       for n, a in calls)
    if fmt == "minicpm5":
        def xml(v):
            t = _bare(v)
            return "<![CDATA[" + t + "]]>" if nl else t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return "".join(f'<function name="{n}">' + "".join(f'<param name="{k}">{xml(v)}</param>' for k, v in a.items())
                       + "</function>" for n, a in calls)
    if fmt == "muse":
        return "".join(f"<|start|>assistant to={n}<|message|><atem:function_calls>\n<atem:invoke name=\"{n}\">\n"
                       + "".join(f'<atem:parameter name="{k}">{_bare(v)}</atem:parameter>\n' for k, v in a.items())
                       + "</atem:invoke>\n</atem:function_calls><|eom|>" for n, a in calls)
    if fmt == "beam":
        return "<|end|><|start|>assistant".join(
            f" to={n}<|channel|>analysis <|constrain|>xml<|message|>"
            + "".join(f'<rfl:parameter name="{k}">\n{_bare(v)}\n</rfl:parameter>' for k, v in a.items())
            for n, a in calls) + "<|call|>"
    if fmt == "inkling_framed":
        return "".join(f"<|message_model|>{n}<|content_invoke_tool_json|>"
                       + json.dumps({"name": n, "args": a}, ensure_ascii=False) + "<|end_message|>" for n, a in calls)
    if fmt == "spark25":
        return "".join(f"<tool_call>{n}\n" + "".join(f"<arg_key>{k}</arg_key><arg_value>{_bare(v)}</arg_value>\n"
                                                     for k, v in a.items()) + "</tool_call>" for n, a in calls)
    sep = "\n" if nl else ""
    return "".join(f"<iquest_tool_call>{n}{sep}" + "".join(
        f"<arg_key>{k}</arg_key>{sep}<arg_value>{_bare(v)}</arg_value>{sep}" for k, v in a.items())
        + "</iquest_tool_call>" for n, a in calls)


def _calls(resp):
    return [(c.name, json.loads(c.arguments)) for c in resp.tool_calls]


def _one_shot(fmt, text, schemas=None):
    p = tools.create(fmt)
    if schemas:
        p.set_streaming_tool_schemas(schemas)
    return p.parse_complete(text)


def _streamed(fmt, chunks, schemas=None):
    p = tools.create(fmt)
    if schemas:
        p.set_streaming_tool_schemas(schemas)
    content, calls = stream(p, chunks, with_ids=False)
    return content, [(n, json.loads(a)) for n, a in calls]


# ------------------------------------------------------------------ names


def test_names_resolve_and_engine_names_map_to_formats_we_have():
    for n in NEW:
        assert n in tools.available() and tools.create(n).format_name == n
    for fmt in more.VLLM_NAMES.values():
        assert fmt in tools.available()
    for fmt, mode, _drop1, _drop2 in more.SGLANG_NAMES.values():
        assert fmt in tools.available() and mode in ("tools", "local")
    assert not set(more.VLLM_NAMES) & set(more.VLLM_UNSERVED)
    assert not set(more.SGLANG_NAMES) & set(more.SGLANG_UNSERVED)


@pytest.mark.parametrize("engine_name,ours", [("qwen3_json", "hermes"), ("qwen3_xml", "qwen3_coder"),
                                              ("llama4_json", "llama3_json")])
def test_vllm_aliases(engine_name, ours):
    assert more.VLLM_NAMES[engine_name] == ours


# ------------------------------------------------------------------ vectors

VECTORS = [
    ("deepseek_v32",
     f'Checking.\n\n<{D}function_calls>\n<{D}invoke name="get_weather">\n'
     f'<{D}parameter name="location" string="true">杭州 </{D}parameter>\n'
     f'<{D}parameter name="count" string="false">5</{D}parameter>\n</{D}invoke>\n</{D}function_calls>',
     "Checking.", [("get_weather", {"location": "杭州 ", "count": 5})]),
    ("deepseek_v32", f'<{D}function_calls>\n<{D}invoke name="now"/>\n</{D}function_calls>', "", [("now", {})]),
    ("deepseek_v41",
     f'<{D} calls>\n<{D} invoke name="f">\n<{D} parameter name="a" string="false">{{"k": [1, null]}}'
     f'</{D} parameter>\n<{D} parameter name="b" string="false">not json</{D} parameter>\n'
     f"</{D} invoke>\n</{D} calls> after",
     " after", [("f", {"a": {"k": [1, None]}, "b": "not json"})]),
    # a V4 block is not a V4.1 block: its text is content
    ("deepseek_v41", f'<{D}tool_calls><{D}invoke name="f"></{D}invoke></{D}tool_calls>',
     f'<{D}tool_calls><{D}invoke name="f"></{D}invoke></{D}tool_calls>', []),
    ("trinity", '<think>plan <tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call></think>done',
     "plan done", [("f", {"a": 1})]),
    ("trinity", "<think>just thinking</think>answer", "just thinkinganswer", []),
    ("iquest_q1",
     "Sure.<iquest_tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
     "<arg_key>days</arg_key><arg_value>3</arg_value></iquest_tool_call>",
     "Sure.", [("get_weather", {"city": "Paris", "days": 3})]),
    ("minicpm5", 'Sure. <function name="f"><param name="a"> 1 </param>'
     "<param name='b'>x &amp; &lt;y&gt; &#233;</param>"
     '<param name="c"><![CDATA[ keep\n&amp; ]]></param></function> <functions> stay text',
     "Sure.  <functions> stay text", [("f", {"a": 1, "b": "x & <y> é", "c": " keep\n&amp; "})]),
    ("minicpm5", '<function name="f"><param name="a">1</function>', "", [("f", {"a": 1})]),
    ("inkling_framed", '<|content_text|>Sure.<|end_message|><|message_model|>f<|content_invoke_tool_json|>'
     '{"name": "f", "args": {"a": 1}}<|end_message|>g<|content_invoke_tool_json|>{"args": {}, "name": "g"}',
     "Sure.", [("f", {"a": 1}), ("g", {})]),
    ("inkling_framed", "<|message_model|>plain answer<|end_message|>", "plain answer", []),
    ("beam", "<|channel|>final<|message|>I want to= go<|end|><|start|>assistant to=f<|channel|>analysis "
     '<|constrain|>xml<|message|><rfl:parameter name="a">\n\nline\n</rfl:parameter><rfl:parameter name="b">\n7'
     "\n</rfl:parameter><|call|>",
     "<|channel|>final<|message|>I want to= go<|end|><|start|>assistant", [("f", {"a": "\nline", "b": "7"})]),
    ("muse", ' to=self<|message|>hmm <atem:invoke name="no">x</atem:invoke><|eom|>\n<|start|>assistant to=f'
     '<|message|><atem:function_calls><atem:invoke name="f"><atem:parameter name="a">1</atem:parameter>'
     "</atem:invoke></atem:function_calls><|eom|><|start|>assistant to=user<|message|>Done.<|eot|>",
     'hmm <atem:invoke name="no">x</atem:invoke>\nDone.', [("f", {"a": 1})]),
    ("muse", "Plain <|start|>assistant to=f<|message|>prose<|eot|> after",
     "Plain <|start|>assistant to=f<|message|>prose after", []),
    # Spark 2.5 without a schema: every value is its text, except null
    ("spark25", "Ok.<tool_call>f\n<arg_key>a</arg_key><arg_value>1</arg_value>\n<arg_key>b</arg_key>"
     "<arg_value>\n x \n</arg_value>\n<arg_key>c</arg_key><arg_value>NULL</arg_value>\n</tool_call> bye",
     "Ok. bye", [("f", {"a": "1", "b": "\n x \n", "c": None})]),
    ("iquest_q1", "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
     "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>", []),
]


@pytest.mark.parametrize("fmt,text,content,want", VECTORS)
def test_vectors(fmt, text, content, want):
    r = _one_shot(fmt, text)
    assert _calls(r) == want and (r.content or "") == content
    for n in (1, 2, 7):
        assert _streamed(fmt, [text[i:i + n] for i in range(0, len(text), n)]) == (content, want)


# ------------------------------------------------------------------ generated outputs, any chunking

keys = st.text(st.sampled_from(list("abk_é1-")), min_size=1, max_size=6)
strings = st.text(st.sampled_from(list('ab xé中😀{}[]1,:"\\\n\t') + ["&", "'"]), max_size=10)
scalars = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(-1e9, 1e9) | strings
values = st.recursive(scalars, lambda ch: st.lists(ch, max_size=3) | st.dictionaries(keys, ch, max_size=3),
                      max_leaves=6)
names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,12}", fullmatch=True)
prose = st.text(st.sampled_from(list("ab .,!é中\n")), max_size=12)


def _xml_safe(fmt, args):
    """Values the text formats can carry: no closing tag in them; untyped bare
    strings must not read as JSON (a schema would decide); MiniCPM5 trims text."""
    out = {}
    for k, v in args.items():
        if fmt in ("iquest_q1", "minicpm5") and isinstance(v, str):
            v = "s:" + v.replace("<", "")
            if fmt == "minicpm5":
                v = v.replace("]]>", "").strip()
        out[k] = v
    return out


@st.composite
def outputs(draw, fmt):
    calls = [(draw(names), _xml_safe(fmt, draw(st.dictionaries(keys, values, max_size=4))))
             for _ in range(draw(st.integers(1, 3)))]
    before, after = draw(prose), draw(prose)
    if fmt in TEXT_UNTYPED:  # no schema: values are their text
        calls = [(n, {k: _bare(v) for k, v in a.items() if _bare(v).lower() != "null"}) for n, a in calls]
    if fmt in ("iquest_q1", "minicpm5"):
        calls = [(n, {k: v for k, v in a.items() if not isinstance(v, str) or v.strip() == v})
                 for n, a in calls]
    return before, calls, after


@pytest.mark.parametrize("fmt", NEW)
@given(data=st.data())
def test_streaming_equals_one_shot_in_any_chunking(fmt, data):
    before, calls, after = data.draw(outputs(fmt))
    if fmt in _TAGS:
        after = ""  # the DSML block ends the turn in the template (text after it is still content)
    text = before + render(fmt, calls, nl=data.draw(st.booleans())) + after
    if fmt == "muse":  # content is in messages of its own
        text = (f" to=commentary<|message|>{before}<|eom|>" + render(fmt, calls)
                + f"<|start|>assistant to=user<|message|>{after}<|eot|>")
    want = [(n, json.loads(json.dumps(a))) for n, a in calls]
    r = _one_shot(fmt, text)
    assert _calls(r) == want
    assert (r.content or "") == before + after
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=12)))
    chunks = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)]) if i < j]
    assert _streamed(fmt, chunks) == (before + after, want)


SOUP = st.lists(st.sampled_from([
    f"<{D}function_calls>", f"</{D}function_calls>", f"<{D} calls>", f"</{D} calls>", f"<{D}invoke",
    f"<{D} invoke", f"</{D}invoke>", f"</{D} invoke>", f"<{D}parameter", f"</{D} parameter>", ' name="f"',
    ' string="true"', ' string="false"', ">", "/>", "<tool_call>", "</tool_call>", "<think>", "</think>",
    "<iquest_tool_call>", "</iquest_tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
    "{", "}", '"name": "f"', '"arguments": {', "\n\n", "1", "x", "é",
]), max_size=14).map("".join)


@pytest.mark.parametrize("fmt", NEW)
@given(text=SOUP, data=st.data())
def test_marker_soup_never_raises_while_streaming_and_is_chunking_invariant(fmt, text, data):
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=8)))
    chunks = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)]) if i < j]
    assert _streamed(fmt, chunks) == _streamed(fmt, [text])
    try:
        r = _one_shot(fmt, text)
    except ValueError:
        return  # markup without one parsable call, as every format reports it
    assert _streamed(fmt, [text]) == ((r.content or ""), _calls(r))


# ------------------------------------------------------------------ malformed, huge, typed

# (block start, a broken call, a valid call, block end)
MALFORMED = {
    "deepseek_v32": (f"<{D}function_calls>", f'<{D}invoke name="bad name!"></{D}invoke>',
                     f'<{D}invoke name="ok"><{D}parameter name="a" string="false">1</{D}parameter></{D}invoke>',
                     f"</{D}function_calls>"),
    "deepseek_v41": (f"<{D} calls>", f'<{D} invoke name=""></{D} invoke>',
                     f'<{D} invoke name="ok"><{D} parameter name="a" string="false">1</{D} parameter></{D} invoke>',
                     f"</{D} calls>"),
    "trinity": ("", '<tool_call>{"name": "x", "arguments": [}</tool_call>',
                '<tool_call>{"name": "ok", "arguments": {"a": 1}}</tool_call>', ""),
    "minicpm5": ("", '<function name="bad name!"><param name="a">1</param></function>',
                 '<function name="ok"><param name="a">1</param></function>', ""),
    "spark25": ("", "<tool_call>bad name!</tool_call>",
                "<tool_call>ok\n<arg_key>a</arg_key><arg_value>1</arg_value>\n</tool_call>", ""),
    "inkling_framed": ("", '<|message_model|>x<|content_invoke_tool_json|>{"name": "x", "args": [}<|end_message|>',
                       '<|message_model|>ok<|content_invoke_tool_json|>{"name": "ok", "args": {"a": 1}}'
                       "<|end_message|>", ""),
    "beam": ("", " to=bad.name<|channel|>analysis <|constrain|>xml<|message|><|call|>",
             ' to=ok<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name="a">\n1\n</rfl:parameter>'
             "<|call|>", ""),
    "muse": ("<|eom|><|start|>assistant to=x<|message|>",
             '<atem:invoke name="bad name!"></atem:invoke>',
             '<atem:invoke name="ok"><atem:parameter name="a">1</atem:parameter></atem:invoke>', "<|eom|>"),
    "iquest_q1": ("", "<iquest_tool_call>bad name!</iquest_tool_call>",
                  "<iquest_tool_call>ok<arg_key>a</arg_key><arg_value>1</arg_value></iquest_tool_call>", ""),
}


@pytest.mark.parametrize("fmt", NEW)
def test_a_malformed_call_beside_a_valid_one_is_skipped(fmt):
    start, bad, good, end = MALFORMED[fmt]
    text = "Hi." + start + bad + good + end
    ok = [("ok", {"a": "1" if fmt in TEXT_UNTYPED else 1})]
    r = _one_shot(fmt, text)
    assert _calls(r) == ok and r.content == "Hi."
    assert _streamed(fmt, [text[i:i + 3] for i in range(0, len(text), 3)]) == ("Hi.", ok)
    if fmt == "muse":  # a tool message is never content: it reports no call
        assert _calls(_one_shot(fmt, start + bad + end)) == []
    else:
        with pytest.raises(ValueError):  # only broken markup: the caller sees it failed
            _one_shot(fmt, start + bad + end)
    assert _streamed(fmt, [start + bad + end])[1] == []  # streaming never raises


@pytest.mark.parametrize("fmt", NEW)
def test_a_huge_argument_finishes(fmt):
    big = "word " * 40_000 + "é中"
    n = "1" if fmt in TEXT_UNTYPED else 1
    intro = "Intro.<|eom|>" if fmt == "muse" else "Intro."  # (Muse: a message of its own)
    text = intro + render(fmt, [("write", {"body": big, "n": n})])
    want = [("write", {"body": big, "n": n})]
    assert _calls(_one_shot(fmt, text)) == want
    step = 4096
    assert _streamed(fmt, [text[i:i + step] for i in range(0, len(text), step)])[1] == want


TYPED = {"type": "object", "properties": {"s": {"type": "string"}, "n": {"type": "integer"},
                                          "x": {"type": "number"}, "b": {"type": "boolean"}}}


@pytest.mark.parametrize("fmt", ["iquest_q1", "minicpm5", "spark25", "beam"])
def test_values_typed_by_the_schema(fmt):
    text = render(fmt, [("f", {"s": "123", "n": "7", "x": "2.5", "b": "true"})], nl=False)
    want = [("f", {"s": "123", "n": 7, "x": 2.5, "b": True})]
    assert _calls(_one_shot(fmt, text, {"f": TYPED})) == want
    assert _streamed(fmt, [text[i:i + 5] for i in range(0, len(text), 5)], {"f": TYPED})[1] == want
    untyped = _calls(_one_shot(fmt, text))[0][1]["s"]
    assert untyped == ("123" if fmt in TEXT_UNTYPED else 123)  # no schema: JSON when it parses


def test_muse_names_a_listed_tool_by_its_namespaced_spelling():
    text = ("<|start|>assistant to=f<|message|><atem:invoke name=\"{}\"><atem:parameter name=\"a\">x"
            "</atem:parameter></atem:invoke><|eom|>")
    schemas = {"get_weather": {"type": "object", "properties": {}}}
    for written, named in (("get_weather.get_weather", "get_weather"), ("tools.get_weather", "get_weather"),
                           ("get_weather", "get_weather"), ("a.b", None)):
        got = _calls(_one_shot("muse", text.format(written), schemas))
        assert got == ([(named, {"a": "x"})] if named else []), written


@pytest.mark.parametrize("fmt", sorted(_TAGS))
def test_dsml_string_flag_and_schema(fmt):
    block, inv, par = _TAGS[fmt]
    text = (f'<{D}{block}><{D}{inv} name="f"><{D}{par} name="s" string="true">123</{D}{par}>'
            f'<{D}{par} name="n" string="false">123</{D}{par}><{D}{par} name="u">123</{D}{par}>'
            f"</{D}{inv}></{D}{block}>")
    assert _calls(_one_shot(fmt, text)) == [("f", {"s": "123", "n": 123, "u": 123})]
    schema = {"type": "object", "properties": {"u": {"type": "string"}}}
    assert _calls(_one_shot(fmt, text, {"f": schema})) == [("f", {"s": "123", "n": 123, "u": "123"})]
