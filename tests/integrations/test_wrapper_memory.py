"""Memory through the engine wrappers (issue 25, class 4): a long-lived server
must not grow with the number of requests whose markup varies.

5,000 requests (``REASONING_CORE_WRAPPER_REQUESTS``), each a new output whose
markup is new (tool names, argument keys and values, tag suffixes, the tools
list and its schemas), go round-robin through every vLLM, SGLang and MAX
tool-parser class (one served name per distinct format behind each engine's
classes; vllm-mlx's too where it imports) and every reasoning class of the families with a test vocabulary,
each request on a fresh instance as the engines build them (MAX's tool
parsers are also kept and ``reset()``, as its route does), streamed in
deltas and ended by the engine's end-of-stream hook.  The memory traced
(``tracemalloc``) after request 1,000 may grow by at most ``GROWTH_LIMIT``
by the last one: a cache keyed on model output or request data that grows
without bound (the issue's hunyuan tag sets grew ~330 KiB per suffix) fails
it within a few hundred requests.
"""
from __future__ import annotations

import gc
import os
import re
import sys
import tracemalloc
import warnings

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fuzz"))

REQUESTS = int(os.environ.get("REASONING_CORE_WRAPPER_REQUESTS", "5000"))
BASE_AT = min(1000, REQUESTS // 5)
GROWTH_LIMIT = 256 * 1024

VLLM = SGLANG = MAX = None
try:
    from vllm_helpers import import_vllm

    import_vllm()
    from reasoning_core.integrations import vllm as VLLM
except BaseException:  # noqa: BLE001 - without vLLM: its classes are left out
    pass
try:
    from sglang_max_helpers import import_sglang_parsers

    import_sglang_parsers()
    from reasoning_core.integrations import sglang as SGLANG
except BaseException:  # noqa: BLE001
    pass
try:
    from sglang_max_helpers import import_max

    MAX = import_max()
except BaseException:  # noqa: BLE001
    pass

pytestmark = pytest.mark.skipif(VLLM is None and SGLANG is None and MAX is None, reason="no engine installed")


# ------------------------------------------------------------------ varying markup

def _names(i: int):
    return f"fn_{i}", f"k{i % 997}_{i}", f"v{i}", f":{i * 2654435761 % 2**32:08x}"


def _markup(fmt: str, i: int) -> str:
    """Request ``i``'s output: text, a call in the format with a new name, key
    and value, a call with a new tag suffix (hunyuan's), and another format's call."""
    from tool_targets import call_template

    name, key, v, sfx = _names(i)
    tpl = call_template(fmt) or ""
    other = call_template(_ALL_FORMATS[(i * 7 + 3) % len(_ALL_FORMATS)]) or ""
    value = (f'"{v}"', str(i), f'{{"{key}": [{i}, "{v}"]}}')[i % 3]
    call = tpl.replace("NAMEQQ", name).replace("KEYQQ", key).replace("VALQQ", value)
    suffixed = (f"<tool_calls{sfx}><tool_call{sfx}>{name}<tool_sep{sfx}><arg_key{sfx}>{key}</arg_key{sfx}>"
                f"<arg_value{sfx}>{i}</arg_value{sfx}></tool_call{sfx}></tool_calls{sfx}>")
    return (f"text {i} " + call + (suffixed if i % 2 else "")
            + other.replace("NAMEQQ", name).replace("KEYQQ", key).replace("VALQQ", str(i)) + f" done {v}")


def _schema(i: int) -> dict:
    _name, key, _v, _s = _names(i)
    return {"type": "object", "properties": {key: {"type": ("integer", "string", "object")[i % 3]},
                                             "s": {"type": "string"}}}


def _chunks(text: str, i: int):
    step = 7 + i % 23
    return [text[a:a + step] for a in range(0, len(text), step)]


_ALL_FORMATS: list[str] = []


# ------------------------------------------------------------------ one request per class

def _vllm_tool_runs():
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    from integration_targets import _vllm_tok

    tok = _vllm_tok("qwen3")
    seen: dict = {}
    for n, cls in sorted(VLLM.TOOL_PARSERS.items()):
        seen.setdefault(cls.rc_format, (n, cls))

    def make(cls):
        def run(i: int) -> None:
            name = _names(i)[0]
            req = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], tools=[
                {"type": "function", "function": {"name": name, "parameters": _schema(i)}}])
            p = cls(tok, None)
            text = _markup(cls.rc_format, i)
            prev = ""
            for ch in _chunks(text, i):
                p.extract_tool_calls_streaming(prev, prev + ch, ch, [], [], [], req)
                prev += ch
            p.finish_streaming()
            list(p.streamed_args_for_tool)
            if i % 5 == 0:
                p.extract_tool_calls(text, req)
        return run

    return [(f"vLLM tool {n}", make(cls)) for _fmt, (n, cls) in sorted(seen.items())]


