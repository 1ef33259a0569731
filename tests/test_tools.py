"""Tool-call parsers: realistic outputs per format, streaming equal to one-shot, bad input."""

from __future__ import annotations

import json
import random
import re

import pytest

from reasoning_core import tools
from reasoning_core.tools import (
    ParsedToolResponse,
    ToolParser,
)
from toolstreams import (
    DS_CALL_BEGIN,
    DS_CALL_END,
    DS_CALLS_BEGIN,
    DS_CALLS_END,
    DS_SEP,
    MAX_NAMES,
    assert_soup_consistent,
    further_suite,
    stream,
    write_calls,
)

OURS = [n for n in tools.available() if n not in MAX_NAMES]  # MAX names: test_tools_max.py

ID_RE = re.compile(r"call_[0-9a-f]{24}")



def random_chunks(text: str, seed: int) -> list[str]:
    rnd = random.Random(seed)
    k = rnd.randint(0, min(len(text) - 1, 40)) if len(text) > 1 else 0
    cuts = sorted(rnd.sample(range(1, len(text)), k)) if k else []
    return [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]


def check_stream_equals_complete(name: str, text: str, schemas=None):
    """One-shot result; asserts every chunking streams to the same thing."""
    p = tools.create(name)
    if schemas:
        p.set_streaming_tool_schemas(schemas)
    full = p.parse_complete(text)
    expected = (full.content or "", [(c.name, c.arguments) for c in full.tool_calls])
    for chunks in [[text], list(text), *(random_chunks(text, s) for s in range(25))]:
        q = tools.create(name)
        if schemas:
            q.set_streaming_tool_schemas(schemas)
        content, calls = stream(q, chunks)
        assert (content, [(n, a) for _, n, a in calls]) == expected, chunks
        if name == "kimi_k2" or "[CALL_ID]" in text:  # the format's own ids are kept
            assert [i for i, _, _ in calls] == [c.id for c in full.tool_calls]
        elif "[CALL_ID]" not in text:
            assert all(ID_RE.fullmatch(i) for i, _, _ in calls)
    return full


def names_args(resp: ParsedToolResponse):
    return [(c.name, json.loads(c.arguments)) for c in resp.tool_calls]


# ------------------------------------------------------------------ registry


def test_registry_lists_every_name():
    further = {name for mod in tools._FORMAT_MODULES for name in mod.PARSERS}
    assert further, "the further format modules register names"
    assert set(tools.available()) == {
        "hermes", "qwen3_coder", "qwen3_5", "llama3_json", "deepseek_v3", "deepseek_v31",
        "kimi_k2", "glm45", "minimax_m2", "mistral",
    } | MAX_NAMES | further
    for name in further:
        assert tools.create(name).format_name in tools.available(), name


def test_alias_and_fresh_instances():
    assert type(tools.create("qwen3_5")) is type(tools.create("qwen3_coder"))
    assert tools.create("hermes") is not tools.create("hermes")


def test_unknown_name_lists_available():
    with pytest.raises(ValueError) as e:
        tools.create("nope")
    for n in tools.available():
        assert n in str(e.value)


@pytest.mark.parametrize("name", OURS)
def test_protocol(name):
    p = tools.create(name)
    assert isinstance(p, ToolParser)
    assert callable(p.finish)


# ------------------------------------------------------------------ realistic outputs

HERMES = (
    "Let me check both.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_time", "arguments": {"tz": "Europe/Paris"}}\n</tool_call>'
)


def test_hermes_multi_call():
    r = check_stream_equals_complete("hermes", HERMES)
    assert r.content == "Let me check both.\n\n"
    assert names_args(r) == [
        ("get_weather", {"city": "Paris", "unit": "celsius"}),
        ("get_time", {"tz": "Europe/Paris"}),
    ]
    assert r.tool_calls[0].arguments == '{"city": "Paris", "unit": "celsius"}'
    assert all(ID_RE.fullmatch(c.id) for c in r.tool_calls)
    assert r.tool_calls[0].id != r.tool_calls[1].id


def test_hermes_content_after_and_compact_json():
    text = 'A<tool_call>{"name":"f","arguments":{"x":[1,2,{"y":null}]}}</tool_call>B'
    r = check_stream_equals_complete("hermes", text)
    assert r.content == "AB"
    assert r.tool_calls[0].arguments == '{"x": [1, 2, {"y": null}]}'


def test_hermes_arguments_before_name_and_missing_arguments():
    text = '<tool_call>{"arguments": {"a": 1}, "name": "f"}</tool_call><tool_call>{"name": "g"}</tool_call>'
    r = check_stream_equals_complete("hermes", text)
    assert [(c.name, c.arguments) for c in r.tool_calls] == [("f", '{"a": 1}'), ("g", "{}")]


