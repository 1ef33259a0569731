"""``bench_cold_calls.py`` runs and measures what it says (CI's benchmark smoke)."""
from __future__ import annotations

import bench_cold_calls as C


def test_cold_calls_measure_every_case():
    rows = C.measure(repeats=1)
    assert [r[0] for r in rows][:2] == ["len(s), a builtin", "a two-line Python function"]
    assert len(rows) == 4 and all(cold > 0 and warm > 0 for _, cold, warm in rows)
    # the compiled and the Python reading read the same parameters
    assert C._python_params(C.BUF) == [("path", "src/report.py"), ("content", "def report(values):\n"
                                                                              "    return sum(values)")]


def test_cold_calls_prints_its_table(capsys):
    assert C.main(["--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "| xml_params (" in out and "objects tracked" in out
