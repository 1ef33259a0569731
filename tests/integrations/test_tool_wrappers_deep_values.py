"""Argument values nested deeper than Python's JSON reader goes (thousands of
``[`` or ``{"x":``) through every vLLM, SGLang and MAX tool wrapper: streamed
in chunks and whole, read back (SGLang's ``prev_tool_call_arr``, vLLM's
bookkeeping) and parsed one-shot, nothing raises.  Where a wrapper reads the
arguments as JSON (to normalise them, to coerce them to the schema, to fill
the engine's bookkeeping), a ``RecursionError`` once escaped from model
output; such a value is now kept as written.  Skips an engine that is absent.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz"))

from degenerate_helpers import format_of  # noqa: E402
from tool_targets import call_template  # noqa: E402

DEEP = {"arrays": "[" * 5000 + "]" * 5000, "objects": '{"x": ' * 3000 + "1" + "}" * 3000}
PROPS = {"untyped": {}, "array": {"type": "array"}}


def _text(fmt: str, value: str) -> str:
    template = call_template(fmt)
    if not template:
        pytest.skip(f"no call template for {fmt}")
    return "I will call it. " + template.replace("NAMEQQ", "f").replace("KEYQQ", "a").replace("VALQQ", value)


def _chunkings(text: str):
    return [[text[i:i + 7] for i in range(0, len(text), 7)], [text]]


def _vllm():
    try:
        from vllm_helpers import import_vllm

        import_vllm()
        from reasoning_core.integrations import vllm as rcv
    except BaseException:  # noqa: BLE001 - collected without vLLM
        return None
    return rcv


def _sglang():
    try:
        from sglang_max_helpers import import_sglang_parsers

        return import_sglang_parsers()[1]
    except BaseException:  # noqa: BLE001
        return None


def _max():
    try:
        from sglang_max_helpers import import_max

        return import_max()
    except BaseException:  # noqa: BLE001
        return None


def _names(mod, attr):
    return sorted(getattr(mod, attr)) if mod is not None else []


@pytest.mark.parametrize("prop", sorted(PROPS))
@pytest.mark.parametrize("name", _names(_sglang(), "TOOL_DETECTORS"))
def test_sglang_detectors_keep_deep_values(name, prop):
    rcs = _sglang()
    from sglang.srt.entrypoints.openai.protocol import Function, Tool

    tools = [Tool(type="function", function=Function(name="f", description="d", parameters={
        "type": "object", "properties": {"a": PROPS[prop]}}))]
    cls = rcs.TOOL_DETECTORS[name]
    for value in DEEP.values():
        text = _text(cls.tool_format, value)
        for chunks in _chunkings(text):
            det = cls()
            for c in chunks:
                det.parse_streaming_increment(c, tools)
            det.finish(tools)
            assert [dict(c) for c in det.prev_tool_call_arr] is not None and list(det.streamed_args_for_tool) is not None
        cls().detect_and_parse(text, tools)


@pytest.mark.parametrize("prop", sorted(PROPS))
@pytest.mark.parametrize("name", _names(_vllm(), "TOOL_PARSERS"))
def test_vllm_tool_parsers_keep_deep_values(name, prop):
    rcv = _vllm()
    from vllm_helpers import chat_request, vllm_tokenizer
    from vllm_serving_helpers import union_specials

    tok = vllm_tokenizer(union_specials())
    request = chat_request(tools=[{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object", "properties": {"a": PROPS[prop]}}}}])
    cls = rcv.TOOL_PARSERS[name]
    fmt = format_of(type(cls(tok)._tp))
    for value in DEEP.values():
        text = _text(fmt, value)
        cls(tok).extract_tool_calls(text, request)
        for chunks in _chunkings(text):
            p, prev = cls(tok), ""
            for c in chunks:
                p.extract_tool_calls_streaming(prev, prev + c, c, [], [], [], request)
                prev += c
            p.finish_streaming()
            assert [dict(c) for c in p.prev_tool_call_arr] is not None and list(p.streamed_args_for_tool) is not None


@pytest.mark.parametrize("prop", sorted(PROPS))
@pytest.mark.parametrize("name", _names(_max(), "TOOL_PARSERS"))
def test_max_tool_parsers_keep_deep_values(name, prop):
    rcm = _max()
    cls = rcm.TOOL_PARSERS[name]
    schemas = {"f": {"type": "object", "properties": {"a": PROPS[prop]}}}
    fmt = format_of(type(cls()._rc))
    for value in DEEP.values():
        text = _text(fmt, value)
        p = cls()
        p.set_streaming_tool_schemas(schemas)
        p.parse_complete(text)
        for chunks in _chunkings(text):
            p = cls()
            p.set_streaming_tool_schemas(schemas)
            for c in chunks:
                p.parse_delta(c)
            p.finish()