def test_hermes_end_marker_inside_json_string():
    text = '<tool_call>{"name": "echo", "arguments": {"text": "a </tool_call> b \\" </tool_call>"}}</tool_call>tail'
    r = check_stream_equals_complete("hermes", text)
    assert json.loads(r.tool_calls[0].arguments) == {"text": 'a </tool_call> b " </tool_call>'}
    assert r.content == "tail"


def test_qwen3_coder_multi_call():
    text = (
        "I'll do two things.\n"
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Francisco\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n<parameter=opts>\n{\"metric\": true}\n</parameter>\n"
        "</function>\n</tool_call>\n"
        "<tool_call>\n<function=write_file>\n<parameter=path>\n/tmp/a.py\n</parameter>\n"
        "<parameter=content>\ndef f():\n    return 1\n\n</parameter>\n</function>\n</tool_call>\nDone."
    )
    r = check_stream_equals_complete("qwen3_coder", text)
    assert r.content == "I'll do two things.\n\n\nDone."
    assert names_args(r) == [
        ("get_weather", {"city": "San Francisco", "days": 3, "opts": {"metric": True}}),
        ("write_file", {"path": "/tmp/a.py", "content": "def f():\n    return 1\n"}),
    ]


def test_qwen3_coder_schema_decides_types():
    text = (
        "<tool_call>\n<function=f>\n<parameter=zip>\n02134\n</parameter>\n<parameter=code>\n123\n</parameter>\n"
        "<parameter=n>\n7\n</parameter>\n<parameter=flag>\nTrue\n</parameter>\n</function>\n</tool_call>"
    )
    schemas = {"f": {"type": "object", "properties": {
        "zip": {"type": "string"}, "code": {"type": "string"},
        "n": {"type": "integer"}, "flag": {"type": "boolean"}}}}
    r = check_stream_equals_complete("qwen3_coder", text, schemas)
    assert names_args(r) == [("f", {"zip": "02134", "code": "123", "n": 7, "flag": True})]
    # without the schema, text that parses as JSON becomes JSON
    r = tools.create("qwen3_coder").parse_complete(text)
    assert names_args(r) == [("f", {"zip": "02134", "code": 123, "n": 7, "flag": "True"})]


def test_qwen3_coder_lenient_forms():
    # no <tool_call> wrapper, and a missing </parameter>
    text = "<function=f>\n<parameter=a>\nx\n<parameter=b>\n2\n</parameter>\n</function>after"
    r = check_stream_equals_complete("qwen3_5", text)
    assert names_args(r) == [("f", {"a": "x", "b": 2})]
    assert r.content == "after"


def test_llama3_json_multi_call_and_python_tag():
    text = (
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; '
        '{"name": "get_time", "arguments": {"tz": "UTC"}}'
    )
    r = check_stream_equals_complete("llama3_json", text)
    assert r.content is None
    assert names_args(r) == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "UTC"})]


def test_llama3_json_other_json_and_prose_are_content():
    for text in [
        'The config is {"a": 1, "b": [2]} as shown.',
        '{"name": "only_a_name"}',
        '{"name": "bad name!", "parameters": {}}',
        "Sure {not json} and {",
        '<|python_tag|>print("hi")',
        '{"a": {"name": "f", "parameters": {}}}',
    ]:
        r = check_stream_equals_complete("llama3_json", text)
        assert r.content == text and r.tool_calls == []


def test_llama3_json_prose_then_call():
    text = 'Calling now: {"name": "f", "parameters": {"x": 1}}'
    r = check_stream_equals_complete("llama3_json", text)
    assert r.content == "Calling now: "
    assert names_args(r) == [("f", {"x": 1})]


def test_deepseek_v3():
    text = (
        "Checking." + DS_CALLS_BEGIN
        + DS_CALL_BEGIN + "function" + DS_SEP + 'get_weather\n```json\n{"city": "Paris"}\n```' + DS_CALL_END + "\n"
        + DS_CALL_BEGIN + "function" + DS_SEP + 'get_time\n```json\n{}\n```' + DS_CALL_END
        + DS_CALLS_END + "Anything else?"
    )
    r = check_stream_equals_complete("deepseek_v3", text)
    assert r.content == "Checking.Anything else?"
    assert names_args(r) == [("get_weather", {"city": "Paris"}), ("get_time", {})]


def test_deepseek_v31_and_bare_call_begin():
    text = (
        "ok" + DS_CALLS_BEGIN
        + DS_CALL_BEGIN + 'get_weather' + DS_SEP + '{"city": "Paris"}' + DS_CALL_END
        + DS_CALL_BEGIN + 'get_time' + DS_SEP + '{}' + DS_CALL_END + DS_CALLS_END
    )
    r = check_stream_equals_complete("deepseek_v31", text)
    assert r.content == "ok"
    assert names_args(r) == [("get_weather", {"city": "Paris"}), ("get_time", {})]
    bare = "x" + DS_CALL_BEGIN + "f" + DS_SEP + '{"a": 1}' + DS_CALL_END + "y"
    r = check_stream_equals_complete("deepseek_v31", bare)
    assert r.content == "xy" and names_args(r) == [("f", {"a": 1})]


