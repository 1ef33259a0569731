"""The lanes of the vLLM and SGLang tool wrappers change nothing.

Inside a call's arguments each wrapper streams through an ``ArgsLane`` (the
scanner's step, the piece recorded, the engine's result objects built by a
``ModelShape``); outside one, a chunk our parser answers as content, whole,
goes through a ``ContentLane`` (the step, the engine's content result built by
a shape).  Here every wrapper of the formats both engines serve reads the
same text twice, in the same random chunks: once as shipped, once with both
lanes switched off (the general path for every chunk).  Each chunk's result, and the
bookkeeping the engine reads after it (vLLM: ``prev_tool_call_arr``,
``streamed_args_for_tool``, ``current_tool_id``; SGLang: the same two lists),
must be the same; so must the end of the stream.  The texts: content, then two
calls whose string argument is code with quotes, backslashes, markup and
non-ASCII text, so that chunks end inside escapes and markers, with content
between and after them.

Skips without vLLM or SGLang.
"""
from __future__ import annotations

import contextlib
import json
import random
import re

import pytest

from test_hardening_tools import call_text

CODE = ('def f(x):\n    return "caf\u00e9\\t" + x  # <tool_call> {"a": [1]}\n'
        '    print(\'[TOOL_CALLS]\', r"\\d+")\n') * 12
# (vLLM name, SGLang name, our format): the formats both engines serve
NAMES = [("hermes", "qwen25", "hermes"), ("qwen3_coder", "qwen3_coder", "qwen3_coder"),
         ("deepseek_v3", "deepseekv3", "deepseek_v3"), ("deepseek_v31", "deepseekv31", "deepseek_v31"),
         ("kimi_k2", "kimi_k2", "kimi_k2"), ("glm45", "glm45", "glm45"),
         ("minimax_m2", "minimax-m2", "minimax_m2"), ("mistral", "mistral", "mistral"),
         ("llama3_json", "llama3", "llama3_json")]
SEEDS = (-1, 0, 1, 2, 3)


def _text(fmt: str) -> str:
    one = call_text(fmt, "write_file", "c", json.dumps(CODE))
    two = call_text(fmt, "write_file", "c", json.dumps(CODE[::-1]))
    return " \n I will write it.\n" + one + "\n\nThen the other one.\n" + two + "\n \nBoth are written."


def _chunks(text: str, seed: int) -> list[str]:
    if seed < 0:  # runs of whitespace and of other text: whitespace-only chunks around the calls
        return re.findall(r"\s+|\S+", text)
    rnd = random.Random(seed)
    out, i = [], 0
    while i < len(text):
        n = rnd.choice((1, 2, 3, 5, 8, 13))
        out.append(text[i:i + n])
        i += n
    return out


def _dump(m):
    """The message as a client sees it, call ids (random) marked as given."""
    if m is None:
        return None
    d = m.model_dump(exclude_unset=True)
    for tc in d.get("tool_calls") or ():
        if tc.get("id"):
            tc["id"] = "<id>"
    return d


def _compare(run, name, fmt, monkeypatch) -> int:
    """``run`` with the lanes and without them, over each seed's chunks: the
    same trace every time; answers in how many runs the argument lane
    streamed and in how many the content lane answered."""
    text = _text(fmt)
    lanes = contents = 0
    for seed in SEEDS:
        chunks = _chunks(text, seed)
        got, used, cused = run(name, chunks, True, monkeypatch)
        want, unused, cunused = run(name, chunks, False, monkeypatch)
        assert not unused and not cunused
        assert got == want, (name, seed)
        lanes += used
        contents += cused
    return lanes, contents


# ------------------------------------------------------------------ vLLM

@contextlib.contextmanager
def _vllm_parser(name, lane: bool, monkeypatch):
    """Our vLLM parser of ``name``; with ``lane`` false, both lanes switched off."""
    from vllm_helpers import vllm_tokenizer
    from vllm_serving_helpers import union_specials

    from reasoning_core.integrations import vllm as rcv

    with monkeypatch.context() as mp:
        if not lane:
            mp.setattr(rcv, "_ARGS_SHAPE", None)
            mp.setattr(rcv, "_CONTENT_SHAPE", None)
        yield rcv.TOOL_PARSERS[name](vllm_tokenizer(union_specials()), None)


def _vllm_run(name, chunks, lane: bool, monkeypatch):
    from vllm_helpers import chat_request

    with _vllm_parser(name, lane, monkeypatch) as parser:
        request = chat_request(tools=[{"type": "function", "function": {"name": "write_file", "parameters": {
            "type": "object", "properties": {"c": {"type": "string"}}}}}])
        trace, prev, content_lane, used = [], "", False, False
        for c in chunks:
            content_lane |= parser._chot is not None and parser._hot is None
            used |= parser._hot is not None  # (the lane ends with the stream)
            m = parser.extract_tool_calls_streaming(prev, prev + c, c, (), (), (), request)
            prev += c
            trace.append((_dump(m), [dict(x) for x in parser.prev_tool_call_arr],
                          list(parser.streamed_args_for_tool), parser.current_tool_id))
        trace.append(_dump(parser.finish_streaming()))
    return trace, used, content_lane


@pytest.mark.parametrize("vname,_sname,fmt", NAMES)
def test_vllm_lane_streams_what_the_general_path_streams(vname, _sname, fmt, monkeypatch):
    from vllm_helpers import import_vllm

    import_vllm()
    lanes, contents = _compare(_vllm_run, vname, fmt, monkeypatch)
    assert lanes and contents  # the lanes did stream these calls and answer content


# ------------------------------------------------------------------ SGLang

