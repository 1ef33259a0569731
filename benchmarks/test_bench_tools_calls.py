"""Smoke run of ``bench_tools_calls.py`` (both modes, a few runs): the texts it
times are read as calls by every format it lists (the whole mode asserts three
calls per text before timing) and the tables print."""
from __future__ import annotations

import bench_tools_calls as B


def test_whole_mode_runs_and_reads_every_call(capsys):
    B.main(["--whole", "--runs", "3", "--repeat", "1"])
    out = capsys.readouterr().out
    for fmt in B.WHOLE:
        assert f"| {fmt} |" in out


def test_stream_mode_runs(capsys):
    B.main(["--formats", "hermes,qwen3_5", "--runs", "2"])
    out = capsys.readouterr().out
    assert "| hermes |" in out and "| qwen3_5 |" in out