def test_kimi_k2_ids_kept_and_noise_dropped():
    text = (
        "Let me look.<|tool_calls_section_begin|>\n <|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>\n'
        "<|tool_call_begin|> functions.get_time:1 <|tool_call_argument_begin|>{}<|tool_call_end|>"
        "<|tool_calls_section_end|>Bye"
    )
    r = check_stream_equals_complete("kimi_k2", text)
    assert r.content == "Let me look.Bye"
    assert [(c.id, c.name) for c in r.tool_calls] == [
        ("functions.get_weather:0", "get_weather"), ("functions.get_time:1", "get_time")]


def test_kimi_k2_singular_section_markers():
    text = ("<|tool_call_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
            '{"a": "<|tool_calls_section_end|>"}<|tool_call_end|><|tool_call_section_end|>after')
    r = check_stream_equals_complete("kimi_k2", text)
    assert names_args(r) == [("f", {"a": "<|tool_calls_section_end|>"})]
    assert r.content == "after"


def test_glm45():
    text = (
        "Let me check.<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"
        "<tool_call>get_time\n</tool_call>"
        "<tool_call>search<arg_key>q</arg_key><arg_value>[1, 2]</arg_value></tool_call>end"
    )
    r = check_stream_equals_complete("glm45", text)
    assert r.content == "Let me check.end"
    assert names_args(r) == [
        ("get_weather", {"city": "Beijing", "days": 3}), ("get_time", {}), ("search", {"q": [1, 2]})]


def test_minimax_m2():
    text = (
        "Sure.<minimax:tool_call>\n<invoke name=\"get_weather\">\n"
        "<parameter name=\"city\">Paris</parameter>\n<parameter name=units>metric</parameter>\n"
        "</invoke>\n<invoke name=get_time>\n</invoke>\n</minimax:tool_call>\nAnything else?"
    )
    r = check_stream_equals_complete("minimax_m2", text)
    assert r.content == "Sure.\nAnything else?"
    assert names_args(r) == [("get_weather", {"city": "Paris", "units": "metric"}), ("get_time", {})]


def test_mistral_list_and_args_forms():
    text = '[TOOL_CALLS] [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]'
    r = check_stream_equals_complete("mistral", text)
    assert r.content is None and names_args(r) == [("a", {"x": 1}), ("b", {})]
    text = 'Hi[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{} ok'
    r = check_stream_equals_complete("mistral", text)
    assert r.content == "Hi ok"
    assert names_args(r) == [("get_weather", {"city": "Paris"}), ("get_time", {})]
    text = '[TOOL_CALLS]f[CALL_ID]a1B2c3D4e[ARGS]{"x": 2}'
    r = check_stream_equals_complete("mistral", text)
    assert names_args(r) == [("f", {"x": 2})] and r.tool_calls[0].id == "a1B2c3D4e"  # model's id kept


_RUNS = [
    "[TOOL_CALLS]" + "x" * 70 + "yy zz",                      # a name past 64 characters, text after it
    "Hi [TOOL_CALLS]" + "x" * 200,                             # one the output ends inside
    "[TOOL_CALLS]f[CALL_ID]" + "9" * 80 + '[ARGS]{"a": 1} t',  # an id past 64 characters
    "[TOOL_CALLS]" + "x" * 64 + '[ARGS]{"a": 1}',              # a name of 64: still a call
]


@pytest.mark.parametrize("text", _RUNS)
def test_mistral_run_past_its_limit_is_dropped_whole_whatever_the_chunks(text):
    # (found by the vLLM tool fuzz target) a name or id run past its 64 characters was cut
    # where the buffer ended when it went over, and the rest of the run came out as content:
    # the output depended on the chunks
    whole = stream(tools.create("mistral"), [text], with_ids=False)
    for chunks in ([text[i:i + 1] for i in range(len(text))], [text[:20], text[20:]], [text[:70], text[70:]]):
        assert stream(tools.create("mistral"), chunks, with_ids=False) == whole, chunks
    assert "x" not in whole[0] and "9" not in whole[0]
    want = {0: [], 1: [], 2: [("f", '{"a": 1}')], 3: [("x" * 64, '{"a": 1}')]}  # (an id too long is left out)
    assert whole[1] == want[[t for t in _RUNS].index(text)]


_PY_RUNS = ["[get(x=1), " + "b" * 100 + "(y=2)] tail", "[get(x=1), f(" + "k" * 70 + "=2)] tail",
            "Hi [" + "a" * 70 + "(x=1)] tail", "[" + "a" * 64 + "(x=1)]"]


