"""vLLM-only rules of the engine-based tool parsers ``gemma4``, ``minimax_m2``,
``deepseek_v32`` and ``deepseek_v4``, against vLLM's own classes.

Each case is answered by vLLM's parser of the name and by ours registered under
it: one-shot results must be equal, and our stream (every split point, then
``finish_streaming()``) must add up to our one-shot result.  Skips without vLLM.
"""
from __future__ import annotations

import json

import pytest

from vllm_helpers import chat_request, import_vllm, vllm_tokenizer

import_vllm()

from reasoning_core.integrations import vllm as rcv  # noqa: E402


def _tool(name, props):
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


def _pair(name, specials, tools=None):
    theirs_cls = rcv._vllm_own_class("tool", name)
    if theirs_cls is None:
        pytest.skip(f"vLLM has no {name} tool parser")
    tok = vllm_tokenizer(tuple(specials))
    return (lambda: rcv.TOOL_PARSERS[name](tok, tools)), (lambda: theirs_cls(tok, tools))


def _summary(result):
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls]
    return result.tools_called, calls, result.content


def _streamed(parser, pieces, request):
    """Names and arguments (parsed) of the calls our parser streams for ``pieces``."""
    names: dict[int, str] = {}
    args: dict[int, list[str]] = {}
    prev = ""
    msgs = []
    for piece in pieces:
        msgs.append(parser.extract_tool_calls_streaming(prev, prev + piece, piece, [], [], [], request))
        prev += piece
    msgs.append(parser.finish_streaming())
    for m in msgs:
        for tc in (m.tool_calls or []) if m is not None else ():
            if tc.function is None:
                continue
            if tc.function.name:
                names[tc.index] = tc.function.name
            args.setdefault(tc.index, []).append(tc.function.arguments or "")
    return [(names[i], json.loads("".join(args[i]))) for i in sorted(names)]


def _check(name, specials, text, tools):
    """``tools`` are the request's and the parser's (vLLM's engine parsers read
    the parser's for the schema)."""
    req = chat_request(tools=tools)
    ours, theirs = _pair(name, specials, req.tools)
    mine = _summary(ours().extract_tool_calls(text, req))
    assert mine == _summary(theirs().extract_tool_calls(text, req))
    for cut in range(1, len(text)):
        assert _streamed(ours(), [text[:cut], text[cut:]], req) == mine[1], cut
    assert _streamed(ours(), list(text), req) == mine[1]
    return mine


# ---------------------------------------------------------------------------- gemma4

G4 = ("<|tool_call>", "<tool_call|>", '<|"|>', "<|channel>", "<channel|>")
G4_TOOLS = [_tool("weather.get", {"location": {"type": "string"}}), _tool("bad_func no brace", {}),
            _tool("get_weather", {"location": {"type": "string"}, "days": {"type": "integer"}})]

GEMMA4_CASES = [
    # a name with dots is a name
    '<|tool_call>call:weather.get{location:<|"|>London<|"|>}<tool_call|>',
    # a name without arguments, closed by the end marker or by the end of the output
    "<|tool_call>call:bad_func no brace<tool_call|>",
    "<|tool_call>:bad_func no brace<tool_call|>"
    '<|tool_call>call:get_weather{location:<|"|>London<|"|>}<tool_call|>',
    "Checking.<|tool_call>call:get_weather",
    # arguments cut short by the end of the output or by the end marker are completed
    '<|tool_call>call:get_weather{location:<|"|>London',
    '<|tool_call>call:get_weather{location:<|"|>London<tool_call|>',
    '<|tool_call>call:get_weather{location:<|"|>Paris<|"|>,days:3',
    '<|tool_call>call:get_weather{location:',
    '<|tool_call>call:get_weather{location',
    "<|tool_call>call:get_weather{",
]


@pytest.mark.parametrize("text", GEMMA4_CASES)
def test_gemma4_calls_as_vllm_reads_them(text):
    tools_called, calls, _ = _check("gemma4", G4, text, tools=G4_TOOLS)
    assert tools_called and calls


