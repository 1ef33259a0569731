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


def test_gemma4_core_format_reads_dotted_names():
    """The format itself (every engine): ``weather.get`` is a name; a name with a
    space is not one outside vLLM's rules."""
    from reasoning_core import tools

    p = tools.create("gemma4")
    out = p.parse_complete('<|tool_call>call:weather.get{location:<|"|>Oslo<|"|>}<tool_call|>')
    assert [(c.name, json.loads(c.arguments)) for c in out.tool_calls] == [("weather.get", {"location": "Oslo"})]
    with pytest.raises(ValueError):
        p.parse_complete("<|tool_call>call:bad func<tool_call|>")