@pytest.mark.parametrize("text", _PY_RUNS)
def test_pythonic_identifier_past_its_limit_is_read_whole_whatever_the_chunks(text):
    # a name or key run past its 64 characters was cut where the buffer ended when it went
    # over: after a call had opened, the rest of the run came out as content, so the output
    # depended on the chunks (and differed from one-shot parsing)
    whole = stream(tools.create("pythonic"), [text], with_ids=False)
    for k in (1, 2, 7, 33, 65):
        chunks = [text[i:i + k] for i in range(0, len(text), k)]
        assert stream(tools.create("pythonic"), chunks, with_ids=False) == whole, k
    one = tools.create("pythonic").parse_complete(text)
    assert whole == (one.content or "", [(c.name, c.arguments) for c in one.tool_calls])
    want = {0: ("(y=2)] tail", [("get", '{"x": 1}')]), 1: ("=2)] tail", [("get", '{"x": 1}')]),
            2: (text, []), 3: ("", [("a" * 64, '{"x": 1}')])}
    assert whole == want[_PY_RUNS.index(text)]


# ------------------------------------------------------------------ rules shared by all formats

ONE_CALL = {
    "hermes": '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>',
    "qwen3_coder": "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
    "qwen3_5": "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
    "llama3_json": '{"name": "f", "parameters": {"a": 1}}',
    "deepseek_v3": DS_CALLS_BEGIN + DS_CALL_BEGIN + "function" + DS_SEP + 'f\n```json\n{"a": 1}\n```' + DS_CALL_END + DS_CALLS_END,
    "deepseek_v31": DS_CALLS_BEGIN + DS_CALL_BEGIN + "f" + DS_SEP + '{"a": 1}' + DS_CALL_END + DS_CALLS_END,
    "kimi_k2": '<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": 1}<|tool_call_end|><|tool_calls_section_end|>',
    "glm45": "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
    "minimax_m2": '<minimax:tool_call><invoke name="f"><parameter name="a">1</parameter></invoke></minimax:tool_call>',
    "mistral": '[TOOL_CALLS]f[ARGS]{"a": 1}',
}

# the same call cut before its closing marker(s), body still complete
CUT_CALL = {
    "hermes": '<tool_call>{"name": "f", "arguments": {"a": 1}}',
    "qwen3_coder": "<tool_call>\n<function=f>\n<parameter=a>\n1\n",
    "qwen3_5": "<function=f>\n<parameter=a>\n1",
    "llama3_json": '{"name": "f", "parameters": {"a": 1}}',
    "deepseek_v3": DS_CALLS_BEGIN + DS_CALL_BEGIN + "function" + DS_SEP + 'f\n```json\n{"a": 1}',
    "deepseek_v31": DS_CALLS_BEGIN + DS_CALL_BEGIN + "f" + DS_SEP + '{"a": 1}',
    "kimi_k2": '<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": 1}',
    "glm45": "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1",
    "minimax_m2": '<minimax:tool_call><invoke name="f"><parameter name="a">1',
    "mistral": '[TOOL_CALLS]f[ARGS]{"a": 1}',
}

# markers present, body broken; SECRET must never appear in an error message
SECRET = "s3cr3t_payload"
BROKEN = {
    "hermes": '<tool_call>{"name": "f", "arguments": {"a": ' + SECRET + "}}</tool_call>",
    "qwen3_coder": f"<tool_call>\n<function={SECRET} bad>\n</function>\n</tool_call>",
    "qwen3_5": f"<tool_call>\n{SECRET}\n</tool_call>",
    "deepseek_v3": DS_CALLS_BEGIN + DS_CALL_BEGIN + "function" + DS_SEP + f'f\n```json\n{{"a": {SECRET}}}\n```' + DS_CALL_END + DS_CALLS_END,
    "deepseek_v31": DS_CALLS_BEGIN + DS_CALL_BEGIN + "f" + DS_SEP + "{" + SECRET + DS_CALL_END + DS_CALLS_END,
    "kimi_k2": f"<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{{{SECRET}}}<|tool_call_end|><|tool_calls_section_end|>",
    "glm45": f"<tool_call>bad name {SECRET}\n</tool_call>",
    "minimax_m2": f"<minimax:tool_call>{SECRET}</minimax:tool_call>",
    "mistral": f"[TOOL_CALLS]f[ARGS]{{{SECRET}}}",
}

THINK_WRAPPED = {k: f"<think>I could write {v} here.</think>" for k, v in ONE_CALL.items()}
THINK_WRAPPED["mistral"] = f"[THINK]maybe {ONE_CALL['mistral']}[/THINK]"

# ---- the further formats (pythonic, tagged-JSON, markup and more modules): each call
# written by the format's own suite's writer, as the model writes it
FURTHER = [n for n in OURS if n not in ONE_CALL]
for _n in FURTHER:
    ONE_CALL[_n] = write_calls(_n, [("f", {"a": 1})])
# Muse's output is messages: a call is a message of its own, after the one before it ends
ONE_CALL["muse"] = "<|eom|>" + ONE_CALL["muse"]
# formats whose values are their text unless a schema types them (each format's own
# suite checks the schema typing): f(a=1) reads back as {"a": "1"}
TEXT_VALUED = {"beam", "dots", "hunyuan", "hy_v3", "hy_v4", "mimo", "minimax_m3", "spark25", "step3"}


