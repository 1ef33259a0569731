"""Linearity of the bare tool parsers (issue 26): every registered format,
arguments ×4 → streaming time ≤ ×6.

One call whose ``content`` argument is code (the ``tools_stream_2kb`` payload
grown to ~8 KB and ~32 KB by repeating its lines where the format writes them,
so each format's own encoding is kept), streamed through ``parse_delta`` in
4-character chunks on the default backend.  A parser whose per-chunk work grew
with what was streamed before would show ×16; linear work shows ×4.

Timing on a shared machine is noisy, so each size is timed best-of-``REPEATS`` in
process CPU time, the small size is large enough that start-up costs do not
flatter the ratio, and the bound leaves 50 % margin over ×4.  A second,
noise-free check counts the characters of the results each chunk returns: they
must grow exactly with the arguments (no chunk re-sends what was streamed).
Runs in CI's benchmark smoke (``python -m pytest benchmarks -q
--benchmark-disable``); it is a plain test, not a pytest-benchmark one.
"""
from __future__ import annotations

import json
import time

import pytest

from reasoning_core import tools
from workloads import TOOLS_ARGS, TOOLS_CHUNK, TOOLS_TEXTS, new_tool_parser

REPEATS = 3
SMALL_LINES = 200  # ~8 KB of arguments
FACTOR = 4
BOUND = 6.0

_DS = ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>",
       "<｜tool▁calls▁end｜>")
_ARGS_JSON = json.dumps(TOOLS_ARGS)
_PAIRS = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in TOOLS_ARGS.items())
_PARAMS = "".join(f'<parameter name="{k}">{v}</parameter>' for k, v in TOOLS_ARGS.items())
_W = "Writing the file now.\n"
# the formats workloads.TOOLS_TEXTS does not write (the formats whose suites are older)
_MORE = {
    "deepseek_v3": _W + _DS[0] + _DS[1] + "function" + _DS[2] + "write_file\n```json\n" + _ARGS_JSON + "\n```"
                   + _DS[3] + _DS[4],
    "deepseek_v31": _W + _DS[0] + _DS[1] + "write_file" + _DS[2] + _ARGS_JSON + _DS[3] + _DS[4],
    "kimi_k2": _W + "<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0"
               "<|tool_call_argument_begin|>" + _ARGS_JSON + "<|tool_call_end|><|tool_calls_section_end|>",
    "glm45": _W + "<tool_call>write_file\n" + _PAIRS + "</tool_call>",
    "minimax_m2": _W + '<minimax:tool_call><invoke name="write_file">' + _PARAMS + "</invoke></minimax:tool_call>",
    "mistral": _W + "[TOOL_CALLS][" + json.dumps({"name": "write_file", "arguments": TOOLS_ARGS}) + "]",
    "llama3_json": _W + json.dumps({"name": "write_file", "parameters": TOOLS_ARGS}),
}


def base_text(fmt: str) -> str:
    """A ~2 KB call of ``fmt`` (an alias borrows its format's text)."""
    cls = tools.get_parser_cls(fmt)
    for table in (TOOLS_TEXTS, _MORE):
        for name, text in table.items():
            if name == fmt or tools.get_parser_cls(name) is cls:
                return text
    raise AssertionError(f"no benchmark text for {fmt}")


def grown(text: str, lines: int) -> str:
    """``text`` with its code lines repeated to about ``lines`` lines: the run of
    twenty encoded lines starting at line 0 is inserted again, as many times as
    needed, where the format wrote it (JSON escapes, Python literals or raw text
    alike)."""
    a = text.index("total += values[0] ")
    b = text.index("total += values[20] ")
    seg = text[a:b]
    return text[:a] + seg * max(0, lines // 20 - 1) + text[a:]


def stream_cpu_seconds(fmt: str, text: str) -> tuple[float, int]:
    """Best-of-REPEATS CPU time to stream ``text``, and the characters returned."""
    chunks = [text[i:i + TOOLS_CHUNK] for i in range(0, len(text), TOOLS_CHUNK)]
    best = float("inf")
    returned = 0
    for _ in range(REPEATS):
        p = new_tool_parser(fmt)
        feed = p.parse_delta
        t0 = time.process_time()
        results = [feed(c) for c in chunks]
        results.append(p.finish())
        best = min(best, time.process_time() - t0)
        returned = sum(len(c) if r is None else sum(len(d.arguments or "") + len(d.content or "") for d in r)
                       for c, r in zip(chunks + [""], results))
    return best, returned


@pytest.mark.parametrize("fmt", tools.available())
def test_bare_parser_is_linear_in_the_arguments(fmt):
    small_text = grown(base_text(fmt), SMALL_LINES)
    big_text = grown(base_text(fmt), FACTOR * SMALL_LINES)
    added = len(big_text) - len(small_text)
    t_small, out_small = stream_cpu_seconds(fmt, small_text)
    t_big, out_big = stream_cpu_seconds(fmt, big_text)
    # what comes back grows with what went in, nothing re-sent (escapes may change the size a little)
    assert out_big - out_small <= 1.25 * added, (out_small, out_big, added)
    assert out_big - out_small >= 0.75 * added, (out_small, out_big, added)
    ratio = t_big / t_small
    if ratio > BOUND:  # one retry: a neighbour's burst on a shared machine
        t_small, _ = stream_cpu_seconds(fmt, small_text)
        t_big, _ = stream_cpu_seconds(fmt, big_text)
        ratio = t_big / t_small
    assert ratio <= BOUND, f"{fmt}: ×{FACTOR} arguments took ×{ratio:.1f} time ({t_small:.4f}s → {t_big:.4f}s)"
