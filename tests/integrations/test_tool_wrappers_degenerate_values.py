"""Degenerate runs inside an open call's argument value, and in the text
outside any call, through every tool wrapper we register with vLLM, SGLang
and MAX: linear work.

``test_hardening_round3_growth`` checks the bare parsers on these runs
(backslashes, brackets, the format's own closer cut short, the opener cut
short...); the wrappers add bookkeeping per argument piece (the pieces vLLM
and SGLang read, SGLang's JSON closer, the held deltas of the classes that
send only at a closer) and a content lane, which must stay O(delta) on such
output too: ×4 the run, at most ×6 the time.  (SGLang's detectors also have
content runs in ``test_sglang_linearity.py``.)

CI runs two kinds of run inside a string and two outside a call;
``REASONING_CORE_FULL_ENGINE_TESTS=1`` runs every kind, also where a value
starts.  Skips without the engines.
"""
from __future__ import annotations

import pytest

from degenerate_helpers import SCHEMA, cases, check, format_of


# -- vLLM -----------------------------------------------------------------------------

def _vllm():
    from vllm_helpers import import_vllm

    import_vllm()
    from reasoning_core.integrations import vllm as rcv

    return rcv


def _vllm_names():
    try:
        return sorted(_vllm().TOOL_PARSERS)
    except BaseException:  # noqa: BLE001 - collected without vLLM: the test skips
        return []


_VLLM = {}


@pytest.mark.parametrize("name,kind,quote", cases(_vllm_names()))
def test_vllm_tool_parser_linear_on_degenerate_values(name, kind, quote):
    rcv = _vllm()
    from vllm_helpers import chat_request, vllm_tokenizer
    from vllm_serving_helpers import union_specials

    if "tok" not in _VLLM:
        _VLLM["tok"] = vllm_tokenizer(union_specials())
    cls = rcv.TOOL_PARSERS[name]
    request = chat_request(tools=[{"type": "function", "function": {"name": "f", "parameters": SCHEMA}}])

    def run(chunks):
        p = cls(_VLLM["tok"], None)
        f = p.extract_tool_calls_streaming
        for c in chunks:
            f("", "", c, (), (), (), request)
        if hasattr(p, "finish_streaming"):
            p.finish_streaming()

    check(name, format_of(type(cls(_VLLM["tok"], None)._format())), kind, quote, run)


# -- SGLang ---------------------------------------------------------------------------

def _sglang():
    from sglang_max_helpers import import_sglang_parsers

    return import_sglang_parsers()[1]


def _sglang_names():
    try:
        return sorted(_sglang().TOOL_DETECTORS)
    except BaseException:  # noqa: BLE001 - collected without SGLang: the test skips
        return []


@pytest.mark.parametrize("name,kind,quote", cases(_sglang_names()))
def test_sglang_detector_linear_on_degenerate_values(name, kind, quote):
    rcs = _sglang()
    from sglang.srt.entrypoints.openai.protocol import Function, Tool

    cls = rcs.TOOL_DETECTORS[name]
    sg_tools = [Tool(type="function", function=Function(name="f", parameters=SCHEMA))]

    def run(chunks):
        det = cls()
        f = det.parse_streaming_increment
        for c in chunks:
            f(c, sg_tools)
        det.finish(sg_tools)

    check(name, format_of(type(cls()._parser)), kind, quote, run)


# -- MAX ------------------------------------------------------------------------------

def _max():
    from sglang_max_helpers import import_max

    return import_max()


def _max_names():
    try:
        return sorted(_max().TOOL_PARSERS)
    except BaseException:  # noqa: BLE001 - collected without MAX: the test skips
        return []


@pytest.mark.parametrize("name,kind,quote", cases(_max_names()))
def test_max_tool_parser_linear_on_degenerate_values(name, kind, quote):
    cls = _max().TOOL_PARSERS[name]

    def run(chunks):
        p = cls()
        p.reset()
        f = p.parse_delta
        for c in chunks:
            f(c)
        p.flush()

    check(name, format_of(type(cls()._rc)), kind, quote, run)