def one_args(name: str) -> dict:
    return {"a": "1"} if name in TEXT_VALUED else {"a": 1}


# the call cut before the closing markup written after its body
_CLOSERS = {
    "apertus": "]<|tools_suffix|>", "beam": "\n</rfl:parameter><|call|>", "cohere_command": "\n]<|END_ACTION|>",
    "deepseek_v32": "</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
    "deepseek_v41": "</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>",
    "dots": "\n</parameter>\n</invoke>\n</dots_function_call>", "functiongemma": "<end_function_call>",
    "gigachat3": "", "gigachat35": "</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
    "gpt_oss": "<|call|>", "granite": "]", "granite_20b_fc": "",
    "hunyuan": "</arg_value></tool_call></tool_calls>", "hunyuan_a13b": "]</tool_calls>",
    "inkling_framed": "<|end_message|>", "internlm": "<|action_end|>", "iquest_q1": "\n</iquest_tool_call>",
    "k2_horizon": "\n</ifm|tool_call>\n</ifm|tool_calls>",
    "kimi_k3": "<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
    "lfm2": "]<|tool_call_end|>", "longcat": "\n</longcat_tool_call>",
    "mimo": "</parameter>\n</function>\n</tool_call>", "minicpm5": "</param></function>",
    # (MiniMax M3 keeps an element only once closed: elements nest, so an unclosed one's extent is unknown)
    "minimax_m3": "\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
    "muse": "</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>",
    "olmo3": "\n</function_calls>", "phi4_mini_json": "]",
    "plamo3": "<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>",
    "seed_oss": "\n</parameter>\n</function>\n</seed:tool_call>",
    "spark25": "</arg_value>\n</tool_call>", "step3": "</steptml:parameter>\n</steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>",
    "trinity": "\n</tool_call>",
}
_CLOSERS.update({"hy_v3": _CLOSERS["hunyuan"], "hy_v4": _CLOSERS["hunyuan"], "llama4_pythonic": "]",
                 "pythonic": "]", "xlam": "]"})
for _n in FURTHER:
    assert ONE_CALL[_n].endswith(_CLOSERS[_n]), _n
    CUT_CALL[_n] = ONE_CALL[_n][: len(ONE_CALL[_n]) - len(_CLOSERS[_n])]

# markers present, body broken: the format suites' own broken calls (each names SECRET)
for _n in FURTHER:
    _own = getattr(further_suite(_n), "BROKEN", {})
    if tools.create(_n).format_name in _own:
        BROKEN[_n] = _own[tools.create(_n).format_name]
BROKEN.update({
    "deepseek_v32": f'<｜DSML｜function_calls><｜DSML｜invoke name="{SECRET} bad"></｜DSML｜invoke></｜DSML｜function_calls>',
    "deepseek_v41": f'<｜DSML｜ calls><｜DSML｜ invoke name="{SECRET} bad"></｜DSML｜ invoke></｜DSML｜ calls>',
    "trinity": f'<tool_call>{{"name": "{SECRET} bad", "arguments": {{}}}}</tool_call>',
    "minicpm5": f'<function name="{SECRET} bad"><param name="a">1</param></function>',
    "spark25": f"<tool_call>{SECRET} bad</tool_call>",
    "iquest_q1": f"<iquest_tool_call>{SECRET} bad</iquest_tool_call>",
    "inkling_framed": f'<|message_model|>x<|content_invoke_tool_json|>{{"name": "{SECRET} bad", "args": {{}}}}'
                      "<|end_message|>",
    "beam": f" to={SECRET}.bad<|channel|>analysis <|constrain|>xml<|message|><|call|>",
})
# Not here by design: pythonic, llama4_pythonic, xlam and phi4_mini_json read a `[`/marker that
# may be prose, so a non-call is content, never an error (test_tools_pythonic checks it);
# Muse's broken tool message reports no call and no error (test_tools_more checks it).
for _n in ("pythonic", "llama4_pythonic", "xlam", "phi4_mini_json", "muse"):
    BROKEN.pop(_n, None)

# a call inside the format's own think block is reasoning text, never a call
_THINK_PAIRS = dict(further_suite("seed_oss").THINK)
for _n in FURTHER:
    o, c = _THINK_PAIRS.get(tools.create(_n).format_name, ("<think>", "</think>"))
    THINK_WRAPPED[_n] = f"{o}I could write {ONE_CALL[_n]} here.{c}"
# Not here by design: trinity reads calls inside <think> (test_tools_more's vectors check it);
# inkling_framed's framing tokens, thinking included, are dropped, not text; Muse's
# reasoning is a message without a recipient (test_tools_more checks it).
for _n in ("trinity", "inkling_framed", "muse"):
    THINK_WRAPPED.pop(_n)


