"""tools_stream_2kb: one tool call with a ~2 KB arguments payload, streamed in
one-token-sized chunks (4 characters) through ``parse_delta``.

The figure (issue 7): time per chunk over the last 10 % of chunks within 1.5x of
the first 10 % — each delta costs work proportional to the delta, so total work is
linear in the output (a parser that re-scans its buffer per chunk grows linearly per
chunk instead). Recorded in ``extra_info``: ``start_us_per_chunk``,
``end_us_per_chunk``, ``end_over_start`` and ``us_per_chunk`` (whole stream, from the
benchmark's median). No assertion on time here: timed checks are flaky; the
figure is read from ``--benchmark-only`` / ``--benchmark-json``.

The tool parsers are pure Python, so there is no backend parametrization.  The
payload and the timed body are ``tools_stream_2kb_*`` in ``workloads.py``, which
``run.py`` prints too (time per chunk; the start/end figure is this file's).
"""
from __future__ import annotations

import importlib
import json
import time

import pytest

from workloads import TOOLS_ARGS as ARGS
from workloads import TOOLS_CHUNK as CHUNK
from workloads import TOOLS_GROUP as GROUP
from workloads import TOOLS_TEXTS as TEXTS
from workloads import TOOLS_TRIMMED as TRIMMED
from workloads import WORKLOADS
from workloads import new_tool_parser as _new_parser
from workloads import tools_chunks as _chunks


def _merge(fmt: str, chunks: list[str]) -> tuple[str, dict]:
    p = _new_parser(fmt)
    content, calls = [], {}
    for res, raw in [(p.parse_delta(c), c) for c in chunks] + [(p.finish(), "")]:
        if res is None:
            content.append(raw)
            continue
        for d in res:
            if d.content is not None:
                content.append(d.content)
                continue
            c = calls.setdefault(d.index, {"name": None, "arguments": ""})
            c["name"] = d.name or c["name"]
            c["arguments"] += d.arguments or ""
    return "".join(content), calls


def start_end_us_per_chunk(fmt: str, chunks: list[str], repeats: int) -> tuple[float, float]:
    """Best-of-``repeats`` µs per chunk over the first and the last 10 % of chunks.

    Each window is timed as a block (one clock read per window, not per chunk);
    the chunks between the windows are fed untimed so the parser state at the
    last window is the real one.
    """
    n = len(chunks)
    w = max(1, n // 10)
    head, middle, tail = chunks[:w], chunks[w:n - w], chunks[n - w:]
    best_head = best_tail = float("inf")
    clock = time.perf_counter_ns
    for _ in range(repeats):
        p = _new_parser(fmt)
        feed = p.parse_delta
        t0 = clock()
        for c in head:
            feed(c)
        t1 = clock()
        for c in middle:
            feed(c)
        t2 = clock()
        for c in tail:
            feed(c)
        t3 = clock()
        p.finish()
        best_head = min(best_head, t1 - t0)
        best_tail = min(best_tail, t3 - t2)
    return best_head / w / 1e3, best_tail / w / 1e3


@pytest.mark.parametrize("fmt", list(TEXTS))
def test_tools_stream_2kb(benchmark, fmt):
    text = TEXTS[fmt]
    chunks = _chunks(text)

    # The workload is right before it is timed: streaming equals one-shot and the payload.
    content, calls = _merge(fmt, chunks)
    one_shot = _new_parser(fmt).parse_complete(text)
    assert content == (one_shot.content or "") == "Writing the file now.\n"
    assert [c["name"] for c in calls.values()] == [c.name for c in one_shot.tool_calls] == ["write_file"]
    assert calls[0]["arguments"] == one_shot.tool_calls[0].arguments
    # formats whose value rule trims whitespace read the payload without its final newline
    assert json.loads(calls[0]["arguments"]) == ({k: v.strip() for k, v in ARGS.items()} if fmt in TRIMMED else ARGS)
    args_bytes = len(one_shot.tool_calls[0].arguments.encode())
    assert args_bytes >= 2000

    run = WORKLOADS[f"{GROUP}_{fmt}"].build(None, "python")  # the registry's body, as run.py times it

    disabled = getattr(benchmark, "disabled", False)
    start_us, end_us = start_end_us_per_chunk(fmt, chunks, repeats=2 if disabled else 200)
    benchmark.group = GROUP
    benchmark.extra_info.update({
        "workload": GROUP,
        "format": fmt,
        "unit": "chunk",
        "units": len(chunks),
        "chunk_chars": CHUNK,
        "arguments_bytes": args_bytes,
        "start_us_per_chunk": round(start_us, 3),
        "end_us_per_chunk": round(end_us, 3),
        "end_over_start": round(end_us / start_us, 3) if start_us else None,
        "target_end_over_start": 1.5,
    })
    benchmark(run)
    stats = getattr(benchmark, "stats", None)
    if stats is not None and getattr(stats, "stats", None) is not None:
        benchmark.extra_info["us_per_chunk"] = round(stats.stats.median * 1e6 / len(chunks), 3)


# MAX's tool parsers, when the ``max`` package is importable (never in CI here).
_MAX_MODULES = ("max.serve.parser", "max.pipelines.lib.tool_parsing", "max.serve.tool_parsers")


def _max_parser(fmt: str):
    pytest.importorskip("max")
    for modname in _MAX_MODULES:
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            continue
        for attr in ("HermesToolParser", "HermesParser") if fmt == "hermes" else ():
            cls = getattr(mod, attr, None)
            if cls is not None:
                return cls
    pytest.skip(f"no MAX {fmt} tool parser found in {', '.join(_MAX_MODULES)}")


@pytest.mark.parametrize("fmt", ["hermes"])
def test_tools_stream_2kb_max(benchmark, fmt):
    cls = _max_parser(fmt)
    chunks = _chunks(TEXTS[fmt])

    def run():
        p = cls()
        for c in chunks:
            p.parse_delta(c)

    benchmark.group = GROUP
    benchmark.extra_info.update({"workload": GROUP, "format": fmt, "peer": "max", "units": len(chunks)})
    benchmark(run)
    stats = getattr(benchmark, "stats", None)
    if stats is not None and getattr(stats, "stats", None) is not None:
        benchmark.extra_info["us_per_chunk"] = round(stats.stats.median * 1e6 / len(chunks), 3)