def _sglang_tool_runs():
    from sglang.srt.entrypoints.openai.protocol import Function, Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    SGLANG.register()
    seen: dict = {}
    for n, cls in sorted(SGLANG.TOOL_DETECTORS.items()):
        seen.setdefault(cls.tool_format, (n, cls))

    def make(n, cls):
        def run(i: int) -> None:
            tools = [Tool(type="function", function=Function(name=_names(i)[0], description="d",
                                                             parameters=_schema(i)))]
            p = FunctionCallParser(tools, f"rc_{n}")
            text = _markup(cls.tool_format, i)
            for ch in _chunks(text, i):
                p.parse_stream_chunk(ch)
            p.parse_stream_end()
            list(p.detector.streamed_args_for_tool)
            if i % 5 == 0:
                FunctionCallParser(tools, f"rc_{n}").parse_non_stream(text)
        return run

    return [(f"SGLang tool {n}", make(n, cls)) for _fmt, (n, cls) in sorted(seen.items())]


def _max_tool_runs():
    out = []
    for n, cls in sorted(MAX.TOOL_PARSERS.items()):
        kept = cls()

        def run(i: int, cls=cls, kept=kept) -> None:
            p = kept if i % 2 else cls()
            p.reset()
            p.set_streaming_tool_schemas({_names(i)[0]: _schema(i)})
            text = _markup(cls.tool_format, i)
            for ch in _chunks(text, i):
                p.parse_delta(ch)
            p.flush() if i % 3 else p.finish()
            if i % 5 == 0:
                try:
                    p.parse_complete(text)
                except ValueError:  # MAX's protocol: no valid call in a call section
                    pass
        out.append((f"MAX tool {n}", run))
    return out


def _mlx_tool_runs():
    try:
        from reasoning_core.integrations import vllm_mlx as mlx
    except BaseException:  # noqa: BLE001 - vllm-mlx not installed: left out
        return []
    out = []
    first: dict = {}  # vllm-mlx's aliases share one class
    for n, cls in sorted(mlx.TOOL_PARSERS.items()):
        first.setdefault(cls, n)
    for cls, n in first.items():

        def run(i: int, cls=cls) -> None:
            p = cls(None)
            text = _markup(cls.tool_format, i)
            prev = ""
            for ch in _chunks(text, i):
                p.extract_tool_calls_streaming(prev, prev + ch, ch)
                prev += ch
            p.finalize_streaming(prev)
            if i % 5 == 0:
                p.extract_tool_calls(text)
        out.append((f"vllm-mlx tool {n}", run))
    return out


def _reasoning_text(voc, i: int) -> str:
    name, key, v, _s = _names(i)
    starts = voc.markers or [""]
    return (starts[i % len(starts)] + f"thinking about {name} {key} " + starts[(i + 1) % len(starts)]
            + f"answer {v} " + starts[(i * 3) % len(starts)])


