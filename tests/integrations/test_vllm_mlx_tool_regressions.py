"""Regressions found by the ``mlx_tools`` fuzz target (tests/fuzz/tool_targets.py).

``finalize_streaming`` read the calls still open after ``finish()`` had reset
the parser (a new, empty list of calls): a last call without its closing
markup, which one-shot parsing completes, was never streamed.
"""
from __future__ import annotations

import json

import pytest

pytest.importorskip("vllm_mlx.tool_parsers")
M = pytest.importorskip("reasoning_core.integrations.vllm_mlx")

DS = ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>")
# Each served format: one call whose body is complete but whose closing markup never came.
CUT = {
    "deepseek_v3": DS[0] + DS[1] + "function" + DS[2] + 'get_weather\n```json\n{"city": "Paris"}',
    "kimi_k2": '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0'
               '<|tool_call_argument_begin|>{"city": "Paris"}',
    "glm45": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris",
    "minimax_m2": '<minimax:tool_call><invoke name="get_weather"><parameter name="city">Paris',
    "qwen3_coder": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n",
    "granite": '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}',
    "xlam": '[{"name": "get_weather", "arguments": {"city": "Paris"}}',
}


def _stream(parser, text, step=3):
    calls, prev = [], ""
    for i in range(0, len(text), step):
        ch = text[i:i + step]
        out = parser.extract_tool_calls_streaming(prev, prev + ch, ch) or {}
        prev += ch
        calls += out.get("tool_calls") or []
    calls += (parser.finalize_streaming(prev) or {}).get("tool_calls") or []
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


@pytest.mark.parametrize("name", sorted(M.TOOL_PARSERS))
def test_a_last_call_left_open_is_streamed_at_the_end(name):
    cls = M.TOOL_PARSERS[name]
    assert cls.tool_format in CUT, f"no cut call written for {cls.tool_format}"
    text = "Let me check. " + CUT[cls.tool_format] if cls.tool_format not in ("granite", "xlam") else CUT[cls.tool_format]
    one = cls(None).extract_tool_calls(text)
    want = [(c["name"], json.loads(c["arguments"])) for c in one.tool_calls]
    assert [n for n, _ in want] == ["get_weather"], (name, one)
    p = cls(None)
    assert _stream(p, text) == want
    # and the instance, reused after its end of stream, streams the next request alike
    assert _stream(p, text, step=5) == want