@pytest.mark.parametrize("name", sorted(ONE_CALL))
def test_content_before_and_after_one_call(name):
    text = "Before. " + ONE_CALL[name] + (" After." if name != "mistral" else "")
    r = check_stream_equals_complete(name, text)
    assert names_args(r) == [("f", one_args(name))]
    if name in ("llama3_json", "granite_20b_fc"):  # whitespace after the call is markup
        assert r.content == "Before. After."
    elif name == "mistral":
        assert r.content == "Before. "
    else:
        assert r.content == "Before.  After."


@pytest.mark.parametrize("name", sorted(CUT_CALL))
def test_unterminated_call_completed_at_finish(name):
    r = check_stream_equals_complete(name, "Go: " + CUT_CALL[name])
    assert r.content == "Go: "
    assert names_args(r) == [("f", one_args(name))]


# where each of the first formats writes the call's name and its key (f, a); the further
# formats' calls are written again by their suite's writer
_RUN_SPOTS = {
    "hermes": (('"name": "f"', '"name": "{}"'), ('{"a": 1}', '{{"{}": 1}}')),
    "llama3_json": (('"name": "f"', '"name": "{}"'), ('{"a": 1}', '{{"{}": 1}}')),
    "qwen3_coder": (("function=f>", "function={}>"), ("<parameter=a>", "<parameter={}>")),
    "qwen3_5": (("function=f>", "function={}>"), ("<parameter=a>", "<parameter={}>")),
    "deepseek_v3": ((DS_SEP + "f\n", DS_SEP + "{}\n"), ('{"a": 1}', '{{"{}": 1}}')),
    "deepseek_v31": ((DS_CALL_BEGIN + "f" + DS_SEP, DS_CALL_BEGIN + "{}" + DS_SEP), ('{"a": 1}', '{{"{}": 1}}')),
    "kimi_k2": (("functions.f:0", "functions.{}:0"), ('{"a": 1}', '{{"{}": 1}}')),
    "glm45": (("<tool_call>f\n", "<tool_call>{}\n"), ("<arg_key>a</arg_key>", "<arg_key>{}</arg_key>")),
    "minimax_m2": (('invoke name="f"', 'invoke name="{}"'), ('parameter name="a"', 'parameter name="{}"')),
    "mistral": (("[TOOL_CALLS]f[", "[TOOL_CALLS]{}["), ('{"a": 1}', '{{"{}": 1}}')),
}


@pytest.mark.parametrize("name", sorted(ONE_CALL))
@pytest.mark.parametrize("where", ["name", "key"])
def test_a_long_name_or_key_reads_alike_whatever_the_chunks(name, where):
    """A 300-character run where a call's name or a key goes (past every
    format's limit on a name), between two good calls: streamed in any
    chunks as in one piece, and as one-shot parsing reads it (a format that
    reads a run up to a limit reads it to its end whatever the chunks)."""
    run = "n" * 300
    one = ONE_CALL[name]
    if name in _RUN_SPOTS:
        spot, repl = _RUN_SPOTS[name][where == "key"]
        assert one.count(spot) == 1, (name, spot)
        odd = one.replace(spot, repl.format(run))
    else:
        plain = write_calls(name, [("f", {"a": 1})])
        assert plain in one, name
        bad = (run, {"a": 1}) if where == "name" else ("f", {run: 1})
        # between two calls of the same block (one list, where the format writes one)
        odd = one.replace(plain, write_calls(name, [("f", {"a": 1}), bad, ("f", {"b": 2})]))
    assert run in odd
    text = "Hi " + one + odd + one + " tail"
    for k in (1, 7, 64):
        assert_soup_consistent(name, text, [text[i:i + k] for i in range(0, len(text), k)])


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_markers_without_a_parsable_call_raise_without_echo(name):
    p = tools.create(name)
    with pytest.raises(ValueError) as e:
        p.parse_complete("prefix " + BROKEN[name])
    msg = str(e.value)
    assert name.split("_5")[0] in msg or "qwen3_coder" in msg or tools.create(name).format_name in msg
    assert SECRET not in msg and "prefix" not in msg
    assert re.search(r"offset \d+", msg)
    # streaming the same text never raises
    stream(tools.create(name), list("prefix " + BROKEN[name]))


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_malformed_call_beside_valid_one_is_skipped(name):
    text = BROKEN[name] + ONE_CALL[name]
    r = tools.create(name).parse_complete(text)
    assert names_args(r) == [("f", one_args(name))]


@pytest.mark.parametrize("name", sorted(THINK_WRAPPED))
def test_think_text_is_never_a_call(name):
    think = THINK_WRAPPED[name]
    r = check_stream_equals_complete(name, think)
    assert r.tool_calls == [] and r.content == think
    r = check_stream_equals_complete(name, think + ONE_CALL[name])
    assert names_args(r) == [("f", one_args(name))]
    assert r.content == think


@pytest.mark.parametrize("name", OURS)
@pytest.mark.parametrize("bad", [None, b"<tool_call>", 3])
def test_non_str_input_is_type_error(name, bad):
    p = tools.create(name)
    with pytest.raises(TypeError):
        p.parse_delta(bad)
    with pytest.raises(TypeError):
        p.parse_complete(bad)


