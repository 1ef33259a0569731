"""Per-chunk cost of the bare tool parser over one streamed call: where a call's
fixed cost goes (its opener, name, short arguments and close).

For each format, one call whose ``content`` argument is about 2 KB of code
(``workloads.tools_base_text`` grown), after a line of content, is streamed in
``--chunk``-character chunks through ``reasoning_core.tools.create(fmt).parse_delta``
``--runs`` times (a fresh parser each run, the schemas set, the garbage collector
off). Each chunk's cost is its median over the runs (wall clock,
``time.perf_counter``: run it on an idle machine). Printed per format:

- stream: the sum of the chunks' medians, µs (``finish`` and the parser's
  construction are not in it);
- per chunk: stream / chunks;
- typical: the median chunk (a chunk inside the argument: the compiled fast lane);
- excess: the sum over all chunks of (chunk - typical), the call's structural cost;
- the most expensive chunks.

``--whole`` times the other case, a call that arrives whole (vllm-mlx's classes
read each call when its end marker comes): a line of content and three short
calls in the format (``bench_vllm_mlx._tool_text``'s calls; ``WHOLE`` maps
the format to the vllm-mlx name whose text it reads), parsed by one
``parse_delta`` and ``finish`` on a fresh parser (its construction not timed),
``--runs`` times interleaved across the formats, the whole repeated
``--repeat`` times: the median of the repeats' medians and their min-max, µs
per text and per call.

    python benchmarks/bench_tools_calls.py [--formats gemma4,hermes] [--runs 60] [--chunk 12] [--top 4] [--json r.json]
    python benchmarks/bench_tools_calls.py --whole [--runs 1000] [--repeat 5] [--json r.json]
    REASONING_CORE_NO_EXTENSIONS=1 python benchmarks/bench_tools_calls.py     # the pure twin
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import workloads as W  # noqa: E402

from reasoning_core import tools  # noqa: E402
from reasoning_core.tools import _json  # noqa: E402

FORMATS = ("gemma4", "glm45", "deepseekv4", "hermes", "llama3_json", "deepseek_v3", "minimax_m2", "mistral",
           "kimik2_5", "qwen3_5")
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}


def measure(fmt: str, runs: int, k: int, size: int = 2000):
    base = W.tools_base_text(fmt)
    text = W.tools_grown(base, max(20, size // 62))
    chunks = [text[i:i + k] for i in range(0, len(text), k)]
    per: list[list[float]] = [[] for _ in chunks]
    clock = time.perf_counter
    was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(runs):
            p = tools.create(fmt)
            p.set_streaming_tool_schemas({"write_file": SCHEMA})
            for i, c in enumerate(chunks):
                t0 = clock()
                p.parse_delta(c)
                per[i].append(clock() - t0)
            p.finish()
    finally:
        if was:
            gc.enable()
    med = [statistics.median(x) * 1e6 for x in per]
    total = sum(med)
    typical = statistics.median(med)
    excess = sum(m - typical for m in med)
    top = sorted(range(len(chunks)), key=lambda i: -med[i])
    return {"format": fmt, "chars": len(text), "chunks": len(chunks), "stream_us": total,
            "per_chunk_us": total / len(chunks), "typical_us": typical, "excess_us": excess,
            "top": [(med[i], chunks[i]) for i in top]}


# format -> the vllm-mlx name whose three-call text (``bench_vllm_mlx._tool_text``) it reads
WHOLE = {"hermes": "hermes", "deepseek_v3": "deepseek", "kimi_k2": "kimi", "mistral": "mistral",
         "qwen3_coder": "nemotron", "glm45": "glm47", "minimax_m2": "minimax", "deepseekv4": "deepseek_v4",
         "gemma4": None, "llama3_json": "llama"}
PROSE = "Let me check that for you.\n"


def whole_text(fmt: str) -> str:
    from bench_vllm_mlx import _TOOL_ARGS, _tool_text

    if fmt == "gemma4":  # one <|tool_call> per call (vllm-mlx's gemma4 text puts three calls in one)
        q = '<|"|>'
        return PROSE + "".join(
            "<|tool_call>call:" + n + "{" + ",".join(f"{k}:{q}{v}{q}" if isinstance(v, str) else f"{k}:{v}"
                                                    for k, v in a.items()) + "}<tool_call|>" for n, a in _TOOL_ARGS)
    return _tool_text(WHOLE[fmt], PROSE)[0]


def measure_whole(fmts, runs: int):
    texts = {f: whole_text(f) for f in fmts}
    for f, t in texts.items():  # every call is read (a format that misread the text would time nothing)
        p = tools.create(f)
        got = (p.parse_delta(t) or []) + p.finish()
        assert sum(1 for d in got if d.name) == 3, (f, got)
    times: dict = {f: [] for f in fmts}
    clock = time.perf_counter
    was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(runs):
            for f in fmts:
                p = tools.create(f)
                t = texts[f]
                t0 = clock()
                p.parse_delta(t)
                p.finish()
                times[f].append(clock() - t0)
    finally:
        if was:
            gc.enable()
    return {f: [x * 1e6 for x in v] for f, v in times.items()}


def main_whole(a) -> None:
    fmts = a.formats.split(",") if a.formats else list(WHOLE)
    meds: dict = {f: [] for f in fmts}
    for _ in range(a.repeat):
        for f, v in measure_whole(fmts, a.runs).items():
            meds[f].append(statistics.median(v))
    print(f"scanner: {_json.SCAN_BACKEND}; whole text (three calls) in one parse_delta + finish; median of "
          f"{a.repeat} repeats of {a.runs} runs' medians; load average "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print("| format | µs per text, median (min–max) | µs per call |")
    print("|---|---:|---:|")
    rows = []
    for f in fmts:
        v = meds[f]
        med = statistics.median(v)
        rows.append({"format": f, "median_us": med, "min_us": min(v), "max_us": max(v)})
        print(f"| {f} | {med:.1f} ({min(v):.1f}–{max(v):.1f}) | {med / 3:.1f} |", flush=True)
    if a.json:
        import json

        with open(a.json, "w") as fh:
            json.dump({"scanner": _json.SCAN_BACKEND, "runs": a.runs, "mode": "whole",
                       "loadavg": os.getloadavg(), "rows": rows}, fh, indent=1)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--formats", default=None)
    ap.add_argument("--runs", type=int, default=None, help="60 per chunk stream, 1000 with --whole")
    ap.add_argument("--whole", action="store_true", help="time three short calls parsed whole (one parse_delta)")
    ap.add_argument("--repeat", type=int, default=5, help="with --whole: repeats of --runs runs")
    ap.add_argument("--chunk", type=int, default=12)
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--json", help="also write the figures (without the chunk list) to this file")
    a = ap.parse_args(argv)
    if a.whole:
        a.runs = a.runs or 1000
        return main_whole(a)
    a.runs = a.runs or 60
    a.formats = a.formats or ",".join(FORMATS)
    rows = []
    print(f"scanner: {_json.SCAN_BACKEND}; {a.runs} runs, {a.chunk}-character chunks; load average "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print("| format | stream µs | per chunk µs | typical chunk µs | excess µs | most expensive chunks (µs) |")
    print("|---|---:|---:|---:|---:|---|")
    for fmt in a.formats.split(","):
        r = measure(fmt, a.runs, a.chunk)
        rows.append({k: v for k, v in r.items() if k != "top"})
        tops = ", ".join(f"{m:.1f} `{c!r}`" for m, c in r["top"][:a.top])
        print(f"| {fmt} | {r['stream_us']:.1f} | {r['per_chunk_us']:.2f} | {r['typical_us']:.2f} | "
              f"{r['excess_us']:.1f} | {tops} |", flush=True)
    if a.json:
        import json

        with open(a.json, "w") as f:
            json.dump({"scanner": _json.SCAN_BACKEND, "runs": a.runs, "chunk": a.chunk,
                       "loadavg": os.getloadavg(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