G4_TYPED = [_tool("set", {"flag": {"type": "boolean"}, "count": {"type": "integer"}, "label": {"type": "string"},
                          "limit": {"type": ["null", "number"]},
                          "o": {"type": "object", "properties": {"k": {"type": "integer"}}},
                          "l": {"type": "array", "items": {"type": "number"}}})]


@pytest.mark.parametrize("text", [
    # parameters the schema lists are corrected by it; a bare value is text otherwise
    '<|tool_call>call:set{flag:true,count:<|"|>5<|"|>,label:7,limit:null,extra:3}<tool_call|>',
    '<|tool_call>call:set{flag:<|"|>false<|"|>,count:12,limit:2.5}<tool_call|>',
    "<|tool_call>call:other{n:5,b:true,s:x y}<tool_call|>",
    "<|tool_call>call:set{count:4,flag:tr",
    # objects and lists: text inside too, corrected whole by the schema
    '<|tool_call>call:set{o:{k:<|"|>4<|"|>,z:1},l:[1,<|"|>2.5<|"|>],m:{n:[2,true]}}<tool_call|>',
    '<|tool_call>call:set{count:2,o:{k:7,z:<|"|>ab',
])
def test_gemma4_values_as_vllm_reads_them(text):
    tools_called, calls, _ = _check("gemma4", G4, text, tools=G4_TYPED)
    assert tools_called and calls


def test_gemma4_core_format_reads_dotted_names():
    """The format itself (every engine): ``weather.get`` is a name; a name with a
    space is not one outside vLLM's rules."""
    from reasoning_core import tools

    p = tools.create("gemma4")
    out = p.parse_complete('<|tool_call>call:weather.get{location:<|"|>Oslo<|"|>}<tool_call|>')
    assert [(c.name, json.loads(c.arguments)) for c in out.tool_calls] == [("weather.get", {"location": "Oslo"})]
    with pytest.raises(ValueError):
        p.parse_complete("<|tool_call>call:bad func<tool_call|>")


# ---------------------------------------------------------------------------- minimax_m2

MM = ("<minimax:tool_call>", "</minimax:tool_call>", "<think>", "</think>")


def _mm(body, name="write"):
    return f'<minimax:tool_call><invoke name="{name}">{body}</invoke></minimax:tool_call>'


MM_TOOLS_NONE = [_tool("write", {})]  # listed, without parameters: values stay as read
MM_TOOLS = [_tool("write", {"content": {"type": "string"}, "days": {"type": "integer"},
                            "opts": {"type": "object"}, "n": {"type": ["null", "integer"]}, "f": {"type": "boolean"}})]

MINIMAX_CASES = [
    # a value is the text between its tags, byte for byte
    _mm('<parameter name="content">    def foo():\n        return 1\n</parameter>'),
    _mm('<parameter name="content">\nSeattle\n</parameter><parameter name="days">\n5\n</parameter>'),
    # corrected by the schema where it lists the parameter (a string without one)
    _mm('<parameter name="days"> 5 </parameter><parameter name="opts">{"a": 1}</parameter>'
        '<parameter name="n">null</parameter><parameter name="f">True</parameter>'),
    _mm('<parameter name="other">42</parameter><parameter name="days">x5</parameter>'),
]


@pytest.mark.parametrize("tools", [MM_TOOLS_NONE, MM_TOOLS], ids=["no-schema", "schema"])
@pytest.mark.parametrize("text", MINIMAX_CASES)
def test_minimax_m2_values_as_vllm_reads_them(text, tools):
    tools_called, calls, _ = _check("minimax_m2", MM, text, tools)
    assert tools_called and calls


# ---------------------------------------------------------------------------- DSML

DS_TOOLS = [_tool("coerce", {"union_value": {"type": ["null", "string"]}, "bad_int": {"type": "integer"},
                             "nullable_string": {"type": ["null", "string"]}, "null_string": {"type": "string"},
                             "whole_number": {"type": "number"}, "value": {"type": "integer"},
                             "o": {"type": "object", "properties": {"k": {"type": "integer"}}}})]