@contextlib.contextmanager
def _sglang_parser(name, lane: bool, monkeypatch):
    """SGLang's FunctionCallParser around our detector of ``name`` (one tool,
    ``write_file``); with ``lane`` false, both lanes switched off."""
    from sglang.srt.entrypoints.openai.protocol import Function, Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    from reasoning_core.integrations import sglang as rcs

    tools = [Tool(type="function", function=Function(name="write_file", description="d", parameters={
        "type": "object", "properties": {"c": {"type": "string"}}}))]
    with monkeypatch.context() as mp:
        if not lane:
            mp.setattr(rcs, "_FC_ARGS_SHAPE", None)
            mp.setattr(rcs, "_FC_NORMAL_SHAPE", None)
        yield FunctionCallParser(tools, f"rc_{name}")


def _sglang_run(name, chunks, lane: bool, monkeypatch):
    with _sglang_parser(name, lane, monkeypatch) as p:
        trace, content_lane, used = [], False, False
        for c in chunks:
            content_lane |= getattr(p.detector, "_chot", None) is not None and p.detector._hot is None
            used |= p.detector._hot is not None  # (a call's lane is dropped when the call closes)
            normal, calls = p.parse_stream_chunk(c)
            d = p.detector
            trace.append((normal, [x.model_dump() for x in calls], [dict(x) for x in d.prev_tool_call_arr],
                          list(d.streamed_args_for_tool)))
        normal, calls = p.parse_stream_end()
        trace.append((normal, [x.model_dump() for x in calls]))
    return trace, used, content_lane


@pytest.mark.parametrize("_vname,sname,fmt", NAMES)
def test_sglang_lane_streams_what_the_general_path_streams(_vname, sname, fmt, monkeypatch):
    from sglang_max_helpers import import_sglang_parsers

    _, rcs = import_sglang_parsers()
    rcs.register()
    lanes, contents = _compare(_sglang_run, sname, fmt, monkeypatch)
    if sname not in ("qwen3_coder", "mistral"):  # these two send arguments at the engine's own points
        assert lanes and contents  # the lanes did stream these calls and answer content


def _sglang_streams(streams, lane: bool, monkeypatch):
    # one FunctionCallParser reused for several streams, each ended with parse_stream_end
    with _sglang_parser("qwen25", lane, monkeypatch) as p:
        out = []
        for chunks in streams:
            trace = []
            for c in chunks:
                normal, calls = p.parse_stream_chunk(c)
                trace.append((normal, [x.model_dump() for x in calls]))
            normal, calls = p.parse_stream_end()
            trace.append((normal, [x.model_dump() for x in calls]))
            out.append(trace)
    return out


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 1000])
def test_sglang_lane_of_an_ended_stream_reads_nothing_of_the_next(size, monkeypatch):
    # (found by the SGLang tool fuzz target) a detector reused after parse_stream_end: the lane
    # of the first stream's last call must not take the next stream's call 0 (to a tool the
    # request does not list, so dropped) for its own
    from sglang_max_helpers import import_sglang_parsers

    _, rcs = import_sglang_parsers()
    rcs.register()
    first = ('<tool_call>{"name": "write_file", "arguments": {"c": "ab"}}</tool_call>'
             '<tool_call>{"name": "unlisted", "arguments": {"c": "x"}}</tool_call>')
    second = '<tool_call>{"name": "unlisted", "arguments": {"c": "leak"}}</tool_call>'
    streams = [[t[i:i + size] for i in range(0, len(t), size)] for t in (first, second)]
    got = _sglang_streams(streams, True, monkeypatch)
    assert got == _sglang_streams(streams, False, monkeypatch)
    assert not any(calls for _normal, calls in got[1])


def _vllm_requests(name, steps, lane: bool, monkeypatch):
    # one parser, the steps: ("delta", request, text) or ("finish",)
    with _vllm_parser(name, lane, monkeypatch) as parser:
        trace, prev = [], ""
        for step in steps:
            if step[0] == "finish":
                trace.append(_dump(parser.finish_streaming()))
                prev = ""
                continue
            _, request, c = step
            trace.append(_dump(parser.extract_tool_calls_streaming(prev, prev + c, c, (), (), (), request)))
            prev += c
    return trace


@pytest.mark.parametrize("vname,_sname,fmt", [n for n in NAMES if n[0] in ("hermes", "glm45", "kimi_k2")])
def test_vllm_lane_of_an_ended_stream_does_not_outlive_it(vname, _sname, fmt, monkeypatch):
    # (found by the vLLM tool fuzz target) a stream cut inside a call, then a request with
    # tool_choice="none" whose finish_streaming completes that call: the next stream of the same
    # request is content, as the general path has it; no lane of the ended stream reads it
    from vllm_helpers import chat_request, import_vllm

    import_vllm()
    tools = [{"type": "function", "function": {"name": "write_file", "parameters": {
        "type": "object", "properties": {"c": {"type": "string"}}}}}]
    auto, none = chat_request(tools=tools), chat_request(tools=tools, tool_choice="none")
    call = call_text(fmt, "write_file", "c", json.dumps("abc"))
    cut = call[:call.index("abc") + 2]
    steps = [("delta", auto, "Hi "), ("delta", auto, cut), ("delta", none, "x"), ("finish",),
             ("delta", none, call[:5]), ("delta", none, call[5:]), ("finish",)]
    got = _vllm_requests(vname, steps, True, monkeypatch)
    assert got == _vllm_requests(vname, steps, False, monkeypatch)
    assert "".join((m or {}).get("content") or "" for m in got[4:6]) == call
    assert not any((m or {}).get("tool_calls") for m in got[4:6])