# Formats where a partial marker is not held exactly, by design: inkling_framed's call may
# start with a bare tool name before its marker (the trailing word is held too); Muse's
# output before its first <|eom|>/<|eot|> is one message's body (markers there are text);
# xlam's opener is a bare `[` (no partial to hold). Conservation still holds for them.
HOLDS_OTHERWISE = ("inkling_framed", "muse", "xlam")


@pytest.mark.parametrize("name", OURS)
def test_plain_content_passes_through_and_partial_marker_is_held(name):
    p = tools.create(name)
    if name in HOLDS_OTHERWISE:
        content, calls = stream(p, ["Hello there", "x" + p.openers[0][:-1]], with_ids=False)
        assert content == "Hello therex" + p.openers[0][:-1] and calls == []
        return
    assert p.parse_delta("Hello there") is None
    opener = p.openers[0]
    held = opener[:-1]
    out = p.parse_delta("x" + held)
    assert [d.content for d in out] == (["x"])
    rest = p.finish()
    assert [d.content for d in rest] == [held]


@pytest.mark.parametrize("name", OURS)
def test_reset_and_reuse(name):
    p = tools.create(name)
    p.parse_delta(ONE_CALL[name][:10])
    p.reset()
    content, calls = stream(p, [ONE_CALL[name]])
    assert [(n, json.loads(a)) for _, n, a in calls] == [("f", one_args(name))]
    # finish() resets too
    content, calls = stream(p, ["plain"])
    assert content == "plain" and calls == []


@pytest.mark.parametrize("name", OURS)
def test_arbitrary_garbage_never_raises_while_streaming(name):
    rnd = random.Random(name)
    pieces = ["<", ">", "{", "}", '"', "\\", "[", "]", ":", ",", "\n", "name", "arguments",
              "<tool_call>", "</tool_call>", "<function=", "<parameter=", "[TOOL_CALLS]", "[ARGS]",
              DS_CALL_BEGIN, DS_SEP, DS_CALLS_BEGIN, "<|tool_calls_section_begin|>",
              "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<arg_key>", "<arg_value>",
              "<minimax:tool_call>", '<invoke name="', "<think>", "</think>", "\ud800", "\x00"]
    if name in FURTHER:  # and the further format's own markup: its call, cut in three
        call = ONE_CALL[name]
        pieces += [call[: len(call) // 3], call[len(call) // 3: 2 * len(call) // 3], call[2 * len(call) // 3:],
                   *tools.create(name).openers]
    for _ in range(30):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 60)))
        one = stream(tools.create(name), [text])
        for seed in range(3):
            got = stream(tools.create(name), random_chunks(text, seed))
            assert got[0] == one[0]
            assert [(n, a) for _, n, a in got[1]] == [(n, a) for _, n, a in one[1]]


# ------------------------------------------------------------------ arguments text


def test_control_characters_and_lone_surrogates_give_valid_json():
    raw = '<tool_call>{"name": "f", "arguments": {"a": "x\x01y\ttab", "b": "\\ud800", "c": "\\ud83d\\ude00", "d": "\udc00"}}</tool_call>'
    r = check_stream_equals_complete("hermes", raw)
    args = r.tool_calls[0].arguments
    assert args == '{"a": "x\\u0001y\\ttab", "b": "\\ud800", "c": "😀", "d": "\\udc00"}'
    args.encode("utf-8")  # always encodable
    assert json.loads(args) == {"a": "x\x01y\ttab", "b": "\ud800", "c": "😀", "d": "\udc00"}


def test_arguments_canonical_form_keeps_number_spelling():
    text = '<tool_call>{ "name" : "f" ,\n "arguments" : { "big": 12345678901234567890123, "f": 1.50e+3, "u": "\\u00e9\\/" } }</tool_call>'
    r = check_stream_equals_complete("hermes", text)
    assert r.tool_calls[0].arguments == '{"big": 12345678901234567890123, "f": 1.50e+3, "u": "é/"}'


def test_xml_string_value_escaped():
    text = '<tool_call>\n<function=f>\n<parameter=s>\nsay "hi"\\n\x02\n</parameter>\n</function>\n</tool_call>'
    r = check_stream_equals_complete("qwen3_coder", text, {"f": {"properties": {"s": {"type": "string"}}}})
    assert json.loads(r.tool_calls[0].arguments) == {"s": 'say "hi"\\n\x02'}


def test_deep_nesting_does_not_crash():
    text = '<tool_call>{"name": "f", "arguments": {"a": ' + "[" * 50000 + "]" * 50000 + "}}</tool_call>"
    r = tools.create("hermes").parse_complete(text)
    assert r.tool_calls[0].arguments.startswith('{"a": [[[')
    content, calls = stream(tools.create("llama3_json"), ["{" * 30000])
    assert content == "{" * 30000 and calls == []