def _dsml(prefix, block, params, wrapped=True, before="", after=""):
    d = "｜DSML｜" + prefix
    body = "".join(f'<{d}parameter name="{k}" string="{f}">{v}</{d}parameter>\n' for k, f, v in params)
    inv = f'<{d}invoke name="coerce">\n{body}</{d}invoke>\n'
    return before + (f"<{d}{block}>\n{inv}</{d}{block}>" if wrapped else inv) + after


DS_PARAMS = [("union_value", "false", "hello"), ("bad_int", "false", "abc"), ("nullable_string", "false", "null"),
             ("null_string", "false", "null"), ("whole_number", "false", "3.0"), ("value", "true", "42"),
             ("o", "false", '{"k": "3"}'), ("unlisted", "true", "7")]
DS_NAMES = [("deepseek_v32", "", "function_calls"), ("deepseek_v4", "", "tool_calls"), ("deepseek_v41", " ", "calls")]


@pytest.mark.parametrize("name,prefix,block", DS_NAMES)
def test_dsml_values_corrected_by_schema_streaming_too(name, prefix, block):
    """Each parameter is read and corrected as vLLM's engine does, in a stream too."""
    _, calls, _ = _check(name, ("<think>", "</think>"), _dsml(prefix, block, DS_PARAMS), DS_TOOLS)
    assert calls[0][1]["value"] == 42 and calls[0][1]["null_string"] == "null"


@pytest.mark.parametrize("name,prefix,block", DS_NAMES)
@pytest.mark.parametrize("before,after", [("", ""), ("Let me look.\n", ""), ("", "\n"), ("Let me look.\n", "\n\n")])
def test_dsml_invoke_without_its_block_is_a_call(name, prefix, block, before, after):
    params = [("value", "false", "5")]
    # the block start missing, its end kept
    d = "｜DSML｜" + prefix
    text = _dsml(prefix, block, params, wrapped=False, before=before, after=f"</{d}{block}>" + after)
    tools_called, calls, _ = _check(name, ("<think>", "</think>"), text, DS_TOOLS)
    assert tools_called and calls == [("coerce", {"value": 5})]


def test_dsml_another_dialects_block_is_content_its_invoke_a_call():
    text = _dsml("", "function_calls", [("value", "false", "5")])  # V3.2's block under deepseek_v4
    tools_called, calls, content = _check("deepseek_v4", ("<think>", "</think>"), text, DS_TOOLS)
    assert tools_called and calls == [("coerce", {"value": 5})] and content == "<｜DSML｜function_calls>\n"


def test_dsml_text_after_an_unwrapped_call_is_kept():
    """vLLM drops everything after a call; ours keeps text that is not markup."""
    text = _dsml("", "tool_calls", [("value", "false", "5")], wrapped=False, before="Sure.\n", after="Done.")
    ours, _ = _pair("deepseek_v4", ("<think>", "</think>"), None)
    out = ours().extract_tool_calls(text, chat_request(tools=DS_TOOLS))
    assert [c.function.name for c in out.tool_calls] == ["coerce"] and out.content == "Sure.\nDone."


@pytest.mark.parametrize("name,prefix,block", DS_NAMES)
def test_dsml_newlines_before_the_block_are_content(name, prefix, block):
    """vLLM keeps the two newlines the template writes before the block as content."""
    text = _dsml(prefix, block, [("value", "false", "5")], before="Let me look.\n\n")
    _, calls, content = _check(name, ("<think>", "</think>"), text, DS_TOOLS)
    assert calls == [("coerce", {"value": 5})] and content == "Let me look.\n\n"


@pytest.mark.parametrize("start", ["toolcalls", "tool"])
def test_deepseek_v4_other_block_start_spellings(start):
    d = "｜DSML｜"
    text = _dsml("", "tool_calls", [("value", "false", "5")], before="On it.\n\n").replace(
        f"<{d}tool_calls>", f"<{d}{start}>", 1)
    _, calls, content = _check("deepseek_v4", ("<think>", "</think>"), text, DS_TOOLS)
    assert calls == [("coerce", {"value": 5})] and content == "On it.\n\n"
