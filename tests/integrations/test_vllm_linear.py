"""The vLLM tool-parser wrappers do O(delta) work per call (issue 26).

For every tool format served under a vLLM name, one call whose string
argument is N or 4N characters is streamed in 12-character deltas through
``extract_tool_calls_streaming``.  Checked two ways:

- structure: the bookkeeping vLLM reads (``streamed_args_for_tool``,
  ``prev_tool_call_arr``) is kept as pieces during the stream and equals the
  streamed arguments when read;
- time: 4x the arguments costs at most 6x the time (best of several runs,
  so a loaded machine slows both sizes alike; a quadratic wrapper costs 16x).

Skips without vLLM.
"""
from __future__ import annotations

import json
import time

import pytest

from vllm_helpers import chat_request, import_vllm, vllm_tokenizer

import_vllm()

from reasoning_core.integrations import vllm as rcv  # noqa: E402
from test_hardening_tools import call_text  # noqa: E402
from vllm_serving_helpers import union_specials  # noqa: E402

TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": {
    "type": "object", "properties": {"c": {"type": "string"}}}}}]
CHUNK = 12


def _text(fmt: str, n: int) -> str:
    body = ("def f(x):\n    return x * 2  # ok\n" * (n // 34 + 1))[:n]
    return call_text(fmt, "write_file", "c", json.dumps(body))


def _stream(name: str, text: str):
    tok = vllm_tokenizer(union_specials())
    parser = rcv.TOOL_PARSERS[name](tok, None)
    request = chat_request(tools=TOOLS)
    args: dict[int, list[str]] = {}
    parser._n_deltas = args_count = {}
    t0 = time.process_time()
    for i in range(0, len(text), CHUNK):
        m = parser.extract_tool_calls_streaming("", "", text[i:i + CHUNK], (), (), (), request)
        for tc in (m.tool_calls if m is not None else None) or ():
            if tc.function is not None and tc.function.arguments:
                args.setdefault(tc.index, []).append(tc.function.arguments)
                args_count[tc.index] = args_count.get(tc.index, 0) + 1
    m = parser.finish_streaming()
    elapsed = time.process_time() - t0
    for tc in (m.tool_calls if m is not None else None) or ():
        if tc.function is not None and tc.function.arguments:
            args.setdefault(tc.index, []).append(tc.function.arguments)
            args_count[tc.index] = args_count.get(tc.index, 0) + 1
    return parser, {k: "".join(v) for k, v in args.items()}, elapsed


def _formats() -> list[str]:
    out = []
    for name, cls in sorted(rcv.TOOL_PARSERS.items()):
        try:
            _text(cls.rc_format, 100)
        except AssertionError:  # no sample writer for this format
            continue
        out.append(name)
    return out


FORMATS = _formats()


@pytest.mark.parametrize("name", FORMATS)
def test_bookkeeping_is_kept_as_pieces(name):
    parser, args, _ = _stream(name, _text(rcv.TOOL_PARSERS[name].rc_format, 4000))
    if not args:
        pytest.skip(f"{name}: the sample call streams no arguments")
    pieces = parser._arg_pieces
    for index in args:  # one piece per streamed argument delta: nothing was joined during the stream
        assert len(pieces[index]) == parser._n_deltas[index]
    streamed = parser.streamed_args_for_tool
    for index, text in args.items():
        assert streamed[index] == text
        assert parser.prev_tool_call_arr[index]["arguments"] == text
    assert parser.get_remaining_unstreamed_args() == ""


@pytest.mark.parametrize("name", FORMATS)
def test_four_times_the_arguments_cost_at_most_six_times(name):
    fmt = rcv.TOOL_PARSERS[name].rc_format
    small, large = _text(fmt, 24_000), _text(fmt, 96_000)

    def best(text: str) -> float:
        return min(_stream(name, text)[2] for _ in range(2))

    t_small, t_large = best(small), best(large)
    if t_large > 6 * t_small:  # one retry: a burst of load during one size
        t_small, t_large = best(small), best(large)
    assert t_large <= 6 * t_small, f"{name}: x4 arguments took x{t_large / t_small:.1f}"