def test_streaming_arguments_arrive_incrementally():
    p = tools.create("hermes")
    out = []
    text = '<tool_call>{"name": "f", "arguments": {"text": "' + "abcdefghij" * 20 + '"}}</tool_call>'
    for ch in text:
        res = p.parse_delta(ch)
        out.append(res)
    arg_pieces = [d.arguments for res in out if res for d in res if d.arguments]
    assert len(arg_pieces) > 150  # one piece per character inside the string
    names = [d.name for res in out if res for d in res if d.name]
    assert names == ["f"]


def test_content_delta_index_is_latest_call():
    p = tools.create("hermes")
    res = p.parse_delta('A<tool_call>{"name": "f", "arguments": {}}</tool_call>B<tool_call>{"name": "g", "arguments": {}}</tool_call>C')
    contents = [(d.index, d.content) for d in res if d.content is not None]
    assert contents == [(0, "A"), (0, "B"), (1, "C")]
    assert [d.index for d in res if d.name] == [0, 1]


def test_schemas_accept_openai_tool_entries():
    p = tools.create("minimax_m2")
    p.set_streaming_tool_schemas({"f": {"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"n": {"type": ["string", "null"]}, "m": {"anyOf": [{"type": "integer"}]}}}}}})
    r = p.parse_complete('<minimax:tool_call><invoke name="f"><parameter name="n">5</parameter>'
                         '<parameter name="m">5</parameter><parameter name="o">null</parameter></invoke></minimax:tool_call>')
    assert names_args(r) == [("f", {"n": "5", "m": 5, "o": None})]
    p.set_streaming_tool_schemas(None)
    r = p.parse_complete('<minimax:tool_call><invoke name="f"><parameter name="n">5</parameter></invoke></minimax:tool_call>')
    assert names_args(r) == [("f", {"n": 5})]


def test_invalid_tool_names_are_not_calls():
    too_long = "x" * 65
    r = tools.create("hermes").parse_complete(
        '<tool_call>{"name": "%s", "arguments": {}}</tool_call><tool_call>{"name": "a.b", "arguments": {}}</tool_call>'
        '<tool_call>{"name": "ok-name_1", "arguments": {}}</tool_call>' % too_long)
    assert [c.name for c in r.tool_calls] == ["ok-name_1"]


def test_cut_off_body_yields_no_call_but_fragments_streamed():
    text = 'ok <tool_call>{"name": "f", "arguments": {"a": [1, '
    with pytest.raises(ValueError, match=r"hermes.*offset \d+"):
        tools.create("hermes").parse_complete(text)
    content, calls = stream(tools.create("hermes"), list(text))
    assert content == "ok "
    assert [(n, a) for _, n, a in calls] == [("f", '{"a": [1, ')]  # the one unavoidable difference


def test_missing_close_tag_then_next_call():
    text = '<tool_call>{"name": "f", "arguments": {}}\n<tool_call>{"name": "g", "arguments": {}}</tool_call>'
    r = check_stream_equals_complete("hermes", text)
    assert [c.name for c in r.tool_calls] == ["f", "g"]


def test_parse_complete_does_not_touch_stream_state():
    p = tools.create("hermes")
    out = p.parse_delta('x<tool_call>{"name": "f", "argu')
    p.parse_complete('<tool_call>{"name": "g", "arguments": {}}</tool_call>')
    rest = p.parse_delta('ments": {"a": 1}}</tool_call>')
    merged = "".join(d.arguments or "" for d in out + rest)
    assert merged == '{"a": 1}'


def test_llama3_broken_after_commit_resumes_content():
    text = '{"name": "f", "parameters": {"a": tru} and more'
    r = tools.create("llama3_json").parse_complete(text)
    assert r.tool_calls == [] and r.content == "} and more"
    content, calls = stream(tools.create("llama3_json"), list(text))
    assert content == "} and more" and [n for _, n, _ in calls] == ["f"]  # already announced


def test_call_ids_are_random_unique_and_not_shared_with_a_forked_child():
    """Ids are drawn from the OS in batches: every id keeps the format, none
    repeats across batches, and a forked child never hands out its parent's."""
    import os

    from reasoning_core.tools._base import _IDS_PER_DRAW, new_call_id

    ids = [new_call_id() for _ in range(3 * _IDS_PER_DRAW + 5)]
    assert all(ID_RE.fullmatch(i) for i in ids)
    assert len(set(ids)) == len(ids)
    if not hasattr(os, "fork"):
        return
    import warnings

    r, w = os.pipe()
    with warnings.catch_warnings():  # Python 3.12+ warns about fork() with threads running
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.write(w, " ".join(new_call_id() for _ in range(3)).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        child = f.read().split()
    os.waitpid(pid, 0)
    parent = [new_call_id() for _ in range(3)]
    assert len(child) == 3 and all(ID_RE.fullmatch(i) for i in child)
    assert not set(child) & set(parent)