def _reasoning_runs():
    import integration_targets as it

    out = []
    if VLLM is not None:
        for n in it._vllm_names():
            fam = VLLM.family_of(n)
            voc, tok, cls = it._vocab(fam), it._vllm_tok(fam), VLLM.REASONING_PARSERS[n]

            def run(i: int, voc=voc, tok=tok, cls=cls) -> None:
                p = cls(tok)
                text = _reasoning_text(voc, i)
                ids = list(voc.hf.encode(text, add_special_tokens=False))
                seen: list[int] = []
                prev = ""
                for tid in ids:
                    piece = voc.text_of([tid])
                    seen.append(tid)
                    p.extract_reasoning_streaming(prev, prev + piece, piece, seen[:-1], seen, [tid])
                    prev += piece
                if hasattr(p, "finish_streaming"):
                    p.finish_streaming()
            out.append((f"vLLM reasoning {n}", run))
    if SGLANG is not None:
        for n in it._sglang_names():
            cls, voc = SGLANG.REASONING_DETECTORS[n], it._vocab(SGLANG.family_of(n))
            kw = {"force_reasoning": True} if cls.spec.requires_force else {}

            def run(i: int, cls=cls, voc=voc, kw=kw) -> None:
                d = cls(stream_reasoning=bool(i % 2), **kw)
                text = _reasoning_text(voc, i)
                for ch in _chunks(text, i):
                    d.parse_streaming_increment(ch)
                if hasattr(d, "finish"):
                    d.finish()
            out.append((f"SGLang reasoning {n}", run))
    if MAX is not None:
        from reasoning_core._tokenizer import tables_for
        from reasoning_core.parser import parser_class

        for n in it._max_names():
            cls, voc = MAX.REASONING_PARSERS[n], it._vocab(MAX.family_of(n))
            tables = tables_for(cls.family, voc.hf)

            def run(i: int, cls=cls, voc=voc, tables=tables) -> None:
                p = cls(parser_class(cls.family)(tables))
                ids = list(voc.hf.encode(_reasoning_text(voc, i), add_special_tokens=False))
                still = True
                for a in range(0, len(ids), 3):
                    d = p.stream(ids[a:a + 3], still)
                    d.span.extract_content(ids[a:a + 3])
                    still = d.is_still_reasoning
            out.append((f"MAX reasoning {n}", run))
    return out


def _runs():
    from reasoning_core import tools

    _ALL_FORMATS[:] = sorted({tools.create(n).format_name for n in tools.available()})
    runs = []
    if VLLM is not None:
        runs += _vllm_tool_runs()
    if SGLANG is not None:
        runs += _sglang_tool_runs()
    if MAX is not None:
        runs += _max_tool_runs()
    return runs + _mlx_tool_runs() + _reasoning_runs()


def _traced() -> int:
    re.purge()  # the re module's own bounded cache (512 patterns) is not ours
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def _growth(runs, requests: int, base_at: int) -> list[tuple[int, int]]:
    """Run ``requests`` requests round-robin over ``runs`` (each class once
    before tracing: imports and per-format tables are not growth); the traced
    growth since request ``base_at`` after every 1,000th request and the last,
    as (request, bytes).  Stops at the first reading over ``GROWTH_LIMIT``."""
    for k, (_n, run) in enumerate(runs):
        run(k)
    out: list[tuple[int, int]] = []
    tracemalloc.start()
    try:
        base = None
        for i in range(requests):
            label, run = runs[i % len(runs)]
            try:
                run(len(runs) + i)
            except Exception as exc:  # noqa: BLE001 - model output must never raise
                raise AssertionError(f"{label} raised on request {i}: {exc!r}") from exc
            if i + 1 == base_at:
                base = _traced()
            elif base is not None and ((i + 1) % 1000 == 0 or i + 1 == requests):
                out.append((i + 1, _traced() - base))
                if out[-1][1] >= GROWTH_LIMIT:
                    break
    finally:
        tracemalloc.stop()
    return out


def test_wrappers_memory_bounded_over_requests():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = _runs()
        assert len(runs) > 50, [n for n, _ in runs]
        readings = _growth(runs, REQUESTS, BASE_AT)
    assert readings and readings[-1][0] == REQUESTS, readings
    worst = max(g for _, g in readings)
    assert worst < GROWTH_LIMIT, f"traced memory grew from request {BASE_AT}: {readings} (bytes)"


_LEAK: list = []


def test_growth_check_catches_a_leak():
    # The check itself can fail: a class that keeps ~2 KiB per request (a
    # cache keyed on model output) is caught within a few hundred requests.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real = _runs()[:3]

    def leaky(i: int) -> None:
        _LEAK.append(_markup("hermes", i) * 8 + "x" * 1024)

    try:
        readings = _growth(real + [("leaky", leaky)], 2000, 400)
    finally:
        _LEAK.clear()
    assert readings[-1][1] >= GROWTH_LIMIT, readings
