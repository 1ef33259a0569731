"""Regressions found by the tool-parser fuzz targets (tests/fuzz/tool_targets.py).

SGLang (``sglang_tools``): SGLang parses a whole response only when the
detector's ``has_tool_call`` says yes, and ours answered with SGLang's own
detector, which knows fewer forms than our format reads (InternLM's
``<|action_start|><|plugin|>`` without the space): one-shot kept as text a
call that streaming parsed.  Checked for every detector and every opening
marker of its format: where streaming finds a call, one-shot finds the same.
"""
from __future__ import annotations

import json
import os
import sys

import pytest

from sglang_max_helpers import import_sglang_parsers

import_sglang_parsers()

from sglang.srt.entrypoints.openai.protocol import Function, Tool  # noqa: E402
from sglang.srt.function_call.function_call_parser import FunctionCallParser  # noqa: E402

from reasoning_core import tools as rct  # noqa: E402
from reasoning_core.integrations import sglang as rcs  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz"))
from tool_targets import call_template  # noqa: E402

TOOLS = [Tool(type="function", function=Function(name="get_weather", description="d", parameters={
    "type": "object", "properties": {"city": {"type": "string"}}}))]


def _texts(fmt: str):
    """A call to a listed tool, with its opening marker swapped for each marker
    that opens a call in this format."""
    one = call_template(fmt).replace("NAMEQQ", "get_weather").replace("KEYQQ", "city").replace("VALQQ", '"Paris"')
    openers = rct.get_parser_cls(fmt).openers
    first = min(((one.find(o), -len(o), o) for o in openers if o in one), default=None)
    yield one
    if first is not None:
        at, _, used = first
        for o in openers:
            if o != used:
                yield one[:at] + o + one[at + len(used):]


def _stream(p, text, step=4):
    calls, normal = {}, []
    for i in range(0, len(text), step):
        n, cs = p.parse_stream_chunk(text[i:i + step])
        normal.append(n)
        for c in cs:
            d = calls.setdefault(c.tool_index, {"name": None, "args": ""})
            d["name"] = c.name or d["name"]
            d["args"] += c.parameters or ""
    n, cs = p.parse_stream_end()
    for c in cs:
        d = calls.setdefault(c.tool_index, {"name": None, "args": ""})
        d["name"] = c.name or d["name"]
        d["args"] += c.parameters or ""
    return [(d["name"], json.loads(d["args"])) for _, d in sorted(calls.items())]


@pytest.mark.parametrize("name", sorted(rcs.TOOL_DETECTORS))
def test_one_shot_finds_every_call_streaming_finds(name):
    rcs.register()
    fmt = rcs.TOOL_DETECTORS[name].tool_format
    if not call_template(fmt):
        pytest.skip(f"no call written for {fmt}")
    checked = 0
    for text in _texts(fmt):
        streamed = _stream(FunctionCallParser(TOOLS, f"rc_{name}"), text)
        if not streamed:
            continue
        checked += 1
        p = FunctionCallParser(TOOLS, f"rc_{name}")
        assert p.has_tool_call(text), (name, text)
        _normal, calls = p.parse_non_stream(text)
        assert [(c.name, json.loads(c.parameters)) for c in calls] == streamed, (name, text)
    assert checked, f"{name}: no call streamed from {list(_texts(fmt))!r}"


_STRIPPERS = sorted(n for n, c in rcs.TOOL_DETECTORS.items() if getattr(c, "stream_strip_closer", ""))


@pytest.mark.parametrize("name", _STRIPPERS)
def test_bare_closer_is_dropped_wherever_the_chunks_split_it(name):
    """A detector that drops a bare closer from streamed text drops it however
    the chunks cut it (one replace over the whole text), and text that only
    looks like the start of one is held, then released, not lost."""
    assert _STRIPPERS, "no detector strips a closer"
    rcs.register()
    closer = rcs.TOOL_DETECTORS[name].stream_strip_closer
    texts = [f"before {closer} after", f"a{closer}{closer}b", f"ends {closer}", f"x {closer[:-1]}",
             f"{closer[:5]}{closer}{closer[5:]}", "plain " + closer[:3]]
    for text in texts:
        want = text.replace(closer, "")
        for cuts in [(i,) for i in range(1, len(text))] + [tuple(range(1, len(text)))]:
            bounds = (0, *cuts, len(text))
            p = FunctionCallParser(TOOLS, f"rc_{name}")
            got = [p.parse_stream_chunk(text[a:b])[0] for a, b in zip(bounds, bounds[1:])]
            end, calls = p.parse_stream_end()
            assert not calls
            assert "".join(got) + end == want, (text, cuts, got, end)
