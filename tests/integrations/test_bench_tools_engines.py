"""``benchmarks/bench_tools_engines.py`` keeps measuring what its tables say,
through each engine's own interface: a 2 KB call and ``--content`` text, one
repeat, for one format of each engine (a smoke run: the figures are not
checked, only that every parser ran and ours streamed the call's arguments).

Skips without vLLM, SGLang or MAX.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
if not (BENCHMARKS / "bench_tools_engines.py").exists():  # tests copied without the benchmarks
    pytest.skip("benchmarks/ is not beside tests/", allow_module_level=True)
sys.path.insert(0, str(BENCHMARKS))

CASES = [("vllm", "qwen3_coder"), ("sglang", "kimi_k2"), ("max", "qwen3_5")]


def _engine(engine: str, fmt: str):
    import bench_tools_engines as B

    try:
        B.RUNNERS[engine][0](fmt)  # imports the engine as the benchmark does
    except ImportError as exc:
        pytest.skip(f"{engine} cannot be imported here: {exc}")
    return B


@pytest.mark.parametrize("engine,fmt", CASES)
def test_call_cells_run(engine, fmt, monkeypatch):
    B = _engine(engine, fmt)
    monkeypatch.setitem(B.RUNNERS, engine, (B.RUNNERS[engine][0], [fmt]))
    rows = B.measure([engine], ["2KB"], [4], 1, 2.0, progress=lambda s: None)
    assert len(rows) == 1
    row = rows[0]
    assert not [k for k in row if k.endswith("error")], row
    for which in ("engine", "ours", "floor"):
        assert row[which]["median"] > 0 and row[which]["share"] == 1.0
    assert "|" in B.table(rows)


@pytest.mark.parametrize("engine,fmt", CASES)
def test_content_cells_run(engine, fmt, monkeypatch):
    B = _engine(engine, fmt)
    monkeypatch.setitem(B.RUNNERS, engine, (B.RUNNERS[engine][0], [fmt]))
    rows = B.measure_content([engine], [1], 1, progress=lambda s: None)
    assert len(rows) == 1
    row = rows[0]
    assert not [k for k in row if k.endswith("error")], row
    assert row["deltas"] > 100 and all(row[w]["median"] > 0 for w in ("engine", "ours", "floor"))


def test_cold_stream_cells_run():
    # bench_cold_calls.py --streams: every parser ran cold and warm, and the
    # minimal reference parsers streamed the same arguments as ours
    _engine("sglang", "qwen3_coder")
    _engine("max", "qwen3_5")
    import bench_cold_calls as C

    rows = C.stream_cells(repeats=1)
    assert [(r["engine"], r["format"]) for r in rows] == [("sglang", "qwen3_coder"), ("max", "qwen3_5")]
    for row in rows:
        assert row["ours_args"] == row["minimal_args"]
        assert set(row["ours_args"]) == {"path", "content"} and len(row["ours_args"]["content"]) > 1_000
        assert all(row[f"{w}_{m}"] > 0 for w in ("engine", "ours", "floor", "minimal") for m in ("cold", "warm"))
