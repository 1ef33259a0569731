"""benchmarks/run.py, run as a subprocess like a developer would: the shape of the
full table and its JSON (every workload, peers, targets), never the timings."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from workloads import WORKLOADS

RUN = Path(__file__).with_name("run.py")


def run(*args: str, timeout: float = 180):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return subprocess.run([sys.executable, str(RUN), *args], capture_output=True, text=True, encoding="utf-8",
                          env=env, timeout=timeout)


def _one_line_error(r, code: int) -> str:
    assert r.returncode == code, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_run_quick_smoke(tmp_path):
    """Shape only: every workload in the table and the JSON, never the timings."""
    out = tmp_path / "bench.json"
    r = run("--quick", "--repeat", "1", "--scale", "0.01", "--peers", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "1/" in r.stderr  # the progress indicator
    header = next(ln for ln in r.stdout.splitlines() if ln.startswith("workload"))
    assert header.split() == ["workload", "unit", "compiled", "median", "pure", "median", "pure/compiled",
                              "compiled", "ns/unit", "pure", "ns/unit"]
    for name in WORKLOADS:
        assert any(ln.startswith(name + " ") for ln in r.stdout.splitlines()), name
    assert "peers not installed" in r.stdout or "peer:" in r.stdout
    assert "stream() 1-token delta, compiled" in r.stdout  # the targets table

    data = json.loads(out.read_text(encoding="utf-8"))
    assert {"reasoning_core", "parser", "quick", "settings", "backends", "machine", "workloads", "targets",
            "notes"} <= set(data)
    assert {"cpu", "nproc", "python"} <= set(data["machine"])
    rows = {w["workload"]: w for w in data["workloads"] if not w["workload"].startswith("peer:")}
    assert set(rows) == set(WORKLOADS)
    for w in rows.values():
        assert {"unit", "kind", "units", "results", "ratio_pure_over_compiled", "notes"} <= set(w)
        assert not [n for n in w["notes"] if "failed" in n], w["notes"]
        backends = set(w["results"])
        assert backends <= {"cython", "python"} and backends, w
        for res in w["results"].values():
            keys = {"bytes_per_unit"} if w["kind"] == "memory" else {"median_ns", "per_unit_ns", "repeats", "loops"}
            assert keys <= set(res)
    assert all({"target", "goal", "value", "status"} <= set(t) for t in data["targets"])


def test_run_json_unwritable(tmp_path):
    target = tmp_path / "no" / "such" / "dir.json"
    line = _one_line_error(run("--quick", "--repeat", "1", "--scale", "0.01", "--only", "stream_1tok",
                               "--json", str(target)), 1)
    assert str(target) in line


def test_run_unknown_workload():
    line = _one_line_error(run("--only", "no_such_workload"), 2)
    assert "no_such_workload" in line and "stream_1tok" in line

