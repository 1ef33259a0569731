"""vllm-mlx tool and reasoning parsers (ours under its names) on degenerate
output: linear work.

The same runs as ``test_tool_wrappers_degenerate_values.py`` gives the vLLM,
SGLang and MAX wrappers: inside an open call's argument value (backslashes,
brackets, the format's own closer cut short...) and outside any call (the
opener cut short, newlines), fed in 4-character deltas through
``extract_tool_calls_streaming`` and ``finalize_streaming``: ×4 the run, at
most ×6 the time.  The texts before each delta are not built (a run of 100 k
characters would need gigabytes of them): ``None`` is passed, and our parsers
count what they were fed.

The reasoning parsers get the runs the vLLM and MAX reasoning classes get in
``test_degenerate_linearity.py`` (blank runs, partial and repeated markers).

CI runs two kinds of each; ``REASONING_CORE_FULL_ENGINE_TESTS=1`` every kind.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/ (run with --noconftest)
sys.path.insert(0, str(Path(__file__).resolve().parent))

pytest.importorskip("vllm_mlx.tool_parsers")
M = pytest.importorskip("reasoning_core.integrations.vllm_mlx")

from degenerate_helpers import FULL, cases, check, format_of  # noqa: E402
from reasoning_core import tools  # noqa: E402
from streams import degenerate_outputs  # noqa: E402
from test_hardening_round3_growth import _assert_linear, _chunks  # noqa: E402

REQUEST = {"tools": [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"a": {"type": "string"}}}}}]}


@pytest.mark.parametrize("name,kind,quote", cases(sorted(M.TOOL_PARSERS)))
def test_vllm_mlx_tool_parser_linear_on_degenerate_output(name, kind, quote):
    cls = M.TOOL_PARSERS[name]

    def run(chunks):
        p = cls()
        f = p.extract_tool_calls_streaming
        for c in chunks:
            f(None, None, c, request=REQUEST)
        p.finalize_streaming()

    check(name, format_of(tools.get_parser_cls(cls.tool_format)), kind, quote, run)


REASONING_KINDS = ("newlines", "spaces", "partial_end", "partial_start", "repeated_markers") if FULL else (
    "newlines", "partial_end")


@pytest.mark.parametrize("kind", REASONING_KINDS)
@pytest.mark.parametrize("name", sorted(M.REASONING_PARSERS))
def test_vllm_mlx_reasoning_parser_linear_on_degenerate_output(name, kind):
    cls = M.REASONING_PARSERS[name]
    probe = cls()
    start, end = probe.start_token, probe.end_token
    assert start and end, name

    def run(chunks):
        p = cls()
        f = p.extract_reasoning_streaming
        for c in chunks:
            f(None, None, c)

    _assert_linear(f"{name}: {kind}", run, lambda n: _chunks(degenerate_outputs(start, end, n)[kind], 4), 400)


_DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize("name", sorted(M.TOOL_PARSERS))
def test_tool_parsers_keep_values_nested_too_deep_for_json(name):
    # An array value nested deeper than Python's JSON reader goes, next to a
    # string with a quote (the schema's object/array values written as Python
    # literals are read then): nothing raises, one-shot or streamed.
    request = {"tools": [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "array"}, "b": {"type": "string"}}}}}]}
    args = '{"a": ' + _DEEP + ', "b": "it\'s"}'
    texts = [f'<tool_call>\n{{"name": "f", "arguments": {args}}}\n</tool_call>',
             f"<tool_call>\n<function=f>\n<parameter=a>\n{_DEEP}\n</parameter>\n<parameter=b>\nit's\n</parameter>\n"
             "</function>\n</tool_call>"]
    cls = M.TOOL_PARSERS[name]
    for text in texts:
        cls(None).extract_tool_calls("x " + text, request)
        p, prev = cls(None), ""
        for i in range(0, len(text), 7):
            d = text[i:i + 7]
            p.extract_tool_calls_streaming(prev, prev + d, d, request=request)
            prev += d
