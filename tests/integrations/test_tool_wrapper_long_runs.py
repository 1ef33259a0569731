"""Names and keys past every format's limit, between good calls, through each
engine's tool classes: streamed in any deltas as in one delta.

A format reads a name, key or id up to a limit (64 characters for most,
256 for vllm-mlx's ``mistral``); a longer run is no call.  Where the run was
cut depended on where the buffer ended, so the content after it did too
(``pythonic`` after a call in the same list, compact ``mistral`` calls).
Each class gets a 300- or 70-character name or key in a call between two
good ones, fed whole, one character at a time and seven at a time, and must
answer the same content and calls every time.  (vllm-mlx's classes: in
``test_vllm_mlx_tool_regressions.py``, run in their own environment.)
"""
from __future__ import annotations

import importlib
import os
import sys
import warnings

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz"))
from tool_targets import call_template  # noqa: E402

RUNS = {"name300": ("n" * 300, "city"), "key300": ("get_weather", "k" * 300),
        "name70": ("n" * 70, "city"), "key70": ("get_weather", "k" * 70)}


def long_run_texts(fmt: str) -> dict:
    """For each run: a block of three calls with the bad one in the middle,
    after and before some text; and the bad call alone.  The block is written
    by the format's suite's writer where it has one (several calls in one
    list or block), else the calls are the fuzz targets' template one after
    another; ``mistral`` also gets its compact form (``[TOOL_CALLS]name[ARGS]``)."""
    from toolstreams import further_suite, write_calls

    try:
        suite = further_suite(fmt)
    except (ValueError, ImportError):
        suite = None
    tpl = call_template(fmt)
    assert suite is not None or tpl, f"no writer for {fmt}"

    def block(*calls):
        if suite is not None:
            return write_calls(fmt, [(n, {k: "Paris"}) for n, k in calls])
        return "".join(tpl.replace("NAMEQQ", n).replace("KEYQQ", k).replace("VALQQ", '"Paris"') for n, k in calls)

    good = ("get_weather", "city")
    out = {}
    for label, bad in RUNS.items():
        text = block(good, bad, good)
        assert bad[0] in text and bad[1] in text, (fmt, label)
        out[label] = "Hi " + text + " tail"
        out[label + " alone"] = block(bad)
        if fmt == "mistral":
            out[label + " compact"] = "Hi [TOOL_CALLS]" + bad[0] + '[ARGS]{"' + bad[1] + '": "Paris"} tail'
    return out


def _chunkings(text: str):
    return [[text]] + [[text[i:i + k] for i in range(0, len(text), k)] for k in (1, 7)]


def _merge(calls: dict, index, name, args) -> None:
    c = calls.setdefault(index, ["", ""])
    c[0] += name or ""
    c[1] += args or ""


def _same_everywhere(run, fmt: str) -> None:
    for label, text in long_run_texts(fmt).items():
        got = [run(chunks) for chunks in _chunkings(text)]
        assert all(g == got[0] for g in got[1:]), (label, got)


def _names(module: str, table: str, engine: str) -> list:
    """The names ``reasoning_core.integrations.<module>`` serves (its ``table``),
    or one placeholder whose test skips when the engine is absent."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mod = importlib.import_module(f"reasoning_core.integrations.{module}")
        return sorted(getattr(mod, table))
    except Exception:  # noqa: BLE001 - without the engine its test skips
        return [f"({engine} absent)"]


# ------------------------------------------------------------------ vLLM

def _vllm():
    from vllm_helpers import import_vllm

    import_vllm()
    from tool_targets import _vllm_setup

    from reasoning_core.integrations import vllm as rcv

    return rcv, _vllm_setup()


@pytest.mark.parametrize("name", _names("vllm", "TOOL_PARSERS", "vLLM"))
def test_vllm_classes(name):
    rcv, (tok, requests, _tools) = _vllm()
    cls = rcv.TOOL_PARSERS[name]
    req = dict(requests)["auto"]

    def run(chunks):
        p, prev, content, calls = cls(tok), "", [], {}

        def take(m):
            if m is not None:
                content.append(m.content or "")
                for tc in m.tool_calls or ():
                    fn = tc.function
                    _merge(calls, tc.index, fn and fn.name, fn and fn.arguments)

        for ch in chunks:
            ids = list(range(len(ch)))
            take(p.extract_tool_calls_streaming(prev, prev + ch, ch, [], ids, ids, req))
            prev += ch
        take(p.finish_streaming())
        return "".join(content), [tuple(calls[i]) for i in sorted(calls)]

    _same_everywhere(run, cls.rc_format)


# ------------------------------------------------------------------ SGLang

@pytest.mark.parametrize("name", _names("sglang", "TOOL_DETECTORS", "SGLang"))
def test_sglang_classes(name):
    from sglang_max_helpers import import_sglang_parsers

    import_sglang_parsers()
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from tool_targets import _sglang_tools

    from reasoning_core.integrations import sglang as rcs

    rcs.register()
    tools = _sglang_tools()["a"]

    def run(chunks):
        p, content, calls = FunctionCallParser(tools, f"rc_{name}"), [], {}
        for ch in chunks + [None]:
            normal, cs = p.parse_stream_chunk(ch) if ch is not None else p.parse_stream_end()
            content.append(normal or "")
            for c in cs:
                _merge(calls, c.tool_index, c.name, c.parameters)
        return "".join(content), [tuple(calls[i]) for i in sorted(calls)]

    _same_everywhere(run, rcs.TOOL_DETECTORS[name].tool_format)


# ------------------------------------------------------------------ MAX

@pytest.mark.parametrize("name", _names("max", "TOOL_PARSERS", "MAX"))
def test_max_classes(name):
    from sglang_max_helpers import import_max

    import_max()
    from reasoning_core.integrations import max as rcm

    cls = rcm.TOOL_PARSERS[name]

    def run(chunks):
        p, content, calls = cls(), [], {}

        def take(out):
            for d in out:
                if d.content is not None:
                    content.append(d.content)
                else:
                    _merge(calls, d.index, d.name, d.arguments)

        for ch in chunks:
            out = p.parse_delta(ch)
            if out is None:  # the delta is content as it came
                content.append(ch)
            else:
                take(out)
        take(p.finish())
        return "".join(content), [tuple(calls[i]) for i in sorted(calls)]

    _same_everywhere(run, cls.tool_format)
