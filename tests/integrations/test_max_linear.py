"""Every MAX integration class does O(delta) work per call, whatever was streamed before.

A per-call cost that grows with what was streamed shows as late calls costing
more than early ones: a call streaming one long argument (or one long
reasoning block) is fed in small deltas and the calls near the end are timed
against the calls near the start (best of several rounds, so a busy machine
slows both alike).  Quadratic work makes the late calls cost tens of times the
early ones at these sizes; linear work keeps the ratio near 1.  Our wrapper is
compared with the bare ``reasoning_core.tools`` parser it wraps, so only what
the wrapper adds is judged here.  Skips without MAX.
"""
from __future__ import annotations

import random
import statistics
import time

import pytest

from sglang_max_helpers import import_max

rcm = import_max()

from reasoning_core import tools  # noqa: E402

NAMES = sorted(rcm.TOOL_PARSERS)
SIZE = 96_000
STEP = 12
BLOCK = 400


def _text(name: str) -> str:
    from test_tools_max_differential import render

    return render(name, [("write_file", {"c": "abc defg\\n " * (SIZE // 11)})], random.Random(0))


def _late_over_early(make, pieces, feed) -> float:
    """Median per-call time of the last BLOCK calls over that of the first BLOCK
    (medians: a scheduler hiccup moves a few calls, not the median), best of 3."""
    clock = time.perf_counter_ns
    ratios = []
    for _ in range(3):
        p = make()
        early, late = [], []
        for piece in pieces[:BLOCK]:
            t = clock()
            feed(p, piece)
            early.append(clock() - t)
        for piece in pieces[BLOCK:-BLOCK]:
            feed(p, piece)
        for piece in pieces[-BLOCK:]:
            t = clock()
            feed(p, piece)
            late.append(clock() - t)
        ratios.append(statistics.median(late) / max(1, statistics.median(early)))
    return min(ratios)


@pytest.mark.parametrize("name", NAMES)
def test_tool_wrapper_per_call_cost_does_not_grow(name):
    text = _text(name)
    pieces = [text[i:i + STEP] for i in range(0, len(text), STEP)]
    assert len(pieces) > 4 * BLOCK
    cls = rcm.TOOL_PARSERS[name]

    def wrapped():
        p = cls()
        p.reset()
        return p

    # The count: what the wrapper hands MAX adds up to what was streamed (no
    # re-emitted or re-built accumulated arguments).
    p, emitted = wrapped(), 0
    for piece in pieces:
        out = p.parse_delta(piece)
        if out is None:
            emitted += len(piece)
        else:
            emitted += sum(len(d.arguments or "") + len(d.content or "") for d in out)
    assert emitted <= 2 * len(text) + 64, (name, emitted, len(text))  # JSON escaping at most doubles here
    # The time: late calls cost what early ones do, beyond what the bare parser shows.
    ours = _late_over_early(wrapped, pieces, lambda p, s: p.parse_delta(s))
    bare = _late_over_early(lambda: tools.create(name), pieces, lambda p, s: p.parse_delta(s))
    assert ours <= max(1.5, 1.3 * bare), (name, ours, bare)


@pytest.mark.parametrize("name", sorted(rcm.REASONING_PARSERS))
def test_reasoning_wrapper_per_call_cost_does_not_grow(name):
    import asyncio

    from test_max import encode, tokenizer_for

    from max.pipelines.lib import reasoning as max_reasoning

    tok = tokenizer_for(name)
    spec = rcm.REASONING_PARSERS[name].spec
    start = "<|start|>assistant to=self<|message|>" if name == "muse_glimmer" else spec.start
    ids = encode(tok, start + "The user asks for the sum of two numbers. " * 600)
    pieces = [ids[i:i + 2] for i in range(0, len(ids), 2)]
    if len(pieces) <= 4 * BLOCK:
        pytest.skip("this vocabulary makes too few tokens")
    rcm.register()

    def make():
        p = asyncio.run(max_reasoning.create(f"rc_{name}", tok))
        p.reset()
        return p

    def feed(p, chunk):
        d = p.stream(chunk, True)
        d.span.extract_content(chunk)
        d.span.extract_reasoning(chunk)

    assert _late_over_early(make, pieces, feed) <= 1.5
